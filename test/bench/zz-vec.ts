import { vectors } from "./query.js";
await vectors();
