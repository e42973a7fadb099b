import { isAPIError } from "better-auth/api";
import { carriesCredential } from "../../kernel/index.js";
import { SIGNED_OUT, type SessionLookup } from "./session-lookup.js";

/** Every header that can carry a credential (the same list as the kernel's `carriesCredential`). */
const CREDENTIAL_HEADERS = ["cookie", "authorization", "x-api-key"];

/**
 * `/api/auth/**` is better-auth's own surface, and better-auth does not check bans when it reads a
 * session: a banned user's API key (or a session it did not revoke) would still update the profile
 * or mint new keys there. Before the library sees a credentialed request, the credential's owner is
 * looked up once; a banned owner's request goes on with its credentials removed, exactly as if it
 * were signed out (sign-in is then refused by the library's own ban rule).
 */
export async function withoutBannedCredentials(request: Request, lookup: SessionLookup): Promise<Request> {
  if (!carriesCredential(request.headers)) return request;
  let found;
  try {
    found = await lookup(request.headers, { refresh: false });
  } catch (error) {
    // A credential the library refuses (a wrong key) is the library's to answer, with its status.
    if (isAPIError(error) && error.statusCode < 500) return request;
    throw error;
  }
  if (found !== SIGNED_OUT) return request;
  const headers = new Headers(request.headers);
  for (const name of CREDENTIAL_HEADERS) headers.delete(name);
  return new Request(request, { headers });
}
