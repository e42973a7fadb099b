import { createServer } from "node:net";
import { TrellisError } from "../kernel/index.js";

/**
 * Fails with `SERVE_PORT_IN_USE` when the port is taken, before `serve()` opens the database and
 * migrates: otherwise the conflict would only show after all of that. Port 0 (any free port)
 * cannot be taken and is not checked.
 */
export async function assertPortFree(port: number, hostname: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") {
        reject(
          new TrellisError(
            "SERVE_PORT_IN_USE",
            `Port ${port} on ${hostname} is already in use by another process. Stop it, or choose another port: serve(app, { port: ${port + 1} }) (PORT=${port + 1} npm start).`,
            { cause: error },
          ),
        );
      } else if (error.code === "EACCES") {
        reject(new TrellisError("SERVE_PORT_DENIED", `Port ${port} on ${hostname} needs privileges this process lacks; use a port above 1023.`, { cause: error }));
      } else reject(error);
    });
    probe.listen(port, hostname, () => probe.close(() => resolve()));
  });
}
