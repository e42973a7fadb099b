import type { AppRpcContext } from "../context.js";
import { eventOf } from "../gate.js";
import type { WriteActor } from "./changes.js";

/** The host of the request-less contexts jobs run with (plugins/jobs builds them at this address). */
const JOB_PREFIX = "http://trellis.internal/jobs/";

/**
 * Who a context writes as: a job's handler, an API key's user (`x-api-key`, no cookie), a signed-in
 * user, or an anonymous caller. `admin` marks a write made through `_admin.data`.
 */
export function writeActor(context: AppRpcContext, admin = false): WriteActor {
  const userId = context.user?.id ?? null;
  const event = eventOf(context);
  if (event?.request.url.startsWith(JOB_PREFIX)) return { kind: "job", userId, admin };
  if (!userId) return { kind: "anonymous", userId, admin };
  const headers = context.headers;
  return { kind: headers.has("x-api-key") && !headers.has("cookie") ? "apiKey" : "user", userId, admin };
}
