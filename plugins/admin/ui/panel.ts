import { useLayoutEffect, useRef } from "preact/hooks";

/**
 * A side panel's keyboard behaviour: focus moves into it when it opens (else it would wait at the
 * end of the page, behind every row), Escape closes it, and focus goes back to what opened it.
 * Returns the ref for the panel's `<aside>`.
 */
export function usePanel(onClose: () => void) {
  const ref = useRef<HTMLElement>(null);
  const close = useRef(onClose);
  close.current = onClose;
  // Before the browser paints the panel: a key pressed as soon as it shows reaches the listener.
  useLayoutEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
    ref.current?.querySelector<HTMLElement>("button, input, select, textarea, a[href]")?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape" && !event.defaultPrevented) close.current();
    };
    addEventListener("keydown", onKey);
    return () => {
      removeEventListener("keydown", onKey);
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return ref;
}
