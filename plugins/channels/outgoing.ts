const encoder = new TextEncoder();

/**
 * One server frame on its way to many connections: its JSON text, and the bytes each transport
 * writes, made at most once per frame rather than once per member (a message to 10,000 members
 * is encoded once). The bytes are shared by every member, so nothing may write into them.
 */
export class Outgoing {
  readonly text: string;
  #frame: Uint8Array | undefined;
  #event: Uint8Array | undefined;

  constructor(text: string) {
    this.text = text;
  }

  /** The whole WebSocket text frame: header and payload, unmasked, as a server sends it (RFC 6455 5.2). */
  get frame(): Uint8Array {
    return (this.#frame ??= textFrame(encoder.encode(this.text)));
  }

  /** The SSE event carrying the text. */
  get event(): Uint8Array {
    return (this.#event ??= encoder.encode(`data: ${this.text}\n\n`));
  }
}

function textFrame(payload: Uint8Array): Uint8Array {
  const length = payload.length;
  const head = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = new Uint8Array(head + length);
  // FIN and opcode 1 (text); no RSV bit, since the socket never negotiates compression.
  frame[0] = 0x81;
  if (head === 2) frame[1] = length;
  else if (head === 4) {
    frame[1] = 126;
    new DataView(frame.buffer).setUint16(2, length);
  } else {
    frame[1] = 127;
    new DataView(frame.buffer).setBigUint64(2, BigInt(length));
  }
  frame.set(payload, head);
  return frame;
}
