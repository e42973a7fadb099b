// What a page's script does to register or use a passkey with better-auth's passkey endpoints:
// fetch the options, call navigator.credentials, send the credential back as JSON (base64url).
// Run inside the browser through `page.evaluate`, so each function carries its own helpers.
import type { Page } from "playwright-core";

export interface CeremonyResult {
  status: number;
  body: any;
}

/** Registers a passkey for the signed-in user of `page`'s origin. */
export function registerPasskey(page: Page, name: string): Promise<CeremonyResult> {
  return page.evaluate(async (label) => {
    const enc = (buffer: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const dec = (text: string) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    const got = await fetch("/api/auth/passkey/generate-register-options");
    if (got.status !== 200) return { status: got.status, body: await got.json().catch(() => null) };
    const options = await got.json();
    const credential = (await navigator.credentials.create({
      publicKey: {
        ...options,
        challenge: dec(options.challenge),
        user: { ...options.user, id: dec(options.user.id) },
        excludeCredentials: (options.excludeCredentials ?? []).map((c: { id: string }) => ({ ...c, id: dec(c.id) })),
      },
    })) as PublicKeyCredential;
    const attestation = credential.response as AuthenticatorAttestationResponse;
    const response = {
      id: credential.id,
      rawId: enc(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: { clientDataJSON: enc(attestation.clientDataJSON), attestationObject: enc(attestation.attestationObject), transports: attestation.getTransports() },
    };
    const sent = await fetch("/api/auth/passkey/verify-registration", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ response, name: label }) });
    return { status: sent.status, body: await sent.json().catch(() => null) };
  }, name);
}

/** Signs in with a discoverable passkey (no email typed): the browser picks the credential. */
export function signInWithPasskey(page: Page): Promise<CeremonyResult> {
  return page.evaluate(async () => {
    const enc = (buffer: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const dec = (text: string) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    const options = await (await fetch("/api/auth/passkey/generate-authenticate-options")).json();
    const credential = (await navigator.credentials.get({
      publicKey: { ...options, challenge: dec(options.challenge), allowCredentials: (options.allowCredentials ?? []).map((c: { id: string }) => ({ ...c, id: dec(c.id) })) },
    })) as PublicKeyCredential;
    const assertion = credential.response as AuthenticatorAssertionResponse;
    const response = {
      id: credential.id,
      rawId: enc(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: {
        clientDataJSON: enc(assertion.clientDataJSON),
        authenticatorData: enc(assertion.authenticatorData),
        signature: enc(assertion.signature),
        userHandle: assertion.userHandle ? enc(assertion.userHandle) : undefined,
      },
    };
    const sent = await fetch("/api/auth/passkey/verify-authentication", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ response }) });
    return { status: sent.status, body: await sent.json().catch(() => null) };
  });
}

/** A same-origin JSON call from the page, with the page's cookies. */
export function pageFetch(page: Page, path: string, body?: unknown): Promise<CeremonyResult> {
  return page.evaluate(
    async ([target, payload]) => {
      const init: RequestInit = payload === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(payload) };
      const response = await fetch(target as string, init);
      return { status: response.status, body: await response.json().catch(() => null) };
    },
    [path, body] as const,
  );
}
