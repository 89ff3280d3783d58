// The whole pipeline from file contents to a compiled snapshot: parse → validate →
// translate → compile. Pure: the ConfigStore and the CLI do the reading.
import type { Diagnostic } from '../gatewayapi/diagnostic.js';
import { type ConfigFile, parseConfigFiles } from '../gatewayapi/parse.js';
import { validateObjects } from '../gatewayapi/validate.js';
import { type Resolver, compileResolver } from '../resolve/compile.js';
import type { PolicyTable } from '../table/policy-table.js';
import type { ObjectStatus } from '../translate/status.js';
import type { TlsMaterial } from '../table/tls-material.js';
import { translate } from '../translate/translate.js';

export interface Snapshot {
  readonly table: PolicyTable;
  /** The HTTPS listeners' key pairs (never logged, never served by the admin API). */
  readonly tls: TlsMaterial;
  readonly resolver: Resolver;
  readonly statuses: readonly ObjectStatus[];
  /** Problems not tied to a status: YAML errors, unknown kinds, duplicates, I/O. */
  readonly diagnostics: readonly Diagnostic[];
  /** Every located error, file/YAML level and per object. */
  readonly errors: readonly Diagnostic[];
  /** The objects' warnings (e.g. no ready endpoints), located, for the log. */
  readonly warnings: readonly Diagnostic[];
}

export function compileSnapshot(files: readonly ConfigFile[], extra: readonly Diagnostic[] = []): Snapshot {
  const parsed = parseConfigFiles(files);
  const validated = validateObjects(parsed.objects);
  const { table, tls, statuses } = translate(validated);
  const resolver = compileResolver(table);
  const fileLevel = [
    ...extra,
    ...parsed.diagnostics,
    ...validated.diagnostics.filter((d) => d.object === undefined || d.code === 'duplicate-object'),
  ];
  return {
    table,
    tls,
    resolver,
    statuses,
    diagnostics: fileLevel,
    errors: [...extra, ...parsed.diagnostics, ...validated.diagnostics],
    warnings: statuses.flatMap((s) =>
      (s.warnings ?? []).map((w) => ({
        code: w.code,
        file: s.source.file,
        line: w.line,
        object: { kind: s.kind, namespace: s.metadata.namespace ?? '', name: s.metadata.name },
        field: w.field,
        message: w.message,
      })),
    ),
  };
}
