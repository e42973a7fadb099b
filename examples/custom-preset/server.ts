import { embedded } from "trellis/embedded";
import { serve } from "trellis/node";
import { createSlimApp } from "./app.js";

const { url } = await serve(createSlimApp(embedded({ dataDir: "memory://" })), { port: Number(process.env.PORT ?? 3001) });
console.log(`slim app on ${url}`);
