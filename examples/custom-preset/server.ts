import { embedded } from "../../kernel/embedded/index.js";
import { serve } from "../../presets/node.js";
import { createSlimApp } from "./app.js";

const { url } = await serve(createSlimApp(embedded({ dataDir: "memory://" })), { port: Number(process.env.PORT ?? 3001) });
console.log(`slim app on ${url}`);
