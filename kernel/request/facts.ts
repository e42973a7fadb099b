/** What the transport knows about a request: `handle(request, facts)`'s second argument. */
export interface RequestFacts {
  /** The caller's network address, as `handle(request, { clientAddress })` was told it. */
  clientAddress?: string;
  /**
   * The caller's `X-Request-Id` as the transport read it from the raw request (`null`: absent), so
   * the request's `Headers` need not be built just to find it.
   */
  requestId?: string | null;
  /**
   * Where the transport writes the answer's headers (`serve()`: Node's response), so the kernel's
   * `X-Request-Id` goes there and leaves a plain response as the handler built it.
   */
  response?: { setHeader(name: string, value: string): unknown };
}
