// The one compiler from what a provider hands over to a compiled snapshot: parse → validate
// → translate → IR → compile. Pure: providers do the reading; the ConfigStore and the CLI call it.
import { createHash } from 'node:crypto';
import type { Diagnostic } from '../gatewayapi/diagnostic.js';
import {
  type ConfigFile,
  type ObjectInput,
  type ParseResult,
  parseConfigFiles,
  parseObjects,
} from '../gatewayapi/parse.js';
import { type DecodeObject, validateObjects } from '../gatewayapi/validate.js';
import type { ValidateMemo } from '../gatewayapi/validate-memo.js';
import { type GatewayIr } from '../ir/gateway-ir.js';
import { buildIr } from '../ir/build-ir.js';
import type { IrMemo } from '../ir/ir-memo.js';
import type { ProvidedConfig } from '../provider/provider.js';
import { type Resolver, compileResolver } from '../resolve/compile.js';
import type { PolicyTable } from '../policy/policy-table.js';
import { jsonDigest, listDigest, policyTableDigest } from '../policy/table-digest.js';
import type { TlsMaterial } from '../policy/tls-material.js';
import type { ObjectStatus } from '../translate/status.js';
import { translate } from '../translate/translate.js';
import type { TranslateMemo } from '../translate/translate-memo.js';

export interface Snapshot {
  readonly table: PolicyTable;
  /** The table with every decision taken, which gateway mode, the attach snippet and the resolver read. */
  readonly ir: GatewayIr;
  /** The HTTPS listeners' key pairs (never logged, never served by the admin API). */
  readonly tls: TlsMaterial;
  readonly resolver: Resolver;
  readonly statuses: readonly ObjectStatus[];
  /**
   * The statuses by object key (translate/status.ts statusByObject), when the compiler keeps them
   * so that one generation's costs little more than its changed statuses (snapshot-compiler.ts).
   */
  readonly statusesByObject?: ReadonlyMap<string, ObjectStatus>;
  /** Problems not tied to a status: YAML errors, unknown kinds, duplicates, I/O. */
  readonly diagnostics: readonly Diagnostic[];
  /** Every located error, file/YAML level and per object. */
  readonly errors: readonly Diagnostic[];
  /** The objects' warnings (e.g. no ready endpoints), located, for the log. */
  readonly warnings: readonly Diagnostic[];
  /** Equal for two snapshots with the same table, key material, statuses and diagnostics: nothing to swap. */
  readonly fingerprint: string;
}

/**
 * A digest of what a snapshot serves and reports: the table's digest, the statuses' (over
 * each status's digest, statusesDigest), and the rest's JSON.
 */
export function fingerprintOf(
  tableDigest: string,
  tls: TlsMaterial,
  statusListDigest: string,
  diagnostics: readonly Diagnostic[],
): string {
  return createHash('sha256')
    .update(tableDigest)
    .update('\0')
    .update(JSON.stringify(tls))
    .update('\0')
    .update(statusListDigest)
    .update('\0')
    .update(JSON.stringify(diagnostics))
    .digest('hex');
}

/** The statuses' digest, from each one's (jsonDigest of its JSON), in order. */
export function statusesDigest(digests: readonly string[]): string {
  return listDigest('', digests);
}

/** How the compiler parses documents and decodes objects; the incremental compiler reuses earlier results. */
export interface CompileStages {
  readonly parseDocuments?: (files: readonly ConfigFile[]) => ParseResult;
  readonly parseObjects?: (inputs: readonly ObjectInput[]) => ParseResult;
  readonly decodeObject?: DecodeObject;
  /** What validation keeps between compiles (the incremental compiler's). */
  readonly validateMemo?: ValidateMemo;
  /** What translation keeps between compiles (the incremental compiler's). */
  readonly translateMemo?: TranslateMemo;
  /** What the IR keeps between builds (the incremental compiler's). */
  readonly irMemo?: IrMemo;
}

export function compileConfig(provided: ProvidedConfig, stages: CompileStages = {}): Snapshot {
  const documents = (stages.parseDocuments ?? parseConfigFiles)(provided.documents);
  const objects = (stages.parseObjects ?? parseObjects)(provided.objects);
  const parsedDiagnostics = [...documents.diagnostics, ...objects.diagnostics];
  const sources =
    objects.objects.length === 0 ? documents.objects : [...documents.objects, ...objects.objects];
  const validated = stages.validateMemo
    ? stages.validateMemo.validate(sources, stages.decodeObject ?? ((src, decode) => decode(src)))
    : validateObjects(sources, stages.decodeObject);
  const { table, tls, statuses } = translate(validated, stages.translateMemo);
  // Built on first read: the compiler thread never reads them (the service builds its own
  // from the table it receives), so it does not pay for them on every reload.
  let ir: GatewayIr | undefined;
  let resolver: Resolver | undefined;
  const fileLevel = [
    ...provided.diagnostics,
    ...parsedDiagnostics,
    ...validated.diagnostics.filter((d) => d.object === undefined || d.code === 'duplicate-object'),
  ];
  let fingerprint: string | undefined;
  return {
    table,
    tls,
    get ir() {
      return (ir ??= buildIr(table, stages.irMemo));
    },
    get resolver() {
      return (resolver ??= compileResolver(this.ir));
    },
    statuses,
    diagnostics: fileLevel,
    errors: [...provided.diagnostics, ...parsedDiagnostics, ...validated.diagnostics],
    warnings: warningsOf(statuses),
    // Only a reload compares snapshots: the CLI's one-shot commands never pay for it.
    get fingerprint() {
      return (fingerprint ??= fingerprintOf(
        policyTableDigest(table),
        tls,
        statusesDigest(statuses.map((st) => jsonDigest(JSON.stringify(st)))),
        fileLevel,
      ));
    },
  };
}

/** The objects' warnings, located. */
function warningsOf(statuses: readonly ObjectStatus[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const s of statuses) {
    // Most objects have none: no list is made for them (10,000 routes).
    if (s.warnings === undefined) continue;
    for (const w of s.warnings) {
      out.push({
        code: w.code,
        file: s.source?.file ?? '',
        line: w.line,
        object: { kind: s.kind, namespace: s.metadata.namespace ?? '', name: s.metadata.name },
        field: w.field,
        message: w.message,
      });
    }
  }
  return out;
}

/** Documents as text, plus what reading them found: the one compiler with only documents. */
export function compileSnapshot(files: readonly ConfigFile[], extra: readonly Diagnostic[] = []): Snapshot {
  return compileConfig({ documents: files, objects: [], diagnostics: extra });
}
