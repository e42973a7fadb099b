import { serve } from "trellis/node";
import createApp from "./app.js";

// `trellis dev` runs this file under tsx with reload; `trellis start` runs its build on plain Node.
// The app is handed over as its factory, so an error building it is shown as a start-up error.
await serve(createApp, { hostname: process.env.HOST ?? "localhost", port: Number(process.env.PORT ?? 3000) });
