import { useState } from "preact/hooks";
import type { AdminFile } from "../../files/index.js";
import { messageOf } from "./api.js";

const EXPIRIES = [
  { label: "1 hour", seconds: 3600 },
  { label: "1 day", seconds: 86_400 },
  { label: "7 days", seconds: 604_800 },
];

/**
 * A file's panel: its variants (each a link to the bytes behind the admin check) and a signed URL
 * for the original or a variant, copied to the clipboard and shown, so it can be copied by hand
 * where the clipboard is refused.
 */
export function FileDetails(props: { file: AdminFile; bytesUrl: string; sign(input: { id: string; expiresIn: number; variant?: string }): Promise<{ url: string; expiresAt: Date }> }) {
  const { file, bytesUrl } = props;
  const names = Object.keys(file.variants ?? {});
  const [signed, setSigned] = useState<{ url: string; expiresAt: Date; copied: boolean }>();
  const [error, setError] = useState<string>();

  const sign = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const variant = String(form.get("variant") ?? "");
    try {
      const result = await props.sign({ id: file.id, expiresIn: Number(form.get("expiresIn")), ...(variant ? { variant } : {}) });
      const copied = await navigator.clipboard?.writeText(result.url).then(() => true, () => false);
      setSigned({ ...result, copied: copied === true });
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };

  return (
    <section class="file-details" aria-label={`Details of ${file.name}`}>
      <h2>{file.name}</h2>
      {names.length > 0 ? (
        <ul aria-label="Variants">
          {names.map((name) => (
            <li key={name}>
              <a href={`${bytesUrl}?variant=${encodeURIComponent(name)}`} target="_blank" rel="noopener">{name}</a>
            </li>
          ))}
        </ul>
      ) : (
        <p class="note">No variants{file.type.startsWith("image/") ? " (none configured, or not a raster image)" : ""}</p>
      )}
      <form class="filter" aria-label={`Sign a URL for ${file.name}`} onSubmit={sign}>
        <label>
          Version
          <select name="variant">
            <option value="">original</option>
            {names.map((name) => <option key={name} value={name}>{name}</option>)}
          </select>
        </label>
        <label>
          Expires in
          <select name="expiresIn">
            {EXPIRIES.map((choice) => <option key={choice.seconds} value={choice.seconds}>{choice.label}</option>)}
          </select>
        </label>
        <button type="submit">Copy signed URL</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {signed && (
        <p role="status" class="note">
          {signed.copied ? "Copied" : "Signed"} (valid until {signed.expiresAt.toLocaleString()}): <output aria-label="Signed URL">{signed.url}</output>
        </p>
      )}
    </section>
  );
}
