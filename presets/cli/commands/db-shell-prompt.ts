import { createInterface } from "node:readline";
import { callRemote } from "../control/client.js";
import type { ControlRecord } from "../control/channel.js";
import { CliError, dim, red, say } from "../output.js";
import type { ShellArgs } from "./db-shell-server.js";

const HELP = `Statements end with ";" (the last one may leave it out) and run in the app's database, each input in a transaction of its own.
  \\dt          list the tables
  \\d <table>   describe a table's columns
  \\q           quit`;

/**
 * The CLI's own SQL prompt, for when psql is not installed: each statement goes to the running
 * server through its control channel and comes back printed as a table. Reads a terminal or a pipe
 * (`echo "select 1" | trellis db shell`); exit code 1 when a statement failed and stdin is not a terminal.
 */
export async function promptBeside(server: ControlRecord): Promise<number> {
  const interactive = Boolean(process.stdin.isTTY);
  const lines = createInterface({ input: process.stdin, output: interactive ? process.stdout : undefined, prompt: "trellis=> ", terminal: interactive });
  if (interactive) say(dim(`psql is not installed: a plain prompt on the running server's database (pid ${server.pid}). \\? for help, \\q to quit.`));
  let buffer = "";
  let failed = false;
  const run = async (args: ShellArgs) => {
    try {
      await callRemote(server, "db shell", args);
    } catch (error) {
      if (!(error instanceof CliError) || error.code !== "CLI_SQL_ERROR") throw error;
      process.stderr.write(`${red(error.message, process.stderr)}\n`);
      failed = true;
    }
  };
  const prompt = () => interactive && lines.setPrompt(buffer ? "trellis-> " : "trellis=> ");
  if (interactive) lines.prompt();
  for await (const line of lines) {
    const command = buffer ? undefined : /^\s*\\(\S+)\s*(.*?)\s*;?\s*$/.exec(line);
    if (command) {
      const [, name, argument] = command;
      if (name === "q") break;
      if (name === "?") say(HELP);
      else if (name === "dt") await run({ op: "query", sql: TABLES, empty: "Did not find any tables." });
      else if (name === "d" && argument) await run({ op: "query", sql: columnsOf(argument), empty: `Did not find any relation named "${argument}".` });
      else if (name === "d") await run({ op: "query", sql: TABLES, empty: "Did not find any relations." });
      else {
        process.stderr.write(`invalid command \\${name}: this prompt knows \\dt, \\d <table>, \\? and \\q (install psql for the rest)\n`);
        failed = true;
      }
    } else {
      buffer += `${line}\n`;
      if (/;\s*$/.test(line)) {
        await run({ op: "query", sql: buffer });
        buffer = "";
      }
    }
    prompt();
    if (interactive) lines.prompt();
  }
  lines.close();
  if (buffer.trim()) await run({ op: "query", sql: buffer });
  return failed && !interactive ? 1 : 0;
}

const TABLES = `select table_schema as "Schema", table_name as "Name", case table_type when 'BASE TABLE' then 'table' when 'VIEW' then 'view' else lower(table_type) end as "Type"
  from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema') order by 1, 2`;

function columnsOf(name: string): string {
  const [schema, table] = name.includes(".") ? name.split(".", 2) : [undefined, name];
  const literal = (value: string) => `'${value.replace(/^"|"$/g, "").replace(/'/g, "''")}'`;
  return `select column_name as "Column", data_type as "Type", case is_nullable when 'NO' then 'not null' else '' end as "Nullable", coalesce(column_default, '') as "Default"
    from information_schema.columns where table_name = ${literal(table!)} and table_schema = ${schema ? literal(schema) : "any (current_schemas(false))"} order by ordinal_position`;
}
