// A TCP relay in front of a server (PostgreSQL, Redis) that a test can cut and restore on the same
// port: to the app behind it, the server went away (connections reset, new ones refused) and came
// back, without touching the shared server other suites use.
import { createServer, connect, type Server, type Socket } from "node:net";

export interface TcpRelay {
  readonly port: number;
  /** Resets every open connection and refuses new ones. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
  /** From now on, resets a connection whose client sends a chunk the check accepts (undefined: never). */
  resetWhen(check: ((chunk: Buffer) => boolean) | undefined): void;
}

export async function tcpRelay(targetHost: string, targetPort: number): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let resetCheck: ((chunk: Buffer) => boolean) | undefined;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((inbound) => {
        const outbound = connect(targetPort, targetHost);
        for (const socket of [inbound, outbound]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => socket.destroy());
        }
        inbound.on("close", () => outbound.destroy());
        outbound.on("close", () => inbound.destroy());
        inbound.on("data", (chunk: Buffer) => {
          if (resetCheck?.(chunk)) inbound.resetAndDestroy();
        });
        inbound.pipe(outbound).pipe(inbound);
      });
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.resetAndDestroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await listen();
  return {
    get port() {
      return port;
    },
    cut: stop,
    restore: listen,
    close: stop,
    resetWhen(check) {
      resetCheck = check;
    },
  };
}
