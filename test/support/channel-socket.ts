import { connect as netConnect, type Socket } from "node:net";
import { randomBytes } from "node:crypto";
import { WebSocket } from "undici";

type Frame = Record<string, any>;

/**
 * A channel socket for tests: undici's WebSocket (Node 20 has no global one), every frame kept in
 * order so a test waits for the one it names. It answers pings unless `silent`.
 */
export interface TestSocket {
  readonly frames: Frame[];
  /** The first frame (from the start) matching `match` that no earlier `next` returned, waited for up to `ms`. */
  next(match: (frame: Frame) => boolean, ms?: number, what?: string): Promise<Frame>;
  send(frame: Frame): void;
  /** Resolves with the close code when the server closes the socket. */
  readonly closed: Promise<number>;
  close(): void;
}

export async function openSocket(url: string, options: { cookie?: string; origin?: string; silent?: boolean } = {}): Promise<TestSocket> {
  const headers: Record<string, string> = {};
  if (options.cookie) headers.cookie = options.cookie;
  if (options.origin) headers.origin = options.origin;
  const ws = new WebSocket(url.replace(/^http/, "ws") + "/channels", { headers } as never);
  const frames: Frame[] = [];
  const taken = new Set<Frame>();
  const waiters = new Set<() => void>();
  let closeCode: (code: number) => void;
  const closed = new Promise<number>((resolve) => (closeCode = resolve));
  ws.onmessage = (event) => {
    const frame = JSON.parse(String(event.data)) as Frame;
    if (frame.type === "ping" && !options.silent) ws.send(JSON.stringify({ type: "pong" }));
    frames.push(frame);
    for (const wake of waiters) wake();
  };
  ws.onclose = (event) => closeCode(event.code);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("socket refused"));
  });
  const next = (match: (frame: Frame) => boolean, ms = 3_000, what = "a frame") =>
    new Promise<Frame>((resolve, reject) => {
      const look = () => {
        const found = frames.find((frame) => !taken.has(frame) && match(frame));
        if (!found) return false;
        taken.add(found);
        waiters.delete(look);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(look);
        reject(new Error(`${what} did not arrive within ${ms} ms; got ${JSON.stringify(frames.slice(-5))}`));
      }, ms);
      if (!look()) waiters.add(look);
    });
  await next((frame) => frame.type === "ready", 3_000, "ready");
  return { frames, next, send: (frame) => ws.send(JSON.stringify(frame)), closed, close: () => ws.close() };
}

/**
 * A raw upgrade over TCP: the status line the server answers, and the socket (to kill it without a
 * close frame, as a crashed client's operating system would, or to stop reading from it).
 */
export function rawUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; socket: Socket }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = netConnect(Number(port), hostname, () => {
      const lines = [
        "GET /channels HTTP/1.1",
        `Host: ${hostname}:${port}`,
        "Upgrade: websocket",
        "Connection: Upgrade",
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`,
        "Sec-WebSocket-Version: 13",
        ...Object.entries(headers).map(([key, value]) => `${key}: ${value}`),
      ];
      socket.write(lines.join("\r\n") + "\r\n\r\n");
    });
    socket.once("data", (chunk) => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString("latin1"))?.[1] ?? 0), socket }));
    socket.once("error", reject);
  });
}

/** A masked client text frame, for a raw socket. */
export function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const length = payload.length;
  const head = length < 126 ? Buffer.from([0x81, 0x80 | length]) : length < 65_536 ? Buffer.from([0x81, 0x80 | 126, length >> 8, length & 255]) : Buffer.concat([Buffer.from([0x81, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(length)); return b; })()]);
  const masked = Buffer.alloc(length);
  for (let i = 0; i < length; i++) masked[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([head, mask, masked]);
}
