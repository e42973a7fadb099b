/**
 * The pages' only script, served as `<path>/pages.js` (the CSP allows no inline script). Plain
 * browser JavaScript, no framework: each form posts JSON to `/api/auth/**` and reports in the
 * status line; the passkey button runs the WebAuthn ceremony.
 */
export const PAGES_SCRIPT = `"use strict";
(function () {
  var main = document.querySelector("main[data-pages]");
  if (!main) return;
  var base = main.getAttribute("data-pages");
  var holder = document.querySelector("[data-next]");
  var next = (holder && holder.getAttribute("data-next")) || "/";
  var status = main.querySelector("[data-status]");
  function say(text) { status.textContent = text; }
  function post(path, body) {
    return fetch("/api/auth" + path, { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      .then(function (response) {
        return response.json().catch(function () { return null; }).then(function (data) { return { ok: response.ok, status: response.status, data: data }; });
      });
  }
  function fail(result) { say((result.data && result.data.message) || "Something went wrong (" + result.status + ")."); }
  function go(result, to) { if (!result.ok) return fail(result); location.assign(to); }
  function enc(buffer) { return btoa(String.fromCharCode.apply(null, new Uint8Array(buffer))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, ""); }
  function dec(text) { return Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), function (c) { return c.charCodeAt(0); }); }
  var forms = {
    password: function (f) {
      return post("/sign-in/email", { email: f.email, password: f.password }).then(function (result) {
        if (result.ok && result.data && result.data.twoFactorRedirect) return location.assign(base + "/two-factor?callbackURL=" + encodeURIComponent(next));
        go(result, next);
      });
    },
    forgot: function (f) {
      return post("/request-password-reset", { email: f.email, redirectTo: base + "/reset-password" }).then(function (result) {
        if (!result.ok) return fail(result);
        say("If an account uses that address, a reset link is on its way.");
      });
    },
    "magic-link": function (f) {
      var landing = base + "/signed-in?callbackURL=" + encodeURIComponent(next);
      return post("/sign-in/magic-link", { email: f.email, callbackURL: landing, errorCallbackURL: base + "/signed-in" }).then(function (result) {
        if (!result.ok) return fail(result);
        say("Check your inbox: the link signs you in once.");
      });
    },
    totp: function (f) { return post("/two-factor/verify-totp", { code: f.code, trustDevice: f.trustDevice === "on" }).then(function (result) { go(result, next); }); },
    "backup-code": function (f) { return post("/two-factor/verify-backup-code", { code: f.code }).then(function (result) { go(result, next); }); },
    reset: function (f) {
      if (f.password !== f.confirm) return Promise.resolve(say("The two passwords differ."));
      return post("/reset-password", { newPassword: f.password, token: f.token }).then(function (result) {
        if (!result.ok) return fail(result);
        say("Your password is changed. Sign in with it.");
        setTimeout(function () { location.assign(base + "/sign-in"); }, 1500);
      });
    }
  };
  function busy(button, work) {
    button.disabled = true;
    return work().catch(function (error) { say(String((error && error.message) || error)); }).then(function () { button.disabled = false; });
  }
  document.querySelectorAll("form[data-form]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var data = Object.fromEntries(new FormData(form));
      busy(form.querySelector("button"), function () { return forms[form.getAttribute("data-form")](data); });
    });
  });
  document.querySelectorAll("[data-provider]").forEach(function (button) {
    button.addEventListener("click", function () {
      busy(button, function () {
        return post("/sign-in/social", { provider: button.getAttribute("data-provider"), callbackURL: next, errorCallbackURL: base + "/error", disableRedirect: true }).then(function (result) {
          if (!result.ok || !result.data || !result.data.url) return fail(result);
          location.assign(result.data.url);
        });
      });
    });
  });
  var passkey = document.querySelector("[data-passkey]");
  if (passkey) passkey.addEventListener("click", function () {
    busy(passkey, function () {
      return fetch("/api/auth/passkey/generate-authenticate-options", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (options) {
        var allow = (options.allowCredentials || []).map(function (c) { return Object.assign({}, c, { id: dec(c.id) }); });
        return navigator.credentials.get({ publicKey: Object.assign({}, options, { challenge: dec(options.challenge), allowCredentials: allow }) });
      }).then(function (credential) {
        var r = credential.response;
        return post("/passkey/verify-authentication", { response: {
          id: credential.id, rawId: enc(credential.rawId), type: credential.type,
          authenticatorAttachment: credential.authenticatorAttachment, clientExtensionResults: credential.getClientExtensionResults(),
          response: { clientDataJSON: enc(r.clientDataJSON), authenticatorData: enc(r.authenticatorData), signature: enc(r.signature), userHandle: r.userHandle ? enc(r.userHandle) : undefined }
        } });
      }).then(function (result) { go(result, next); });
    });
  });
})();
`;
