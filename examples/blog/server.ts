import { createStorage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import { embedded } from "../../kernel/embedded/index.js";
import { fromStore } from "../../kernel/storage/index.js";
import { serve } from "../../presets/node.js";
import { createBlog } from "./app.js";

/** `npm start`: the blog on the embedded database (data in ./.app/embedded, images in ./.app/files); `serve()` prints where it runs. */
const port = Number(process.env.PORT ?? 3000);
const storage = fromStore(createStorage({ driver: fsDriver({ base: ".app/files" }) }));
await serve(createBlog(embedded(), { storage }), { port });
