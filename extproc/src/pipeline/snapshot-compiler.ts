// Compiles snapshots on a worker thread, so loading a large configuration (seconds at
// 10,000 routes) never stalls the event loop that answers ext_proc within its 0.2 s
// message_timeout. Only the resolver is compiled here, from the table (a fraction of that).
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { buildIr } from '../ir/build-ir.js';
import { IrMemo } from '../ir/ir-memo.js';
import type { ProvidedConfig } from '../provider/provider.js';
import { ResolverMemo, compileResolver } from '../resolve/compile.js';
import { type ObjectStatus, objectKey } from '../translate/status.js';
import { tableGeneration } from '../resolve/answer-scope.js';
import { IncrementalCompiler } from './incremental-compiler.js';
import { type CrossingInput, InputWriter } from './input-crossing.js';
import { type CompileTimes, epochMs } from './load-times.js';
import { type Snapshot, fingerprintOf, statusesDigest } from './snapshot.js';
import { type PackedTableJson, type TableJson, TableReader, TableWriter } from './table-json.js';
import {
  type PackedPieceList,
  type PieceList,
  PieceReader,
  PieceWriter,
  TextPack,
  packedBuffers,
} from './piece-list.js';

export interface CompileRequest {
  readonly id: number;
  /** What the provider handed over, told against the last input the thread took. */
  readonly input: CrossingInput;
  /** What the service holds (CompiledReader.held): the routes and statuses it holds cross as positions. */
  readonly held?: number;
}

/**
 * The snapshot's plain data. The table and the statuses cross as JSON text, item by item,
 * and only the items the receiver does not hold (piece-list.ts): the receiving thread parses
 * JSON several times faster than it deserializes a structured clone, and the statuses are
 * only parsed when something (the admin API) reads them.
 */
export interface CompiledData {
  readonly table: TableJson;
  /** tableGeneration of the table's digest: the resolver's answer scope. */
  readonly generation: string;
  /** Each object's status as JSON, or its position in the statuses the reader holds. */
  readonly statuses: PieceList;
  readonly tls: Snapshot['tls'];
  readonly diagnostics: Snapshot['diagnostics'];
  readonly errors: Snapshot['errors'];
  readonly warnings: Snapshot['warnings'];
  /** Computed on the thread, off the ext_proc thread. */
  readonly fingerprint: string;
}

/** CompiledData as it crosses from the thread: the route and status texts in buffers moved, not copied. */
export interface PackedCompiledData extends Omit<CompiledData, 'table' | 'statuses'> {
  readonly table: PackedTableJson;
  readonly statuses: PackedPieceList;
}

export type CompileResponse =
  | {
      readonly id: number;
      readonly ok: true;
      readonly data: PackedCompiledData;
      /** On the thread: the request taken, the answer sent (epoch ms, load-times.ts). */
      readonly at: number;
      readonly doneAt: number;
    }
  | {
      readonly id: number;
      readonly ok: false;
      readonly message: string;
      /** The request named what the thread does not hold (an input, an object's version): send it whole. */
      readonly stale?: true;
    };

/** What the compiler thread keeps of what it sent the service. */
export class CompiledWriter {
  readonly table = new TableWriter();
  readonly statuses = new PieceWriter<ObjectStatus>();
}

/**
 * One object's status as the service holds it: its text, parsed and keyed when first needed. A
 * status the compiler left as it was crosses as its position, so it is the same piece (and the
 * same parsed object and key) from one list to the next, read or not in between.
 */
export interface StatusPiece {
  readonly text: string;
  status?: ObjectStatus;
  /** translate/status.ts objectKey. */
  key?: string;
}

const statusOf = (piece: StatusPiece): ObjectStatus =>
  (piece.status ??= JSON.parse(piece.text) as ObjectStatus);

/**
 * What the service keeps of what it received: the routes of the last table (unchanged routes
 * stay the same objects and need not cross), the statuses' pieces, what the IR decided for
 * rules that did not change, and the resolver's buckets of hostnames whose routes did not change.
 */
export class CompiledReader {
  readonly table = new TableReader();
  readonly statuses = new PieceReader<StatusPiece>('status list');
  readonly ir = new IrMemo();
  readonly resolver = new ResolverMemo();

  /**
   * The statuses of `pieces`, parsing only those never parsed. The Kubernetes provider reads
   * every generation's statuses: a fresh parse of all 10,000 was ~18 MiB per generation that
   * outlived young collections and piled up in old space until a full GC.
   */
  parseStatuses(pieces: readonly StatusPiece[]): ObjectStatus[] {
    return pieces.map(statusOf);
  }

  /**
   * The statuses of `pieces` by object key (a later one of a key wins, as statusByObject), each
   * key made once per piece: the Kubernetes provider's status writer takes one such map per
   * generation and compares it with the last, key by key.
   */
  statusesByObject(pieces: readonly StatusPiece[]): ReadonlyMap<string, ObjectStatus> {
    const byObject = new Map<string, ObjectStatus>();
    for (const piece of pieces) {
      const status = statusOf(piece);
      byObject.set((piece.key ??= objectKey(status)), status);
    }
    return byObject;
  }

  /** The id of what both the table and the statuses hold, for the writer; else nothing. */
  get held(): number | undefined {
    const held = this.table.held;
    return held === this.statuses.held ? held : undefined;
  }
}

/**
 * Rebuilds a Snapshot from what the thread sent: the IR built here from the table (it never
 * crosses: the table's changed routes do), the resolver compiled from it, statuses on first read.
 */
export function snapshotFrom(
  data: CompiledData | PackedCompiledData,
  reader: CompiledReader = new CompiledReader(),
): Snapshot {
  const table = reader.table.read(data.table);
  const ir = buildIr(table, reader.ir);
  const pieces = reader.statuses.read(data.statuses, data.table.id, (text): StatusPiece => ({ text }));
  let statuses: Snapshot['statuses'] | undefined;
  let byObject: Snapshot['statusesByObject'];
  return {
    table,
    ir,
    tls: data.tls,
    resolver: compileResolver(ir, data.generation, reader.resolver),
    get statuses() {
      return (statuses ??= reader.parseStatuses(pieces));
    },
    get statusesByObject() {
      return (byObject ??= reader.statusesByObject(pieces));
    },
    diagnostics: data.diagnostics,
    errors: data.errors,
    warnings: data.warnings,
    fingerprint: data.fingerprint,
  };
}

type CompiledSnapshot = Pick<Snapshot, 'table' | 'tls' | 'statuses' | 'diagnostics' | 'errors' | 'warnings'>;

/**
 * What the thread sends for a compiled snapshot, as table `id`, for a reader that holds table
 * `held`; with `packs`, every text is put there as it is made, and the lists name them.
 */
export function compiledData(
  snapshot: CompiledSnapshot,
  writer: CompiledWriter,
  id: number,
  held?: number,
  packs?: { readonly routes: TextPack; readonly statuses: TextPack },
): CompiledData {
  const { tls, diagnostics, errors, warnings } = snapshot;
  const { json: table, digest } = writer.table.write(snapshot.table, id, held, packs?.routes);
  const statuses = writer.statuses.write(snapshot.statuses, id, held, packs?.statuses);
  return {
    table,
    generation: tableGeneration(digest),
    statuses: statuses.list,
    tls,
    diagnostics,
    errors,
    warnings,
    fingerprint: fingerprintOf(digest, tls, statusesDigest(statuses.digests), diagnostics),
  };
}

/** compiledData packed for postMessage, and the buffers it is to move (not copy) with it. */
export function packedCompiledData(
  snapshot: CompiledSnapshot,
  writer: CompiledWriter,
  id: number,
  held?: number,
): { packed: PackedCompiledData; transfer: ArrayBuffer[] } {
  const packs = { routes: new TextPack(), statuses: new TextPack() };
  const data = compiledData(snapshot, writer, id, held, packs);
  const routes = packs.routes.packed(data.table.routes);
  const statuses = packs.statuses.packed(data.statuses);
  return {
    packed: { ...data, table: { ...data.table, routes }, statuses },
    transfer: [...packedBuffers(routes), ...packedBuffers(statuses)],
  };
}

/**
 * The thread's young generation. V8's default grows it to 32 MiB of semi-spaces, held for the
 * thread's life; what a compile makes mostly lives on (parsed documents, the memos), so a
 * small one costs no measurable time and keeps ~25-40 MiB off the peak at 10,000 routes.
 */
const THREAD_YOUNG_GENERATION_MB = 12;

export class SnapshotCompiler {
  private worker: Worker | undefined;
  private next = 0;
  private readonly pending = new Map<number, (r: CompileResponse) => void>();
  /** Compiles inline when there is no thread. */
  private inline: IncrementalCompiler | undefined;
  /** Tells each input against the last the thread took: a change to one object among 10,000 crosses alone. */
  private readonly inputs = new InputWriter();
  /** What the service keeps of the last snapshot received, for the next. */
  private readonly reader = new CompiledReader();
  /** The last compile's times on the thread and back here. */
  lastTimes: CompileTimes = {};

  /** The thread runs the compiled module (dist/); from TypeScript sources it compiles inline. */
  static available(): boolean {
    return import.meta.url.endsWith('.js');
  }

  compile = async (provided: ProvidedConfig): Promise<Snapshot> => {
    if (!SnapshotCompiler.available()) return (this.inline ??= new IncrementalCompiler()).compile(provided);
    let res = await this.send(provided);
    // The thread did not hold what it was told it does (it restarted, or a failed compile
    // moved on): the whole input once more.
    if (!res.ok && res.stale) {
      this.inputs.forget();
      res = await this.send(provided);
    }
    const receivedAt = epochMs();
    if (!res.ok) {
      this.inputs.forget();
      throw new Error(res.message);
    }
    this.inputs.took(res.id);
    this.lastTimes = { threadAt: res.at, threadDoneAt: res.doneAt, receivedAt };
    return snapshotFrom(res.data, this.reader);
  };

  /**
   * Starts the thread ahead of the first compile, which then finds its modules loaded (~0.1-0.3
   * s): `serve` calls it while a cluster is still being listed.
   */
  prepare(): void {
    if (SnapshotCompiler.available()) this.thread();
  }

  private send = async (provided: ProvidedConfig): Promise<CompileResponse> => {
    const worker = this.thread();
    const id = ++this.next;
    // Held while a compile is under way (the process must wait for it), idle otherwise.
    worker.ref();
    const res = await new Promise<CompileResponse>((resolve) => {
      this.pending.set(id, resolve);
      const held = this.reader.held;
      const input = this.inputs.write(provided, id);
      worker.postMessage({ id, input, ...(held !== undefined ? { held } : {}) } satisfies CompileRequest);
    });
    if (this.pending.size === 0) worker.unref();
    return res;
  };

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(fileURLToPath(new URL('./snapshot-thread.js', import.meta.url)), {
      resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
    worker.on('message', (res: CompileResponse) => {
      this.pending.get(res.id)?.(res);
      this.pending.delete(res.id);
    });
    const fail = (message: string) => {
      // A thread that died after another took its place (its error, then its exit) fails
      // nothing of the new one's.
      if (this.worker !== worker) return;
      for (const [id, resolve] of this.pending) resolve({ id, ok: false, message });
      this.pending.clear();
      this.worker = undefined;
      this.inputs.forget();
    };
    worker.on('error', (e) => fail(`the configuration compiler failed: ${e.message}`));
    worker.on('exit', (code) => fail(`the configuration compiler exited (${code})`));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  close(): void {
    const worker = this.worker;
    this.worker = undefined;
    this.inputs.forget();
    // Its exit will find another (or no) thread in its place: what it had pending fails here.
    for (const [id, resolve] of this.pending) {
      resolve({ id, ok: false, message: 'the configuration compiler was closed' });
    }
    this.pending.clear();
    void worker?.terminate();
  }
}
