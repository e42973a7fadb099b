// oidc-provider ships no type declarations; the tests use it through a few calls only.
declare module "oidc-provider";
