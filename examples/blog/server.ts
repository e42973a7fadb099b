import { createStorage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import { embedded } from "../../kernel/embedded/index.js";
import { fromStore } from "../../kernel/storage/index.js";
import { serve } from "../../presets/node.js";
import { createBlog } from "./app.js";

/** `npm start`: the blog on the embedded database (data in ./.app/embedded, images in ./.app/files). */
const port = Number(process.env.PORT ?? 3000);
const storage = fromStore(createStorage({ driver: fsDriver({ base: ".app/files" }) }));
const { url } = await serve(createBlog(embedded(), { storage }), { port });
console.log(`Trellis Blog is listening on ${url}  (GET ${url}/health, POST ${url}/rpc/post/list, GET ${url}/rest/post, ${url}/docs, MCP at ${url}/mcp)`);
