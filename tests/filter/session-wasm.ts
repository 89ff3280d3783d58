// Drives the filter's session-token codec (filter/assembly/session/) through the test
// wasm, with JavaScript strings in and out, so suites can compare it with the
// TypeScript twin in tests/support/session-token.ts.
import type { KatWasm } from './kat-wasm.js';
import type { SessionFields, SessionTokenFailure } from '../support/session-token.js';

export type FilterStatus = 'ok' | SessionTokenFailure;

export interface FilterOpened {
  status: FilterStatus;
  keyIndex: number;
  endpoint: string;
  issuedAtS: number;
  lastUsedS: number;
  expiresAtS: number;
}

const STATUS_NAMES: FilterStatus[] = [
  'ok',
  'empty',
  'oversized',
  'garbled',
  'unknown-version',
  'unknown-key',
  'forged',
  'expired',
];

export class SessionWasm {
  constructor(readonly wasm: KatWasm) {}

  private putString(text: string): [number, number] {
    return [this.wasm.put(Buffer.from(text, 'utf16le')), text.length];
  }

  private readString(ptr: number, units: number): string {
    return this.wasm.read(ptr, units * 2).toString('utf16le');
  }

  setKeys(keys: readonly Buffer[]): void {
    this.wasm.reset();
    this.wasm.fn('katKeysClear')();
    for (const key of keys) {
      if (this.wasm.fn('katKeysAddBytes')(this.wasm.put(key)) !== 1) throw new Error('key ring full');
    }
    this.wasm.reset();
  }

  addBase64Key(text: string): boolean {
    this.wasm.reset();
    const [ptr, units] = this.putString(text);
    return this.wasm.fn('katKeysAddBase64')(ptr, units) === 1;
  }

  keyCount(): number {
    return this.wasm.fn('katKeysLength')();
  }

  keyIdHex(index: number): string {
    this.wasm.reset();
    const dst = this.wasm.alloc(32);
    return this.readString(dst, this.wasm.fn('katKeyIdHex')(index, dst));
  }

  /** sealToBuffer: the token text, or undefined when sealing fails (-1). */
  seal(fields: SessionFields, context: string, nonce: Buffer): string | undefined {
    this.wasm.reset();
    const [endpoint, endpointUnits] = this.putString(fields.endpoint);
    const [ctx, ctxUnits] = this.putString(context);
    const n = this.wasm.put(nonce);
    const length = this.wasm.fn('katSeal')(
      endpoint,
      endpointUnits,
      BigInt(fields.issuedAtS),
      BigInt(fields.lastUsedS),
      BigInt(fields.expiresAtS),
      ctx,
      ctxUnits,
      n,
    );
    if (length < 0) return undefined;
    return this.wasm.read(this.wasm.fn('katSealedPtr')(), length).toString('latin1');
  }

  /** sealBytes: the endpoint as ASCII bytes; undefined when sealing fails. */
  sealBytes(fields: SessionFields, context: string, nonce: Buffer): string | undefined {
    this.wasm.reset();
    const endpoint = Buffer.from(fields.endpoint, 'latin1');
    const endpointPtr = this.wasm.put(endpoint);
    const [ctx, ctxUnits] = this.putString(context);
    const n = this.wasm.put(nonce);
    const length = this.wasm.fn('katSealBytes')(
      endpointPtr,
      endpoint.length,
      BigInt(fields.issuedAtS),
      BigInt(fields.lastUsedS),
      BigInt(fields.expiresAtS),
      ctx,
      ctxUnits,
      n,
    );
    if (length < 0) return undefined;
    return this.wasm.read(this.wasm.fn('katSealedPtr')(), length).toString('latin1');
  }

  /** seal (the string form): "" when sealing fails. */
  sealString(fields: SessionFields, context: string, nonce: Buffer): string {
    this.wasm.reset();
    const [endpoint, endpointUnits] = this.putString(fields.endpoint);
    const [ctx, ctxUnits] = this.putString(context);
    const n = this.wasm.put(nonce);
    const dst = this.wasm.alloc(512);
    const units = this.wasm.fn('katSealString')(
      endpoint,
      endpointUnits,
      BigInt(fields.issuedAtS),
      BigInt(fields.lastUsedS),
      BigInt(fields.expiresAtS),
      ctx,
      ctxUnits,
      n,
      dst,
    );
    return this.readString(dst, units);
  }

  private result(status: number): FilterOpened {
    const name = STATUS_NAMES[status];
    if (name === undefined) throw new Error(`unknown status ${status}`);
    const endpoint = this.wasm
      .read(this.wasm.fn('katOpenedEndpointPtr')(), this.wasm.fn('katOpenedEndpointLength')())
      .toString('latin1');
    const dst = this.wasm.alloc(128);
    const viaGetter = this.readString(dst, this.wasm.fn('katOpenedEndpointString')(dst));
    if (viaGetter !== endpoint) throw new Error(`endpoint getter "${viaGetter}" != buffer "${endpoint}"`);
    if ((this.wasm.fn('katOpenedOk')() === 1) !== (name === 'ok'))
      throw new Error('ok disagrees with status');
    return {
      status: name,
      keyIndex: this.wasm.fn('katOpenedKeyIndex')(),
      endpoint,
      issuedAtS: Number(this.wasm.fn<bigint>('katOpenedIssuedAt')()),
      lastUsedS: Number(this.wasm.fn<bigint>('katOpenedLastUsed')()),
      expiresAtS: Number(this.wasm.fn<bigint>('katOpenedExpiresAt')()),
    };
  }

  /** open(token: string, ...). */
  open(token: string, context: string, nowS: number): FilterOpened {
    this.wasm.reset();
    const [ptr, units] = this.putString(token);
    const [ctx, ctxUnits] = this.putString(context);
    return this.result(this.wasm.fn('katOpen')(ptr, units, ctx, ctxUnits, BigInt(nowS)));
  }

  /** openBytes(ptr, length, ...): the token as raw bytes, as a host would hand it over. */
  openBytes(token: Uint8Array, context: string, nowS: number): FilterOpened {
    this.wasm.reset();
    const ptr = this.wasm.put(token);
    const [ctx, ctxUnits] = this.putString(context);
    return this.result(this.wasm.fn('katOpenBytes')(ptr, token.length, ctx, ctxUnits, BigInt(nowS)));
  }

  statusName(status: number): string {
    this.wasm.reset();
    const dst = this.wasm.alloc(64);
    return this.readString(dst, this.wasm.fn('katStatusName')(status, dst));
  }

  /** normalizeEndpoint: canonical text, or undefined when invalid. */
  normalizeEndpoint(text: string): string | undefined {
    this.wasm.reset();
    const [ptr, units] = this.putString(text);
    const dst = this.wasm.alloc(128);
    const length = this.wasm.fn('katNormalizeEndpoint')(ptr, units, dst);
    return length === 0 ? undefined : this.readString(dst, length);
  }

  /** parseEndpointBytes + formatEndpoint on ASCII bytes. */
  normalizeEndpointBytes(text: string): string | undefined {
    this.wasm.reset();
    const bytes = Buffer.from(text, 'latin1');
    const src = this.wasm.put(bytes);
    const binary = this.wasm.alloc(32);
    const dst = this.wasm.alloc(64);
    const length = this.wasm.fn('katEndpointBytes')(src, bytes.length, binary, dst);
    return length < 0 ? undefined : this.wasm.read(dst, length).toString('latin1');
  }
}
