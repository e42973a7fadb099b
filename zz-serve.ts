import { embedded } from "./kernel/embedded/index.js";
import { App } from "./presets/trellis.js";
import { serve } from "./presets/node.js";
const body = JSON.stringify({ pong: true });
const answer = () => new Response(body, { headers: { "content-type": "application/json" } });
const app = new App({ db: embedded({ dataDir: "memory://", thread: "worker" }) }).route("GET", "/ping", answer);
const s = await serve(app, { port: 3999, hostname: "127.0.0.1", handleSignals: false, banner: false });
console.log("ready");
setTimeout(async () => { await s.close(); process.exit(0); }, 16000);
