export interface AuthPagesOptions {
  /**
   * Where the pages are served: `<path>/sign-in`, `/two-factor`, `/reset-password`, `/verified`,
   * `/signed-in` and `/error`.
   * @default "/auth"
   */
  path?: string;
  /**
   * A stylesheet URL loaded after the pages' own (same origin, under the CSP's `style-src 'self'`),
   * to theme them: colours are CSS custom properties (`--accent`, `--bg`, `--fg`, `--muted`).
   */
  stylesheet?: string;
}

export interface AuthPagesConfig {
  /**
   * Small server-rendered pages for the links Trellis sends (password reset, email verified,
   * magic-link landing) and a sign-in page offering the configured methods; `false` for none (an
   * app with its own front end points the links there instead: see docs/auth.md).
   * @default { path: "/auth" }
   */
  pages?: AuthPagesOptions | false;
}

export interface PagesSettings {
  path: string;
  stylesheet: string | undefined;
}

export function pagesSettings(config: AuthPagesConfig["pages"]): PagesSettings | undefined {
  if (config === false) return undefined;
  const path = `/${(config?.path ?? "/auth").replace(/^\/+|\/+$/g, "")}`;
  return { path: path === "/" ? "/auth" : path, stylesheet: config?.stylesheet };
}
