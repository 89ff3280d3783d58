// `steadfast validate <path>...`: loads Gateway API YAML, validates it like the API server,
// and prints every object with the status a controller would write.
import { isHealthy, objectStatusView } from '../../translate/status.js';
import { flag, parseArgs } from '../args.js';
import { type Command, UsageError } from '../command.js';
import { loadSnapshot } from '../load-snapshot.js';
import { diagnosticsText, objectText } from '../status-text.js';

/** Diagnostics that are warnings: the object is ignored, nothing else is affected. */
const WARNINGS = new Set(['unknown-kind']);

export const validateCommand: Command = {
  name: 'validate',
  summary: 'validate Gateway API YAML and show the status each object would get',
  usage: 'steadfast validate <file-or-directory>... [--output text|json]',
  async run(args, io) {
    const parsed = parseArgs(args, { output: { type: 'string' } });
    const output = flag(parsed, 'output') ?? 'text';
    if (output !== 'text' && output !== 'json')
      throw new UsageError(`--output must be text or json, not ${output}`);
    if (parsed.positionals.length === 0) throw new UsageError('give at least one file or directory');
    const loaded = await loadSnapshot(parsed.positionals, io);
    if (!loaded) return 2;
    const snap = loaded.snapshot;
    const fileLevel = snap.diagnostics;
    const healthy = snap.statuses.every(isHealthy) && fileLevel.every((d) => WARNINGS.has(d.code));
    if (output === 'json') {
      const objects = snap.statuses.map(objectStatusView);
      io.out(JSON.stringify(objects, null, 2));
      if (fileLevel.length > 0) io.err(diagnosticsText(fileLevel));
    } else {
      const parts = snap.statuses.map(objectText);
      if (fileLevel.length > 0) parts.push(diagnosticsText(fileLevel));
      const bad = snap.statuses.filter((s) => !isHealthy(s)).length;
      parts.push(
        `${snap.statuses.length} object(s) in ${loaded.fileCount} file(s): ${bad === 0 ? 'all accepted and resolved' : `${bad} with problems`}` +
          (fileLevel.length > 0 ? `, ${fileLevel.length} file-level diagnostic(s)` : ''),
      );
      io.out(parts.join('\n'));
    }
    return healthy ? 0 : 1;
  },
};
