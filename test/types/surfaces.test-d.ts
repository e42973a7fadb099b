import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { App, mcp, type InferRouter } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

describe(".openapi(), .mcp() and the mcp meta helper", () => {
  it("keep the router type, and the tagged procedure keeps its input and output", () => {
    const app = new App({ db: sqliteMemory() })
      .procedure("post.search", (base) =>
        base
          .meta(mcp.tool({ description: "Search", annotations: { readOnlyHint: true } }))
          .input(z.object({ query: z.string() }))
          .handler(({ input }) => [input.query]),
      )
      .openapi({ docs: false })
      .mcp({ path: "/ai", allowedHosts: ["localhost:3000"] });
    type Router = InferRouter<typeof app>;
    expectTypeOf<Router>().toHaveProperty("post");
    const client = app.build().client();
    expectTypeOf(client.post.search).parameter(0).toEqualTypeOf<{ query: string }>();
    expectTypeOf(client.post.search).returns.resolves.toEqualTypeOf<string[]>();
  });

  it("accept only their own options", () => {
    // @ts-expect-error unknown MCP option
    new App({ db: sqliteMemory() }).mcp({ port: 1 });
    // @ts-expect-error resource meta needs an object
    mcp.resource("notes://all");
  });
});
