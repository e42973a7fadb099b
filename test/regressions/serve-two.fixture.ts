/** Serves two apps in one process (and closes the first when `argv[3]` is `closed`): the test stops it with SIGTERM. */
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";
import { sqliteMemory } from "../support/app.js";

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
const first = await serve(new App({ db: sqliteMemory() }).schema(v1), { port: 0, hostname: "127.0.0.1", banner: false });
const second = await serve(new App({ db: embedded({ dataDir: process.argv[2] }) }).schema(v1).resource("note"), { port: 0, hostname: "127.0.0.1", banner: false });
if (process.argv[3] === "closed") await first.close();
console.log(`READY ${second.url}`);
