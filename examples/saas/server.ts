import { embedded } from "trellis/embedded";
import { serve } from "trellis/node";
import { createSaas } from "./app.js";

/** `npx tsx examples/saas/server.ts`: team tasks on the embedded database in ./data/saas. */
const { HOST, PORT } = process.env;
await serve(() => createSaas(embedded({ dataDir: "./data/saas" })), { hostname: HOST || "localhost", port: PORT ? Number(PORT) : 3000 });
