import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { messageOf } from "./api.js";

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

/**
 * A panel's outcome line and its actions: `act(what, done)` makes the handler of a button or form
 * that runs `what`, then shows `done` or the error, reloads the panel (`load`) and tells the page
 * (`onChanged`), so the panel always shows what the server now has.
 */
export function usePanelActions(load: () => Promise<void>, onChanged: () => void) {
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const act = (what: () => Promise<unknown>, done: string) => async (event?: Event) => {
    event?.preventDefault();
    try {
      await what();
      setError(undefined);
      setNotice(done);
      await load();
      onChanged();
    } catch (e) {
      setNotice(undefined);
      setError(messageOf(e));
    }
  };
  return { error, setError, notice, setNotice, act };
}
