import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { App } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import type { InferRouter } from "../../presets/types.js";
import { sqliteMemory } from "../support/app.js";

const app = new App({ db: sqliteMemory() })
  .channels({
    "room:{roomId}": {
      join: ({ params, user }) => {
        expectTypeOf(params).toEqualTypeOf<{ roomId: string }>();
        return user !== null;
      },
      presence: true,
      events: { message: z.object({ text: z.string() }), typing: z.object({ on: z.boolean() }) },
    },
    "doc:{docId}:cursor": { join: "authenticated", events: { move: z.object({ x: z.number(), y: z.number() }) } },
  })
  .procedure("announce", (base) =>
    base.handler(({ context }) => {
      context.channels.publish("room:1", "message", { text: "hi" });
      context.channels.publish("doc:7:cursor", "move", { x: 1, y: 2 });
      // @ts-expect-error: no channel matches
      context.channels.publish("lobby", "message", { text: "hi" });
      // @ts-expect-error: an event of another channel
      context.channels.publish("room:1", "move", { x: 1, y: 2 });
      // @ts-expect-error: the wrong payload
      context.channels.publish("room:1", "message", { text: 1 });
    }),
  );

describe("channels are typed from their definitions", () => {
  it("types client.channel() by pattern, and its events' payloads", () => {
    const client = createClient<InferRouter<typeof app>>({ url: "http://localhost" });
    const room = client.channel("room:42");
    room.on("message", (payload) => expectTypeOf(payload).toEqualTypeOf<{ text: string }>());
    room.on("typing", (payload) => expectTypeOf(payload).toEqualTypeOf<{ on: boolean }>());
    void room.send("message", { text: "hi" });
    // @ts-expect-error: not an event of the room
    room.on("move", () => {});
    // @ts-expect-error: the wrong payload
    void room.send("typing", { on: "yes" });
    // @ts-expect-error: no channel matches
    client.channel("lobby");
    expectTypeOf(client.channel("doc:1:cursor").on).parameter(0).toEqualTypeOf<"move">();
    // The procedures are still there, and the channels' marker is not a procedure.
    expectTypeOf(client.announce).toBeFunction();
    expectTypeOf(client).not.toHaveProperty("~channels");
  });
});
