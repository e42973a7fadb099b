/**
 * The app the `trellis` command loads in this repository (package.json's `main` is the library):
 * the example blog, configured from the environment as `npm start` serves it, so
 * `npx trellis doctor`, `db backup`, `admin create` and `migrate` work on the blog's database.
 */
export { blogFromEnv as default } from "./examples/blog/from-env.js";
