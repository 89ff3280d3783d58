// Resolver benchmark: median and p99 nanoseconds per resolve() at 100 and 10,000 routes.
// Run with `npm run bench:resolve` (builds first, then runs dist/bench/resolve.js).
// Numbers, not assertions: performance is measured here, never in a timed test.
import { compileResolver } from '../extproc/src/resolve/compile.js';
import type { ResolveRequest } from '../extproc/src/resolve/request.js';
import type { PolicyTable, TableMatch, TableRoute, TableRule } from '../extproc/src/policy/policy-table.js';
import { buildIr } from '../extproc/src/ir/build-ir.js';

/** A deterministic pseudo-random sequence, so runs compare. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function makeTable(
  routeCount: number,
  rand: () => number,
): { table: PolicyTable; requests: ResolveRequest[] } {
  const routes: TableRoute[] = [];
  const requests: ResolveRequest[] = [];
  // About ten routes per hostname, some on wildcard and catch-all hostnames, like a shared gateway.
  const hostCount = Math.max(1, Math.floor(routeCount / 10));
  for (let i = 0; i < routeCount; i++) {
    const h = i % hostCount;
    const hostname = i % 50 === 0 ? `*.tenant${h}.example.com` : i % 97 === 0 ? '*' : `svc${h}.example.com`;
    const id = `httproute/default/r${i}`;
    const rules: TableRule[] = [];
    for (let r = 0; r < 3; r++) {
      const ruleId = `${id}/rule/${r}`;
      const kind = r === 0 ? 'Exact' : 'PathPrefix';
      const value = `/api/v${r}/svc${i}/items`;
      const match: TableMatch = {
        id: `${ruleId}/match/0`,
        path: { type: kind, value },
        ...(r === 2 ? { method: 'POST' } : {}),
        headers: r === 1 && i % 3 === 0 ? [{ type: 'Exact', name: 'x-tenant', value: `t${i}` }] : [],
        queryParams: [],
      };
      rules.push({
        id: ruleId,
        index: r,
        matches: [match],
        backends: [],
        policy: { rule: ruleId, kind: 'http' },
        token: `sf1;id=${ruleId}`,
      });
    }
    routes.push({
      id,
      kind: 'http',
      namespace: 'default',
      name: `r${i}`,
      listeners: [],
      hostnames: [hostname],
      rules,
    });
    const authority = hostname.startsWith('*.')
      ? `a${i}${hostname.slice(1)}`
      : hostname === '*'
        ? 'anything.local'
        : hostname;
    requests.push({ method: 'GET', authority, path: `/api/v0/svc${i}/items` });
    requests.push({
      method: 'GET',
      authority,
      path: `/api/v1/svc${i}/items/42?page=2`,
      headers: { 'x-tenant': `t${i}` },
    });
    requests.push({ method: 'POST', authority, path: `/api/v2/svc${i}/items/7` });
    requests.push({ method: 'GET', authority: 'nobody.example.org', path: '/missing' });
  }
  for (let k = requests.length - 1; k > 0; k--) {
    const j = Math.floor(rand() * (k + 1));
    [requests[k], requests[j]] = [requests[j] as ResolveRequest, requests[k] as ResolveRequest];
  }
  return { table: { version: 1, listeners: [], routes }, requests };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

function bench(routeCount: number): void {
  const rand = rng(routeCount);
  const { table, requests } = makeTable(routeCount, rand);
  const t0 = process.hrtime.bigint();
  const resolver = compileResolver(buildIr(table));
  const compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
  let matched = 0;
  // Warm up the JIT.
  for (let i = 0; i < 200_000; i++)
    if (resolver.resolve(requests[i % requests.length] as ResolveRequest)) matched++;
  // The cost of reading the clock, subtracted from each sample.
  const overheadSamples: number[] = [];
  for (let i = 0; i < 50_000; i++) {
    const a = process.hrtime.bigint();
    overheadSamples.push(Number(process.hrtime.bigint() - a));
  }
  overheadSamples.sort((a, b) => a - b);
  const overhead = percentile(overheadSamples, 50);
  const samples: number[] = [];
  const n = 300_000;
  for (let i = 0; i < n; i++) {
    const req = requests[i % requests.length] as ResolveRequest;
    const a = process.hrtime.bigint();
    const r = resolver.resolve(req);
    const d = Number(process.hrtime.bigint() - a);
    if (r) matched++;
    samples.push(Math.max(0, d - overhead));
  }
  samples.sort((a, b) => a - b);
  // Throughput without per-call clock reads.
  const tb = process.hrtime.bigint();
  for (let i = 0; i < n; i++)
    if (resolver.resolve(requests[i % requests.length] as ResolveRequest)) matched++;
  const meanNs = Number(process.hrtime.bigint() - tb) / n;
  console.log(
    `${String(routeCount).padStart(6)} routes (${resolver.size} entries, compiled in ${compileMs.toFixed(1)} ms): ` +
      `median ${percentile(samples, 50)} ns, p99 ${percentile(samples, 99)} ns, mean ${meanNs.toFixed(0)} ns per resolve` +
      ` (clock overhead ${overhead} ns subtracted; ${matched > 0 ? 'matches found' : 'NO MATCHES'})`,
  );
}

console.log(`resolver benchmark, node ${process.version}`);
for (const count of [100, 10_000]) bench(count);
