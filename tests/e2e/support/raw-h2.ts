// A bare HTTP/2 (prior knowledge) client that writes frames exactly as asked, so a test can put
// several frames into one write (one read on Envoy's side) in the order it chooses. Requests
// are GETs without a body; responses are only followed to their end, never decoded.
import { type Socket, connect } from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const T_DATA = 0;
const T_HEADERS = 1;
const T_RST_STREAM = 3;
const T_SETTINGS = 4;
const T_GOAWAY = 7;
const F_END_STREAM = 0x1;
const F_ACK = 0x1;
const F_END_HEADERS = 0x4;
const CANCEL = 0x8;

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK: each header a literal without indexing, new name, no Huffman (names and values < 127 bytes). */
function hpack(headers: Readonly<Record<string, string>>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name);
    const v = Buffer.from(value);
    if (n.length >= 127 || v.length >= 127) throw new Error(`header ${name} is too long for this client`);
    parts.push(Buffer.from([0x00, n.length]), n, Buffer.from([v.length]), v);
  }
  return Buffer.concat(parts);
}

export class RawH2 {
  private buffered = Buffer.alloc(0);
  private readonly ended = new Map<number, () => void>();
  private readonly done = new Set<number>();
  private failure: Error | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('the connection closed')));
  }

  static async open(port: number, host = '127.0.0.1'): Promise<RawH2> {
    const socket = connect({ port, host, noDelay: true });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(Buffer.concat([PREFACE, frame(T_SETTINGS, 0, 0, Buffer.alloc(0))]));
    return new RawH2(socket);
  }

  /** The HEADERS frame of a GET on `stream` (odd, increasing), ending the request. */
  static get(stream: number, authority: string, path: string, extra: Record<string, string> = {}): Buffer {
    const block = hpack({
      ':method': 'GET',
      ':scheme': 'http',
      ':path': path,
      ':authority': authority,
      ...extra,
    });
    return frame(T_HEADERS, F_END_HEADERS | F_END_STREAM, stream, block);
  }

  /** The RST_STREAM frame that cancels `stream`. */
  static cancel(stream: number): Buffer {
    const code = Buffer.alloc(4);
    code.writeUInt32BE(CANCEL);
    return frame(T_RST_STREAM, 0, stream, code);
  }

  /** Writes the frames in one write. */
  send(...frames: Buffer[]): void {
    this.socket.write(Buffer.concat(frames));
  }

  /** Resolves when the server ends (or resets) `stream`. */
  async untilEnded(stream: number): Promise<void> {
    if (this.done.has(stream)) return;
    if (this.failure) throw this.failure;
    await new Promise<void>((resolve) => this.ended.set(stream, resolve));
    if (!this.done.has(stream) && this.failure) throw this.failure;
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 9) {
      const length = this.buffered.readUIntBE(0, 3);
      if (this.buffered.length < 9 + length) return;
      const type = this.buffered.readUInt8(3);
      const flags = this.buffered.readUInt8(4);
      const stream = this.buffered.readUInt32BE(5) & 0x7fffffff;
      this.buffered = this.buffered.subarray(9 + length);
      if (type === T_SETTINGS && (flags & F_ACK) === 0)
        this.socket.write(frame(T_SETTINGS, F_ACK, 0, Buffer.alloc(0)));
      if (type === T_GOAWAY) this.fail(new Error('the server sent GOAWAY'));
      const ends =
        type === T_RST_STREAM || ((type === T_HEADERS || type === T_DATA) && (flags & F_END_STREAM) !== 0);
      if (ends && stream !== 0) {
        this.done.add(stream);
        this.ended.get(stream)?.();
      }
    }
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const resolve of this.ended.values()) resolve();
  }
}
