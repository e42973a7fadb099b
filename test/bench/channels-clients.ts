/**
 * The clients of `npm run bench -- channels`, in a process of their own so the server's memory is
 * its own: lean sockets (a handshake and a frame parser on `net`, no WebSocket library), each
 * joining one channel and recording the publish-to-receive time of every message.
 */
import { connect, type Socket } from "node:net";
import { randomBytes } from "node:crypto";

interface Command {
  type: "open" | "mark" | "collect" | "close";
  port?: number;
  count?: number;
  channels?: number;
  expected?: number;
}

const sockets: Socket[] = [];
let latencies: number[] = [];
let received = 0;
let lastAt = 0;
let cpuMark = process.cpuUsage();

function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255]);
  for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
  return Buffer.concat([head, mask, payload]);
}

function open(port: number, channel: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(`GET /channels HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    let buffer = Buffer.alloc(0);
    let upgraded = false;
    socket.on("error", reject);
    socket.on("data", (chunk) => {
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      if (!upgraded) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        if (!buffer.subarray(0, 12).toString().includes("101")) return reject(new Error(buffer.toString().split("\r\n")[0]));
        upgraded = true;
        buffer = buffer.subarray(end + 4);
        socket.write(frame(JSON.stringify({ type: "join", channel })));
      }
      while (buffer.length >= 2) {
        let length = buffer[1]! & 127;
        let offset = 2;
        if (length === 126) {
          if (buffer.length < 4) return;
          length = buffer.readUInt16BE(2);
          offset = 4;
        } else if (length === 127) {
          if (buffer.length < 10) return;
          length = Number(buffer.readBigUInt64BE(2));
          offset = 10;
        }
        if (buffer.length < offset + length) return;
        const text = buffer.subarray(offset, offset + length).toString();
        buffer = buffer.subarray(offset + length);
        if (text.startsWith('{"type":"message"')) {
          const at = performance.timeOrigin + performance.now();
          latencies.push(at - JSON.parse(text).payload.at);
          received++;
          lastAt = at;
        } else if (text.startsWith('{"type":"joined"')) resolve(socket);
        else if (text.startsWith('{"type":"ping"')) socket.write(frame('{"type":"pong"}'));
      }
    });
  });
}

process.on("message", async (command: Command) => {
  if (command.type === "open") {
    latencies = [];
    received = 0;
    // In batches, so the listen backlog is never the bottleneck.
    for (let i = 0; i < command.count!; i += 250) {
      const batch = Array.from({ length: Math.min(250, command.count! - i) }, (_, j) => open(command.port!, `room:${(i + j) % command.channels!}`));
      sockets.push(...(await Promise.all(batch)));
    }
    process.send!({ type: "opened" });
  } else if (command.type === "mark") {
    cpuMark = process.cpuUsage();
    process.send!({ type: "marked" });
  } else if (command.type === "collect") {
    const deadline = Date.now() + 30_000;
    while (received < command.expected! && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    const cpu = process.cpuUsage(cpuMark);
    process.send!({ type: "collected", received, lastAt, latencies: Array.from(latencies), cpuMicros: cpu.user + cpu.system });
    latencies = [];
    received = 0;
  } else if (command.type === "close") {
    for (const socket of sockets.splice(0)) socket.destroy();
    process.send!({ type: "closed" });
  }
});
process.send!({ type: "ready" });
