import { embedded } from "../../kernel/embedded/index.js";
import { serve } from "../../presets/node.js";
import { createBlog } from "./app.js";

/** `npm start`: the blog on the embedded database (data in ./.app/embedded). */
const port = Number(process.env.PORT ?? 3000);
const { url } = await serve(createBlog(embedded()), { port });
console.log(`Trellis Blog is listening on ${url}  (GET ${url}/health, POST ${url}/rpc/post/list, GET ${url}/rest/post, ${url}/docs, MCP at ${url}/mcp)`);
