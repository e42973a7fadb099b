import { freshBuild } from "./built-package.js";

const built = freshBuild();

/**
 * Node's arguments that run a `.mjs` fixture as its own process. Fixtures import the package by its
 * name (`trellis`, `trellis/embedded`, ...): with a fresh build in dist/ (CI always has one), Node
 * resolves that to the bundles through the package's `exports`, as an installed package, and the
 * process loads a few files; without one, tsx maps the names to the source (tsconfig.json's paths)
 * and compiles every module the fixture reaches, several seconds a process on a loaded machine.
 */
export function fixtureArgs(fixture: string): string[] {
  return built ? [fixture] : ["--import", "tsx", fixture];
}
