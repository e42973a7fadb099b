import { embedded } from "../../kernel/embedded/index.js";
import { serve } from "../../presets/node.js";
import { createBlog } from "./app.js";

/** `npm start`: the blog on the embedded database (data in ./.app/embedded); `serve()` prints where it runs. */
const port = Number(process.env.PORT ?? 3000);
await serve(createBlog(embedded()), { port });
