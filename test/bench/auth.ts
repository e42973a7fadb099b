import { os, ORPCError } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import { betterAuth } from "better-auth";
import { admin } from "better-auth/plugins/admin";
import { z } from "zod";
import { embedded } from "../../kernel/embedded/index.js";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { signUp, ORIGIN } from "../support/auth.js";
import { compare, print } from "./measure.js";

const SECRET = "bench-secret-bench-secret-bench-secret-0123";
const v1 = schema("1")
  .auth()
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    body: t.text(),
    authorId: t.text().references("user", "id", { onDelete: "cascade" }).index(),
    ...timestamps(t),
  }))
  .build();

async function setup(cookieCache: boolean) {
  const session = cookieCache ? { cookieCache: { enabled: true, maxAge: 60 } } : undefined;
  const app = await new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), onError: () => {} })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true }, session })
    .resource("post", { permissions: { list: "authenticated", get: "public", create: "authenticated" } })
    .start();
  const user = await signUp(app, "bench@example.test");
  const rows = Array.from({ length: 60 }, (_, i) => ({ title: `post ${i}`, body: "x".repeat(200), authorId: user.userId }));
  await app.db.insertInto("post").values(rows).execute();

  // The baseline: the same query in a bare oRPC handler with a hand-written better-auth getSession.
  const auth = betterAuth({
    baseURL: ORIGIN,
    secret: SECRET,
    database: { db: app.db, type: "postgres" },
    emailAndPassword: { enabled: true },
    session,
    plugins: [admin()],
    advanced: { database: { validateSchema: false } },
  } as never) as unknown as { api: { getSession(args: { headers: Headers }): Promise<unknown> } };
  const bare = new RPCHandler(
    os.$context<{ headers: Headers }>().router({
      post: {
        list: os
          .$context<{ headers: Headers }>()
          .input(z.object({ take: z.number().int().max(100).optional() }).optional())
          .handler(async ({ input, context }) => {
            if (!(await auth.api.getSession({ headers: context.headers }))) throw new ORPCError("UNAUTHORIZED");
            return app.db.selectFrom("post").selectAll().orderBy("id").limit(input?.take ?? 50).execute();
          }),
        get: os
          .$context<{ headers: Headers }>()
          .input(z.object({ where: z.object({ id: z.number().int() }) }))
          .handler(async ({ input }) => {
            const row = await app.db.selectFrom("post").selectAll().where("id", "=", input.where.id).executeTakeFirst();
            if (!row) throw new ORPCError("NOT_FOUND");
            return row;
          }),
      },
    }),
  );
  return { app, bare, cookie: user.cookie };
}

function post(path: string, input: unknown, headers: Record<string, string> = {}) {
  return new Request(`${ORIGIN}/rpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ json: input }),
  });
}

export async function run(): Promise<void> {
  for (const cookieCache of [false, true]) {
    const { app, bare, cookie } = await setup(cookieCache);
    const list = () => post("post/list", { take: 50 }, { cookie });
    const check = await (await app.handle(list())).json();
    if (check.json?.length !== 50) throw new Error(`post.list answered ${JSON.stringify(check).slice(0, 200)}`);
    const label = cookieCache ? " (cookie cache on)" : "";
    const listStats = await compare(
      [
        { name: "bare oRPC + getSession: post.list", op: async () => (await bare.handle(list(), { prefix: "/rpc", context: { headers: list().headers } })).response!.text() },
        { name: "Trellis: post.list (authenticated)", op: async () => (await app.handle(list())).text() },
      ],
      { rounds: 2, warmup: 100, count: cookieCache ? 1500 : 600 },
    );
    print(`Authenticated post.list, 50 rows${label}`, listStats, { of: "Trellis: post.list (authenticated)", to: "bare oRPC + getSession: post.list", target: 0.8 });
    if (!cookieCache) {
      const get = () => post("post/get", { where: { id: 7 } });
      const getStats = await compare(
        [
          { name: "bare oRPC: post.get", op: async () => (await bare.handle(get(), { prefix: "/rpc", context: { headers: new Headers() } })).response!.text() },
          { name: "Trellis: post.get (anonymous)", op: async () => (await app.handle(get())).text() },
        ],
        { rounds: 3, warmup: 300, count: 3000 },
      );
      print("Anonymous post.get", getStats, { of: "Trellis: post.get (anonymous)", to: "bare oRPC: post.get", target: 0.85 });
    }
    await app.close();
  }
}
