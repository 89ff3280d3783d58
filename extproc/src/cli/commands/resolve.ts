// `steadfast resolve <path> --method M --host H --path P`: which route rule a request
// matches and the policy it gets, explained.
import type { ResolveResult } from '../../resolve/request.js';
import { explainPolicy, resolveAnswer, resolveOnPort } from '../../resolve/resolve-answer.js';
import { flag } from '../args.js';
import { CONFIG, OUTPUT, outputOf, requireConfigPaths } from '../flags.js';
import { type Command, UsageError } from '../command.js';
import { loadSnapshot } from '../load-snapshot.js';

export { explainPolicy };

function text(r: ResolveResult, port: number | undefined): string {
  const lines = [
    `route:    ${r.route.id} (hostname ${r.hostname}${port !== undefined ? `, Gateway port ${port}` : ''})`,
    `rule:     ${r.rule.id}${r.rule.name !== undefined ? ` (${r.rule.name})` : ''}`,
    `match:    ${r.match.id}: ${r.match.path.type} ${r.match.path.value}` +
      (r.match.method !== undefined ? `, method ${r.match.method}` : '') +
      r.match.headers.map((h) => `, header ${h.name} ${h.type === 'Exact' ? '=' : '~'} ${h.value}`).join('') +
      r.match.queryParams
        .map((q) => `, query ${q.name} ${q.type === 'Exact' ? '=' : '~'} ${q.value}`)
        .join(''),
  ];
  if (r.invalid) lines.push(`INVALID:  answers 500 (${r.invalid.reason}): ${r.invalid.message}`);
  for (const b of r.rule.backends) {
    const eps = b.endpoints
      .map((e) => (e.type === 'ipv6' ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`))
      .join(', ');
    lines.push(
      `backend:  ${b.id} weight ${b.weight}, ${b.protocol}` +
        (b.invalid
          ? `, INVALID (${b.invalid.reason}): ${b.invalid.message}`
          : `, endpoints ${eps || '(none)'}`),
    );
  }
  for (const l of explainPolicy(r.rule.policy)) lines.push(`policy:   ${l}`);
  if (r.rule.sessionFrom !== undefined && r.rule.sessionFrom !== 'rule') {
    lines.push(`policy:   (session persistence from ${r.rule.sessionFrom})`);
  }
  lines.push(`token:    ${r.token}`);
  return lines.join('\n');
}

export const resolveCommand: Command = {
  usage: 'steadfast resolve --config PATH --host HOST --path PATH [options]',
  description:
    'Matches one request against the HTTPRoute and GRPCRoute rules (Gateway API matching and\n' +
    'precedence) and explains the rule, its backends, its policy and the policy token. Exit 1\n' +
    'when no rule matches (a gateway answers 404).',
  flags: {
    config: CONFIG,
    host: { type: 'string', value: 'HOST', description: "the request's host (:authority) (required)" },
    path: {
      type: 'string',
      value: 'PATH',
      description: 'the request path with its query, starting with / (required)',
    },
    method: { type: 'string', value: 'METHOD', description: 'the request method', default: 'GET' },
    port: {
      type: 'string',
      value: 'PORT',
      description:
        'the Gateway listener port the request arrives on (default: the first port, in port order, whose routes match it)',
    },
    header: {
      type: 'string',
      multiple: true,
      value: 'NAME=VALUE',
      description: 'a request header',
    },
    output: OUTPUT,
  },
  positionals: 'PATH... — the same as --config PATH',
  async run(parsed, io) {
    const output = outputOf(parsed);
    const paths = requireConfigPaths(parsed);
    const host = flag(parsed, 'host');
    const path = flag(parsed, 'path');
    if (host === undefined) throw new UsageError('--host is required');
    if (path === undefined || !path.startsWith('/'))
      throw new UsageError('--path is required and must start with /');
    const method = (flag(parsed, 'method') ?? 'GET').toUpperCase();
    const portText = flag(parsed, 'port');
    const port = portText === undefined ? undefined : Number(portText);
    if (port !== undefined && !(/^\d{1,5}$/.test(portText as string) && port >= 1 && port <= 65535))
      throw new UsageError(`--port ${portText}: expected a port number 1-65535`);
    const headers: Record<string, string> = {};
    for (const h of parsed.flags.get('header') ?? []) {
      const eq = h.indexOf('=');
      if (eq <= 0) throw new UsageError(`--header ${h}: expected name=value`);
      const name = h.slice(0, eq).trim().toLowerCase();
      const value = h.slice(eq + 1);
      headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
    }
    const loaded = await loadSnapshot(paths, io);
    if (!loaded) return 2;
    const snap = loaded.snapshot;
    const { result: r, port: on } = resolveOnPort(
      snap.resolver,
      { method, authority: host, path, headers },
      port,
    );
    if (output === 'json') {
      io.out(JSON.stringify(resolveAnswer(r, on), null, 2));
    } else {
      const where = port !== undefined ? ` on Gateway port ${port}` : '';
      io.out(r ? text(r, on) : `no route matches ${method} ${host}${path}${where} (a gateway answers 404)`);
    }
    return r ? 0 : 1;
  },
};
