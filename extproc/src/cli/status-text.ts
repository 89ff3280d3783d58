// Human-readable status, kubectl-describe style, for `steadfast validate`.
import { type Diagnostic, formatDiagnostic, isWarning } from '../gatewayapi/diagnostic.js';
import {
  type Condition,
  type ObjectStatus,
  type ParentReferenceStatus,
  isHealthy,
} from '../translate/status.js';

function cond(c: Condition): string {
  return `${c.type}=${c.status} (${c.reason}): ${c.message}`;
}

function ref(r: ParentReferenceStatus): string {
  const section = r.sectionName !== undefined ? `/${r.sectionName}` : '';
  const port = r.port !== undefined ? `:${r.port}` : '';
  return `${r.kind} ${r.namespace}/${r.name}${section}${port}`;
}

export function objectText(o: ObjectStatus): string {
  const name =
    o.metadata.namespace !== undefined ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
  const mark = isHealthy(o) ? 'ok  ' : 'FAIL';
  // file:line only where the provider knew one (a file does; an object from a cluster does not).
  const at = (line: number) => (o.source ? `${o.source.file}:${line} ` : '');
  const lines = [`${mark} ${o.kind} ${name}${o.source ? `  (${o.source.file}:${o.source.line})` : ''}`];
  for (const e of o.errors) lines.push(`       ${at(e.line)}${e.field}: ${e.message}`);
  for (const w of o.warnings ?? []) lines.push(`       warning: ${at(w.line)}${w.field}: ${w.message}`);
  const s = o.status;
  for (const c of s.conditions ?? []) lines.push(`       ${cond(c)}`);
  for (const l of s.listeners ?? []) {
    lines.push(`       listener ${l.name} (attachedRoutes: ${l.attachedRoutes})`);
    for (const c of l.conditions) lines.push(`         ${cond(c)}`);
  }
  if (s.parents) {
    if (s.parents.length === 0) lines.push('       (no parentRefs: not attached to any Gateway)');
    for (const p of s.parents) {
      lines.push(`       parent ${ref(p.parentRef)}`);
      for (const c of p.conditions) lines.push(`         ${cond(c)}`);
    }
  }
  for (const a of s.ancestors ?? []) {
    lines.push(`       target ${ref(a.ancestorRef)}`);
    for (const c of a.conditions) lines.push(`         ${cond(c)}`);
  }
  return lines.join('\n');
}

export function diagnosticsText(diagnostics: readonly Diagnostic[]): string {
  return diagnostics.map((d) => `${isWarning(d) ? 'warn' : 'FAIL'} ${formatDiagnostic(d)}`).join('\n');
}
