import { serve } from "trellis/node";
import { blogFromEnv } from "./from-env.js";

/**
 * `npm start`: the blog configured from the environment (from-env.ts), listening on `HOST`:`PORT`
 * (localhost:3000). The app is made inside serve(): a setting it refuses (a malformed
 * DATABASE_URL, no AUTH_SECRET in production) is printed as one block with its fix, like a
 * database that cannot be reached. serve() prints where it listens, with the database, schema
 * version and surfaces.
 */
const { HOST, PORT } = process.env;
await serve(() => blogFromEnv(), { hostname: HOST || "localhost", port: PORT ? Number(PORT) : 3000 });
