/**
 * Who may call a procedure, as metadata surfaces can read (`procedure["~orpc"].meta.access`): the
 * OpenAPI document lists a public operation as needing no credential and every other one as
 * needing a credential scheme. `.procedure(name, define, { permission })` tags what it registers;
 * a plugin gating its procedures itself may tag them the same way. A procedure without the tag says
 * nothing about its caller, and surfaces must not guess that it is public.
 */
export type ProcedureAccess = "public" | "authenticated" | "admin" | "owner" | "function";

export interface AccessMeta extends Record<string, unknown> {
  access: ProcedureAccess;
}

/** The meta for `permission` (a string rule, or a permission function). */
export function accessMeta(permission: string | ((...args: never[]) => unknown) | undefined): AccessMeta {
  if (typeof permission === "function") return { access: "function" };
  return { access: (permission ?? "public") as ProcedureAccess };
}

/** The access a procedure's meta declares, or undefined when it declares none. */
export function accessOf(meta: unknown): ProcedureAccess | undefined {
  const access = (meta as Partial<AccessMeta> | undefined)?.access;
  return typeof access === "string" ? access : undefined;
}
