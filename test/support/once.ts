/** Memoised: the first caller starts the work, every later caller awaits the same promise. */
export function once<T>(work: () => Promise<T>): () => Promise<T> {
  let started: Promise<T> | undefined;
  return () => (started ??= work());
}
