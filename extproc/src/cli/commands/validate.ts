// `steadfast validate <path>...`: loads Gateway API YAML, validates it like the API server,
// and prints every object with the status a controller would write, then one summary line
// that counts what is wrong. `--output json` prints one document (schema in docs/gateway-api.md).
import { diagnosticView, isWarning } from '../../gatewayapi/diagnostic.js';
import { isHealthy, objectStatusView } from '../../translate/status.js';
import type { Snapshot } from '../../pipeline/snapshot.js';
import type { Command } from '../command.js';
import { CONFIG, OUTPUT, outputOf, requireConfigPaths } from '../flags.js';
import { loadSnapshot } from '../load-snapshot.js';
import { diagnosticsText, objectText } from '../status-text.js';

interface ValidateSummary {
  readonly files: number;
  readonly objects: number;
  /** Objects with an error or a False Accepted/Programmed/ResolvedRefs condition. */
  readonly objectsWithProblems: number;
  /** File-level errors: YAML syntax, documents that are not objects, duplicates. */
  readonly fileErrors: number;
  /** Warnings on objects and in files; they do not fail validation. */
  readonly warnings: number;
  /** True when nothing is wrong (warnings allowed): the exit code is 0. */
  readonly ok: boolean;
}

function validateSummary(snap: Snapshot, files: number): ValidateSummary {
  const objectsWithProblems = snap.statuses.filter((s) => !isHealthy(s)).length;
  const fileErrors = snap.diagnostics.filter((d) => !isWarning(d)).length;
  const warnings =
    snap.diagnostics.filter(isWarning).length +
    snap.statuses.reduce((n, s) => n + (s.warnings?.length ?? 0), 0);
  return {
    files,
    objects: snap.statuses.length,
    objectsWithProblems,
    fileErrors,
    warnings,
    ok: objectsWithProblems === 0 && fileErrors === 0,
  };
}

/** `ok: 12 object(s) in 3 file(s), all accepted and resolved` or `FAIL: 1 object(s) with problems, …`. */
function summaryLine(s: ValidateSummary): string {
  const read = `${s.objects} object(s) in ${s.files} file(s)`;
  const warnings = s.warnings > 0 ? `, ${s.warnings} warning(s)` : '';
  if (s.ok) return `ok: ${read}, all accepted and resolved${warnings}`;
  return `FAIL: ${s.objectsWithProblems} object(s) with problems, ${s.fileErrors} file error(s)${warnings} (${read})`;
}

export const validateCommand: Command = {
  usage: 'steadfast validate --config PATH [--output text|json]',
  description:
    'Loads the YAML, checks it the way the API server would, and prints every object with the\n' +
    'status a controller would write, then one summary line that counts what is wrong.\n' +
    'docs/gateway-api.md lists the diagnostic codes and the JSON schema.',
  flags: { config: CONFIG, output: OUTPUT },
  positionals: 'PATH... — the same as --config PATH',
  async run(parsed, io) {
    const output = outputOf(parsed);
    const paths = requireConfigPaths(parsed);
    const loaded = await loadSnapshot(paths, io);
    if (!loaded) return 2;
    const snap = loaded.snapshot;
    const summary = validateSummary(snap, loaded.fileCount);
    if (output === 'json') {
      io.out(
        JSON.stringify(
          {
            summary,
            objects: snap.statuses.map(objectStatusView),
            diagnostics: snap.diagnostics.map(diagnosticView),
          },
          null,
          2,
        ),
      );
    } else {
      const parts = snap.statuses.map(objectText);
      if (snap.diagnostics.length > 0) parts.push(diagnosticsText(snap.diagnostics));
      parts.push(summaryLine(summary));
      io.out(parts.join('\n'));
    }
    return summary.ok ? 0 : 1;
  },
};
