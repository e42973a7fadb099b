import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/**
 * Type-checking cost of the typed API: `tsc --extendedDiagnostics` over the blog example (plus a
 * client calling it) and over a generated app of 30 tables and 30 resources whose client calls
 * every resource with `where`, `orderBy` and `include`, and over the imports alone for the fixed
 * cost. Prints CPU and wall time and the instantiation count; the target is under 5 s each.
 */

const TABLES = 30;
const TARGET_SECONDS = 5;

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const work = join(root, "test/bench/.types-work");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const execute = promisify(execFile);

/** An import path from the work folder to a repository file, as a module specifier. */
const from = (path: string) => relative(work, join(root, path)).replaceAll("\\", "/");

function blogClient(): string {
  return `import { createClient, type InferRouter } from "${from("presets/client.js")}";
import { createBlog } from "${from("examples/blog/app.js")}";

const client = createClient<InferRouter<ReturnType<typeof createBlog>>>({ url: "http://localhost:3000" });
export async function read() {
  const posts = await client.post.list({ where: { status: "published", title: { contains: "a" } }, orderBy: [{ createdAt: "desc" }], include: { comments: true } });
  const post = await client.post.get({ where: { id: posts[0]!.id }, include: { comments: true } });
  const created = await client.comment.create({ postId: post.id, body: "hi" });
  return [posts.length, post.comments.length, created.id];
}
`;
}

const COLUMN_KINDS = ["text()", "integer()", "bigint()", "decimal().nullable()", "timestamp()", "boolean().default(false)", "date().nullable()", "jsonb().nullable()"];

function wideSchema(): string {
  const lines = [`import { schema } from "${from("kernel/schema/index.js")}";`, "", "export const wide = schema(\"1\")"];
  for (let i = 0; i < TABLES; i++) {
    const columns = COLUMN_KINDS.map((kind, c) => `c${c}: t.${kind}`).join(", ");
    const parent = i > 0 ? `, parentId: t.integer().references("t${i - 1}", "id")` : "";
    lines.push(`  .table("t${i}", (t) => ({ id: t.serial().primaryKey(), ${columns}${parent} }))`);
  }
  for (let i = 1; i < TABLES; i++) {
    lines.push(`  .relation("t${i}", (rel) => ({ parent: rel.belongsTo("t${i - 1}", { from: "parentId", to: "id" }) }))`);
    lines.push(`  .relation("t${i - 1}", (rel) => ({ children: rel.hasMany("t${i}", { from: "id", to: "parentId" }) }))`);
  }
  lines.push("  .build();", "");
  return lines.join("\n");
}

function wideApp(): string {
  const lines = [
    `import { App, type InferRouter } from "${from("presets/trellis.js")}";`,
    `import { createClient } from "${from("presets/client.js")}";`,
    `import { sqliteMemory } from "${from("test/support/app.js")}";`,
    `import { wide } from "./wide-schema.js";`,
    "",
    // Not exported: a declaration file would spell out the whole router type.
    "const app = new App({ db: sqliteMemory() })",
    "  .schema(wide)",
  ];
  for (let i = 0; i < TABLES; i++) {
    const includable = [i > 0 ? '"parent"' : "", i < TABLES - 1 ? '"children"' : ""].filter(Boolean).join(", ");
    lines.push(`  .resource("t${i}", { includable: [${includable}], readonly: ["c5"] })`);
  }
  lines.push("  .procedure(\"ping\", (base) => base.handler(async ({ context }) => (await context.db.query.t1.findMany({ include: { parent: true } })).length));", "");
  lines.push("const client = createClient<InferRouter<typeof app>>({ url: \"http://localhost\" });");
  lines.push("export async function calls() {");
  for (let i = 0; i < TABLES; i++) {
    const include = i > 0 ? "parent: true" : "children: true";
    lines.push(
      `  const r${i} = await client.t${i}.list({ where: { c1: { gt: 1 }, c0: { contains: "a" }, OR: [{ c2: "1" }, { c3: null }] }, orderBy: [{ c4: "desc" }], include: { ${include} } });`,
      `  await client.t${i}.create({ c0: "a", c1: 1, c2: "1", c4: new Date()${i > 0 ? ", parentId: 1" : ""} });`,
    );
  }
  lines.push(`  return [${Array.from({ length: TABLES }, (_, i) => `r${i}`).join(", ")}];`, "}", "");
  return lines.join("\n");
}

interface Figures {
  /** tsc's total, parsing the dependencies' declaration files included. */
  seconds: number;
  /** CPU seconds tsc used (user + system): the figure that holds on a loaded machine. */
  cpu: number;
  /** tsc's check phase alone. */
  check: number;
  instantiations: number;
}

async function check(name: string, files: string[]): Promise<Figures> {
  const config = join(work, `tsconfig.${name}.json`);
  const tsconfig = { extends: from("tsconfig.json"), compilerOptions: { noEmit: true, incremental: false }, include: [], files };
  await writeFile(config, JSON.stringify(tsconfig, null, 2));
  // bash's `time` adds the CPU seconds tsc used: on a busy shared machine the wall clock says little.
  const command = `time "${process.execPath}" "${tsc}" -p "${config}" --extendedDiagnostics`;
  const { stdout, stderr } = await execute("bash", ["-c", command], { cwd: root, env: { ...process.env, TIMEFORMAT: "cpu %U %S" }, maxBuffer: 16 * 1024 * 1024 }).catch(
    (error) => {
      throw new Error(`tsc failed on ${name}:\n${error.stdout ?? error}`);
    },
  );
  const read = (label: string) => Number(new RegExp(`^${label}:\\s+([\\d.]+)`, "m").exec(stdout)?.[1]);
  const [, user = "0", system = "0"] = /cpu ([\d.]+) ([\d.]+)/.exec(stderr) ?? [];
  return { seconds: read("Total time"), cpu: Number(user) + Number(system), check: read("Check time"), instantiations: read("Instantiations") };
}

export async function run(): Promise<void> {
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    await writeFile(join(work, "blog-client.ts"), blogClient());
    await writeFile(join(work, "wide-schema.ts"), wideSchema());
    await writeFile(join(work, "wide-app.ts"), wideApp());
    console.log("\n## types: tsc --extendedDiagnostics");
    await writeFile(join(work, "bare-app.ts"), `import { App } from "${from("presets/trellis.js")}";\nexport const ok = App !== undefined;\n`);
    const results: [string, Figures][] = [
      ["imports alone (fixed cost)", await check("bare", ["bare-app.ts"])],
      ["blog example + client", await check("blog", ["blog-client.ts"])],
      [`${TABLES} tables, ${TABLES} resources + client`, await check("wide", ["wide-app.ts"])],
    ];
    for (const [label, { seconds, cpu, check, instantiations }] of results) {
      const verdict = cpu < TARGET_SECONDS ? "OK" : "ABOVE TARGET";
      const figures = `${cpu.toFixed(2).padStart(6)} s cpu   ${seconds.toFixed(2).padStart(6)} s wall   ${check.toFixed(2).padStart(6)} s check   ${instantiations.toLocaleString("en").padStart(9)} instantiations`;
      console.log(`  ${label.padEnd(40)} ${figures}   (target < ${TARGET_SECONDS} s) ${verdict}`);
    }
    // From source, the fixed cost is checking Trellis' own files (a published package ships .d.ts
    // instead); what an app's schema, resources and calls add is the difference.
    const [, base] = results[0]!;
    for (const [label, { cpu, instantiations }] of results.slice(1)) {
      console.log(`  ${label.padEnd(40)} +${(cpu - base.cpu).toFixed(2)} s cpu, +${(instantiations - base.instantiations).toLocaleString("en")} instantiations over the imports alone`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
