import { useEffect, useState } from "preact/hooks";
import { mailAdmin, messageOf, type MailSummary } from "./api.js";

/** The mail table: the latest messages, their state and the link each carries (the outbox in development). */
export function MailView() {
  const [messages, setMessages] = useState<MailSummary[]>();
  const [error, setError] = useState<string>();
  const load = () => mailAdmin.outbox({ take: 50 }).then(setMessages, (e) => setError(messageOf(e)));
  useEffect(() => void load(), []);
  return (
    <>
      <div class="title">
        <h1>Mail</h1>
        <button type="button" onClick={load}>Refresh</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {messages && messages.length === 0 && <p>No messages yet.</p>}
      {messages && messages.length > 0 && (
        <table aria-label="Recent messages">
          <thead>
            <tr><th scope="col">Queued</th><th scope="col">To</th><th scope="col">Subject</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Link</th></tr>
          </thead>
          <tbody>
            {messages.map((m) => (
              <tr key={m.id}>
                <td>{new Date(m.createdAt).toLocaleString()}</td>
                <td>{m.to}</td>
                <td>{m.subject}</td>
                <td>{m.kind}</td>
                <td title={m.error ?? undefined}>{m.state === "failed" ? `failed (${m.attempts}): ${m.error ?? ""}` : m.state}</td>
                <td>{m.link ? <a href={m.link} rel="noreferrer">open</a> : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** "Send a password reset" on a user row: the same message the user gets when they ask for it. */
export function SendReset({ userId }: { userId: string }) {
  const [result, setResult] = useState<string>();
  const send = async () => {
    try {
      const sent = await mailAdmin.sendPasswordReset({ userId });
      setResult(`Password reset sent to ${sent.to}`);
    } catch (e) {
      setResult(messageOf(e));
    }
  };
  return (
    <>
      <button type="button" onClick={send}>Send a password reset</button>
      {result && <p role="status">{result}</p>}
    </>
  );
}
