import { CliError } from "../output.js";
import type { ControlRecord, ControlReply, ControlRequest } from "./channel.js";

/** How long a command may take inside the server before the CLI gives up on it. */
const TIMEOUT_MS = 120_000;

/**
 * Runs a command inside the server that holds the data directory: its output is printed here as
 * the server collected it, its exit code returned, and a CLI error it raised thrown again here.
 */
export async function runRemote(server: ControlRecord, command: string, args: unknown): Promise<number> {
  return (await callRemote(server, command, args)).code;
}

/** `runRemote`, with the value the command handed back. */
export async function callRemote(server: ControlRecord, command: string, args: unknown): Promise<{ code: number; value?: unknown }> {
  const body: ControlRequest = { command, args, colour: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR };
  let response: Response;
  try {
    response = await fetch(`${server.url}/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (cause) {
    throw new CliError(
      "CLI_CONTROL_UNREACHABLE",
      `The server (pid ${server.pid}) holding this data directory did not answer at ${server.url} (${(cause as Error).message}).`,
      "Is it stopping? Run the command again once it is stopped or running.",
    );
  }
  if (response.status === 401) throw new CliError("CLI_CONTROL_REFUSED", `The server (pid ${server.pid}) refused the control token.`, "Restart the server: it writes a new token when it starts.");
  const reply = (await response.json()) as ControlReply;
  process.stdout.write(reply.output);
  if ("error" in reply) throw new CliError(reply.error.code, reply.error.message, reply.error.fix, reply.error.exitCode);
  return { code: reply.code, value: reply.value };
}
