// What `steadfast resolve --output json` and the admin API's /v1/resolve answer for a
// request: one shape, so both say the same thing. Pure: reads only the table's types.
import type { Policy } from '../policy/policy.js';
import type { Resolver } from './compile.js';
import type { ResolveRequest, ResolveResult } from './request.js';

/**
 * A question about one request (`steadfast resolve`, `/v1/resolve`): on the given Gateway
 * port, or without one on the first port, in port order, whose routes match it.
 */
export function resolveOnPort(
  resolver: Resolver,
  request: ResolveRequest,
  port?: number,
): { readonly result: ResolveResult | undefined; readonly port: number | undefined } {
  if (port !== undefined) {
    return { result: resolver.resolve(request, resolver.listenerOf({ gatewayPort: port })), port };
  }
  if (resolver.ports.length <= 1) {
    const choice = resolver.listenerOf(undefined);
    return { result: resolver.resolve(request, choice), port: choice.port };
  }
  for (const p of resolver.ports) {
    const result = resolver.resolve(request, resolver.listenerOf({ gatewayPort: p }));
    if (result) return { result, port: p };
  }
  return { result: undefined, port: undefined };
}

/** The policy in words, one line per aspect. */
export function explainPolicy(p: Policy): string[] {
  const lines: string[] = [];
  if (p.retry) {
    const r = p.retry;
    const on = [
      'connection failures',
      ...(r.codes.length > 0 ? [`status ${r.codes.join(', ')}`] : []),
      ...(r.grpcReasons.length > 0 ? [`gRPC ${r.grpcReasons.join(', ')}`] : []),
    ];
    lines.push(
      `retry: up to ${r.attempts} retr${r.attempts === 1 ? 'y' : 'ies'} after the first try, on ${on.join('; ')}` +
        (r.backoffMs > 0 ? `, at least ${r.backoffMs} ms apart` : ''),
    );
  } else {
    lines.push('retry: none');
  }
  const t = p.timeouts;
  const ms = (v: number | undefined, what: string) =>
    v === undefined ? `${what}: Envoy default` : v === 0 ? `${what}: disabled` : `${what}: ${v} ms`;
  lines.push(`timeouts: ${ms(t?.requestMs, 'request')}; ${ms(t?.backendRequestMs, 'per try')}`);
  if (p.session) {
    const s = p.session;
    const what =
      s.type === 'cookie' ? `cookie ${s.name} (Path=${s.path}, ${s.lifetime} lifetime)` : `header ${s.name}`;
    const limits = [
      s.absoluteTimeoutS !== undefined ? `expires ${s.absoluteTimeoutS} s after it starts` : '',
      s.idleTimeoutS !== undefined ? `expires after ${s.idleTimeoutS} s idle` : '',
    ].filter(Boolean);
    lines.push(`session persistence: ${what}${limits.length > 0 ? `; ${limits.join(', ')}` : ''}`);
  } else {
    lines.push('session persistence: none');
  }
  return lines;
}

export type ResolveAnswer =
  | { readonly matched: false }
  | {
      readonly matched: true;
      /** The Gateway listener port whose routes matched (null: a table without listeners). */
      readonly port: number | null;
      readonly route: string;
      readonly rule: string;
      readonly match: string;
      readonly hostname: string;
      readonly invalid: ResolveResult['invalid'] | null;
      readonly backends: ResolveResult['rule']['backends'];
      readonly policy: Policy;
      readonly explanation: string[];
      readonly token: string;
    };

export function resolveAnswer(r: ResolveResult | undefined, port?: number): ResolveAnswer {
  if (!r) return { matched: false };
  return {
    matched: true,
    port: port ?? null,
    route: r.route.id,
    rule: r.rule.id,
    match: r.match.id,
    hostname: r.hostname,
    invalid: r.invalid ?? null,
    backends: r.rule.backends,
    policy: r.rule.policy,
    explanation: explainPolicy(r.rule.policy),
    token: r.token,
  };
}
