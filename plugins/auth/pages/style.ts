/** The pages' stylesheet, served as `<path>/pages.css`; themed through the custom properties. */
export const PAGES_STYLE = `:root { --bg: #f6f7f9; --fg: #1d2330; --muted: #5b6474; --accent: #1f6feb; --card: #fff; color-scheme: light dark; }
@media (prefers-color-scheme: dark) { :root { --bg: #12151b; --fg: #e6e9ef; --muted: #9aa3b2; --card: #1b2029; } }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, sans-serif; }
main { width: min(24rem, 100% - 2rem); background: var(--card); padding: 2rem; border-radius: 12px; box-shadow: 0 1px 3px rgb(0 0 0 / 0.12); }
h1 { margin: 0 0 1.25rem; font-size: 1.4rem; }
form, .methods { display: grid; gap: 0.75rem; margin: 0 0 1rem; }
label { display: grid; gap: 0.25rem; color: var(--muted); font-size: 0.9rem; }
label.check { display: flex; align-items: center; gap: 0.5rem; }
input:not([type=checkbox]) { font: inherit; padding: 0.55rem 0.7rem; border: 1px solid var(--muted); border-radius: 8px; background: transparent; color: var(--fg); }
button { font: inherit; padding: 0.6rem 0.9rem; border: 0; border-radius: 8px; background: var(--accent); color: #fff; cursor: pointer; }
.methods button { background: transparent; color: var(--fg); border: 1px solid var(--muted); }
button:disabled { opacity: 0.6; cursor: progress; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
details { margin: 0 0 1rem; color: var(--muted); }
summary { cursor: pointer; margin-bottom: 0.5rem; }
a { color: var(--accent); }
[role=alert] { color: #c62828; }
[data-status]:empty { display: none; }
`;
