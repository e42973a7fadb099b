import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";

/**
 * The public types of every export of package.json, as text a reviewer reads in a diff: one file per
 * entry point under docs/api/, each export with its kind and its type as the compiler prints it,
 * read from the built declarations (dist/*.d.ts), as a user's editor sees them. api-extractor
 * cannot read these declarations (it stops at the first `import("...")` type naming a symbol no
 * entry exports), so the report is made with the TypeScript compiler: each export's declarations,
 * printed without their comments, sorted by name.
 */
const root = resolve(import.meta.dirname, "../..");
export const REPORTS = join(root, "docs/api");

/** `.` is `trellis`; `./node` is `trellis/node`. */
export function entryPoints(): { specifier: string; name: string; declarations: string }[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, { types: string }> };
  return Object.entries(pkg.exports).map(([subpath, target]) => ({
    specifier: subpath === "." ? "trellis" : `trellis/${subpath.slice(2)}`,
    name: subpath === "." ? "index" : subpath.slice(2),
    declarations: join(root, target.types),
  }));
}

/** Every entry point's report, by file name (`trellis.api.md`, `trellis-node.api.md`, ...). */
export function apiReports(): Map<string, string> {
  const entries = entryPoints();
  const program = ts.createProgram(
    entries.map((entry) => entry.declarations),
    { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"], types: ["node"], skipLibCheck: true, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const reports = new Map<string, string>();
  for (const entry of entries) {
    const source = program.getSourceFile(entry.declarations)!;
    const module = checker.getSymbolAtLocation(source)!;
    const lines = [`# ${entry.specifier}`, "", "The public types of this entry point, read from the build by `npm run api-report` (test/package/api-report.ts); the tests compare it with the build, so a change to the API shows here in review.", "", "```ts nocheck"];
    const exports = checker.getExportsOfModule(module).sort((a, b) => a.name.localeCompare(b.name));
    for (const symbol of exports) lines.push(describe(checker, symbol));
    lines.push("```", "");
    reports.set(`${entry.specifier.replace("/", "-")}.api.md`, lines.join("\n"));
  }
  return reports;
}

const printer = ts.createPrinter({ removeComments: true });

/** The export's declarations as the build declares them, comments dropped, under the name it is exported as. */
function describe(checker: ts.TypeChecker, exported: ts.Symbol): string {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const declarations = (symbol.declarations ?? []).filter((declaration) => !ts.isSourceFile(declaration));
  if (declarations.length === 0) return `// ${exported.name}: no declaration`;
  const renamed = symbol.name !== exported.name && symbol.name !== "default" ? `// exported as ${exported.name}\n` : "";
  return renamed + declarations
    .map((declaration) => {
      // A variable's statement holds its `declare const`; the declaration alone would print `name: type`.
      const node = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
      return printer.printNode(ts.EmitHint.Unspecified, node, declaration.getSourceFile()).replace(/^export (declare )?/, "").replace(/^declare /, "");
    })
    .join("\n");
}

/** `tsx test/package/api-report.ts`: writes the reports (after `npm run build`), for a change to the API to commit. */
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  mkdirSync(REPORTS, { recursive: true });
  for (const [file, text] of apiReports()) writeFileSync(join(REPORTS, file), text);
  console.log(`wrote ${REPORTS}`);
}
