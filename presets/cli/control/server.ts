import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { CliError, outputSink } from "../output.js";
import { remoteCommands, type CommandTarget } from "./commands.js";
import { removeControl, writeControl, type ControlReply, type ControlRequest } from "./channel.js";

export interface ControlChannel {
  close(): Promise<void>;
}

/**
 * The channel a running server opens beside its embedded data directory, so `trellis admin create`,
 * `migrate status`, `doctor`, `db backup` ... work while it holds the directory: an HTTP listener on
 * 127.0.0.1 only, each request carrying the token from the 0600 record (channel.ts). A command runs
 * in this process against the app being served (`current()`), its output collected for the caller.
 */
export async function openControl(dataDir: string, current: () => CommandTarget | undefined): Promise<ControlChannel> {
  const token = randomBytes(32).toString("base64url");
  const expected = Buffer.from(`Bearer ${token}`);
  const server = createServer(async (request, response) => {
    const given = Buffer.from(request.headers.authorization ?? "");
    if (request.method !== "POST" || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      response.writeHead(401).end();
      return;
    }
    const reply = await answer(await bodyOf(request), current());
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
  });
  // Commands are short: a caller that went away must not hold the process open.
  server.unref();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  writeControl(dataDir, { pid: process.pid, url: `http://127.0.0.1:${port}`, token, cwd: process.cwd() });
  let closing: Promise<void> | undefined;
  return {
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        removeControl(dataDir, process.pid);
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

async function answer(body: string, target: CommandTarget | undefined): Promise<ControlReply> {
  let output = "";
  try {
    const { command, args, colour } = JSON.parse(body) as ControlRequest;
    const sink = { write: (text: string) => void (output += text), colour: colour === true };
    const run = remoteCommands[command];
    if (!run) throw new CliError("CLI_CONTROL_UNKNOWN", `The running server does not know the command "${command}" (is it an older Trellis?).`, "Stop the server and run the command again.");
    if (!target) throw new CliError("CLI_CONTROL_NO_APP", "The server holding this data directory has no app running right now (a reload failed?).", "Fix the error `trellis dev` shows, or stop the server, then run the command again.");
    const result = await outputSink.run(sink, () => run(target, args as never));
    return typeof result === "number" ? { code: result, output } : { ...result, output };
  } catch (error) {
    const failure = error as Error & { code?: string; fix?: string; exitCode?: number };
    const exitCode = error instanceof CliError ? error.exitCode : 1;
    return { error: { code: failure.code ?? "ERROR", message: failure.message ?? String(error), fix: failure.fix, exitCode }, output };
  }
}

function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => resolve(body));
    request.on("error", reject);
  });
}
