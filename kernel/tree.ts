import type { AnyProcedure } from "@orpc/server";
import { TrellisError } from "./errors.js";

/** A nested record of oRPC procedures: `{ post: { list: procedure } }` is served at `/rpc/post/list`. */
export interface ProcedureTree {
  [key: string]: AnyProcedure | ProcedureTree;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$/;

/** Segments that would reach into Object.prototype when the router is nested. */
const RESERVED_SEGMENTS = new Set(["__proto__", "constructor", "prototype"]);

export function assertProcedureName(name: string): void {
  const reserved = name.split(".").find((segment) => RESERVED_SEGMENTS.has(segment));
  if (reserved) {
    throw new TrellisError("KERNEL_INVALID_PROCEDURE_NAME", `Procedure name "${name}" uses the reserved segment "${reserved}"`);
  }
  if (!NAME.test(name)) {
    throw new TrellisError(
      "KERNEL_INVALID_PROCEDURE_NAME",
      `Procedure name "${name}" is invalid: use dot-separated identifiers such as "user.me"`,
    );
  }
}

function isProcedure(value: unknown): value is AnyProcedure {
  return typeof value === "object" && value !== null && "~orpc" in value;
}

/** Flattens a plugin's procedures (flat dotted keys, nested objects, or both) into dotted names. */
export function flattenProcedures(input: Record<string, unknown>, prefix = "", out = new Map<string, AnyProcedure>()) {
  for (const [key, value] of Object.entries(input)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (isProcedure(value)) out.set(name, value);
    else if (typeof value === "object" && value !== null) flattenProcedures(value as Record<string, unknown>, name, out);
  }
  return out;
}

/** Nests dotted names into the router oRPC serves (`post.list` becomes `{ post: { list } }`). */
export function nestProcedures(procedures: ReadonlyMap<string, AnyProcedure>): ProcedureTree {
  const root: ProcedureTree = {};
  for (const [name, procedure] of procedures) {
    const segments = name.split(".");
    let node = root;
    for (const segment of segments.slice(0, -1)) {
      const child = Object.hasOwn(node, segment) ? node[segment] : undefined;
      if (isProcedure(child)) {
        throw new TrellisError("KERNEL_PROCEDURE_CONFLICT", `Procedure "${name}" is nested under procedure "${segment}"`);
      }
      node = (child ?? (node[segment] = {})) as ProcedureTree;
    }
    const leaf = segments[segments.length - 1];
    if (Object.hasOwn(node, leaf)) {
      throw new TrellisError("KERNEL_PROCEDURE_CONFLICT", `Procedure "${name}" collides with a namespace of the same name`);
    }
    node[leaf] = procedure;
  }
  return root;
}
