// The database thread when Trellis runs from its TypeScript source (tests, benchmarks): the same
// loader the request thread uses compiles the thread's module. The build ships plain JavaScript.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.module);
