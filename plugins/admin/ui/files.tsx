import { useEffect, useState } from "preact/hooks";
import type { ClientOf } from "../../../presets/types.js";
import type { AdminFile, AdminFilesRouter } from "../../files/index.js";
import { client, messageOf } from "./api.js";
import { display } from "./values.js";
import { FileDetails } from "./file-details.js";

/**
 * `_admin.files.*`, served when the app has `.files()` (its section of `_admin`), on the same
 * client; typed by the files plugin's exported router (a type import: nothing of it is bundled).
 */
const files = (client as unknown as ClientOf<{ _admin: { files: AdminFilesRouter } }>)._admin.files;
const PAGE = 25;
/** The files plugin's inline allowlist of raster images: only these are drawn as previews (never SVG). */
const PREVIEWS = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]);

/** Where the bytes are: `<dashboard path>/files/<id>`, behind the same admin check. */
const bytesUrl = (file: AdminFile) => `${location.pathname.replace(/\/+$/, "")}/files/${encodeURIComponent(file.id)}`;

/** The preview: a variant when the files plugin makes them (`thumb` if there is one), else the original. */
function previewUrl(file: AdminFile): string {
  const names = Object.keys(file.variants ?? {});
  const name = names.includes("thumb") ? "thumb" : names[0];
  return name ? `${bytesUrl(file)}?variant=${encodeURIComponent(name)}` : bytesUrl(file);
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The file table: previews of safe images, who uploaded each, what points at it; upload, download, delete. */
export function Files() {
  const [search, setSearch] = useState("");
  const [skip, setSkip] = useState(0);
  const [page, setPage] = useState<{ data: AdminFile[]; count: number; skip: number }>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [confirming, setConfirming] = useState<string>();
  const [open, setOpen] = useState<string>();
  const [busy, setBusy] = useState(false);
  // Searching again for the same text still asks the server again (files change underneath).
  const [asked, setAsked] = useState(0);

  const load = async () => {
    try {
      setPage({ ...(await files.list({ search: search || undefined, take: PAGE, skip })), skip });
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), [search, skip, asked]);

  const act = async (what: () => Promise<string>) => {
    setBusy(true);
    try {
      setNotice(await what());
      setError(undefined);
      await load();
    } catch (e) {
      setNotice(undefined);
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  const upload = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const file = new FormData(form).get("file");
    if (!(file instanceof File) || !file.name) return setError("Choose a file to upload");
    void act(async () => {
      const stored = await files.upload({ file });
      form.reset();
      setSkip(0);
      return `Uploaded ${stored.name}`;
    });
  };
  const remove = (file: AdminFile) =>
    act(async () => {
      await files.delete({ id: file.id });
      setConfirming(undefined);
      return `Deleted ${file.name}`;
    });
  const submit = (event: Event) => {
    event.preventDefault();
    setSkip(0);
    setSearch(String(new FormData(event.currentTarget as HTMLFormElement).get("search") ?? "").trim());
    setAsked(asked + 1);
  };

  return (
    <>
      <h1>Files</h1>
      <form class="filter" aria-label="Upload a file" onSubmit={upload}>
        <label>File<input name="file" type="file" required /></label>
        <button type="submit" disabled={busy}>Upload</button>
      </form>
      <form class="filter" role="search" aria-label="Search files" onSubmit={submit}>
        <label>Name or type<input name="search" type="search" defaultValue={search} /></label>
        <button type="submit">Search</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {notice && <p role="status" class="note">{notice}</p>}
      {page && (
        <>
          <div class="scroll">
            <table aria-label="files">
              <thead>
                <tr><th scope="col">Preview</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Owner</th><th scope="col">Created</th><th scope="col">Attached to</th><th scope="col">Actions</th></tr>
              </thead>
              <tbody>
                {page.data.map((file) => [
                  <tr key={file.id}>
                    <td>{PREVIEWS.has(file.type.split(";")[0]!.trim().toLowerCase()) ? <img class="thumb" src={previewUrl(file)} alt={`Preview of ${file.name}`} width={48} height={48} loading="lazy" /> : <span class="note">none</span>}</td>
                    <td>{file.name}</td>
                    <td>{file.type}</td>
                    <td class="num">{size(file.size)}</td>
                    <td>{file.owner?.email ?? ""}</td>
                    <td>{display(file.createdAt)}</td>
                    <td>
                      {file.attachedTo.length === 0 ? <span class="note">nothing</span> : file.attachedTo.map((link, i) => (
                        <span key={i}>{i > 0 && ", "}<a href={`#/table/${encodeURIComponent(link.table)}`}>{link.table} {String(link.id)}</a>{link.role ? ` (${link.role})` : ""}</span>
                      ))}
                    </td>
                    <td>
                      <div class="row-actions">
                        <a href={`${bytesUrl(file)}?download`} download={file.name} aria-label={`Download ${file.name}`}>Download</a>
                        <button type="button" aria-expanded={open === file.id} aria-label={`Details of ${file.name}`} onClick={() => setOpen(open === file.id ? undefined : file.id)}>
                          Details
                        </button>
                        {/* One button that asks again: focus stays on it, Escape takes the question back. */}
                        <button
                          type="button"
                          class="danger"
                          disabled={busy}
                          aria-label={confirming === file.id ? `Confirm delete ${file.name}` : `Delete ${file.name}`}
                          onClick={() => (confirming === file.id ? remove(file) : setConfirming(file.id))}
                          onKeyDown={(e) => e.key === "Escape" && setConfirming(undefined)}
                          onBlur={() => confirming === file.id && setConfirming(undefined)}
                        >
                          {confirming === file.id ? "Confirm delete" : "Delete"}
                        </button>
                      </div>
                    </td>
                  </tr>,
                  open === file.id && (
                    <tr key={`${file.id}-details`}>
                      <td colSpan={8}>
                        <FileDetails file={file} bytesUrl={bytesUrl(file)} sign={(input) => files.sign(input)} />
                      </td>
                    </tr>
                  ),
                ])}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <span role="status">{page.count === 0 ? "No files" : `Files ${page.skip + 1}–${Math.min(page.skip + PAGE, page.count)} of ${page.count}`}</span>
            <button type="button" disabled={skip === 0} onClick={() => setSkip(Math.max(0, skip - PAGE))}>Previous page</button>
            <button type="button" disabled={skip + PAGE >= page.count} onClick={() => setSkip(skip + PAGE)}>Next page</button>
          </div>
        </>
      )}
    </>
  );
}
