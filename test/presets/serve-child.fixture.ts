/** Serves a small app on the embedded database in `argv[2]`; the signal test stops it with SIGTERM. */
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
const app = new App({ db: embedded({ dataDir: process.argv[2] }) }).schema(v1).resource("note");
const { url } = await serve(app, { port: 0, hostname: "127.0.0.1" });
console.log(`READY ${url}`);
