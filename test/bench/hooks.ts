/**
 * `npm run bench -- hooks`: what resource hooks and relation filters cost, each part in its own file
 * (`hooks-write.ts`: creates with hooks against none; `relation-filter.ts`: a `some` filter against
 * a hand-written join). `npm run bench -- hooks:<part>` runs one; a part whose file is absent is skipped.
 */
const parts: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  write: () => import(/* a part may not exist yet */ `./${"hooks-write"}.js`),
  "relation-filter": () => import("./relation-filter.js"),
};

export const cases = Object.fromEntries(Object.entries(parts).map(([name, load]) => [name, async () => (await load()).run()]));

export async function run(): Promise<void> {
  for (const [name, load] of Object.entries(parts)) {
    let part: { run(): Promise<void> };
    try {
      part = await load();
    } catch (error) {
      if ((error as { code?: string }).code === "ERR_MODULE_NOT_FOUND") continue;
      throw error;
    }
    await part.run().catch((error) => {
      throw new Error(`hooks:${name} failed`, { cause: error });
    });
  }
}
