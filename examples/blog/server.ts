import { blogFromEnv } from "./from-env.js";

/**
 * `npm start`: the blog configured from the environment (from-env.ts), listening on `HOST`:`PORT`
 * (localhost:3000). The app is made inside serve(): a setting it refuses (a malformed
 * DATABASE_URL, no AUTH_SECRET in production) is printed as one block with its fix, like a
 * database that cannot be reached. serve() prints where it listens, with the database, schema
 * version and surfaces.
 *
 * The same build runs on Node, Bun (`bun .app/blog/server.js`) and Deno (`deno run -A
 * .app/blog/server.js`): each runtime's serve() has the same options, banner, signals and close.
 */
const { serve } = "Bun" in globalThis ? await import("trellis/bun") : "Deno" in globalThis ? await import("trellis/deno") : await import("trellis/node");
const { HOST, PORT } = process.env;
await serve(() => blogFromEnv(), { hostname: HOST || "localhost", port: PORT ? Number(PORT) : 3000 });
