import type { AnyProcedure } from "@orpc/server";

const AsyncGeneratorFunction = Object.getPrototypeOf(async function* () {}).constructor;

/**
 * True for a procedure known, before it runs, to answer with a stream of events rather than one
 * value: an async generator handler, or an output declared with oRPC's `eventIterator(schema)`. A
 * plain handler that returns an iterator is known only once it runs (surfaces check the output too).
 */
export function isStreamProcedure(procedure: AnyProcedure): boolean {
  const def = procedure["~orpc"];
  return def.handler instanceof AsyncGeneratorFunction || isEventIterator(def.outputSchema);
}

/** oRPC's `eventIterator(schema)` marks its schema with this symbol (read by description: it is not exported). */
function isEventIterator(schema: unknown): boolean {
  const standard = (schema as { "~standard"?: object } | undefined)?.["~standard"];
  return standard !== undefined && Object.getOwnPropertySymbols(standard).some((symbol) => symbol.description === "ORPC_EVENT_ITERATOR_DETAILS");
}
