// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- a global declaration file, not a module: the emulator needs it and the build includes no tests/
/// <reference path="../tests/support/webassembly.d.ts" />
// The filter's own cost per request without a load run: the release steadfast.wasm in the
// proxy-wasm host emulator, one request at a time through both halves (the downstream
// filter and the upstream one), counting host calls and timing the whole exchange. The
// time includes the emulator's JavaScript side of every host call, so it is a number to
// compare across commits on one machine, not what Envoy spends.
import type { Policy } from '../extproc/src/policy/policy.js';
import { encodePolicyToken } from '../extproc/src/policy/policy-token.js';
import {
  LogLevel,
  propertyKey,
  type Headers,
  type ProxyWasmHost,
} from '../tests/emulator/proxy-wasm-host.js';
import { clockReadNs, loadTimedHost, WasmClock } from './wasm-clock.js';

export interface FilterCase {
  readonly name: string;
  readonly hostCallsPerRequest: number;
  /** Time inside the filter's own code (wasm), without the host calls it makes; fastest batch. */
  readonly wasmNsPerRequest: number;
  /** The fastest batch's time per request, emulator included. */
  readonly nsPerRequest: number;
  readonly nsPerRequestMedian: number;
  /** Host calls per request by name, for finding what moved. */
  readonly calls: Readonly<Record<string, number>>;
}

const ROUTE_POLICY = propertyKey('xds', 'route_metadata', 'filter_metadata', 'steadfast', 'policy');
const UPSTREAM_ADDRESS = propertyKey('upstream', 'address');
const UPSTREAM_ROOT = 100;
const RULE = 'httproute/default/bench/rule/0';
const BATCHES = 7;

/** What bench/configs/no-policy and bench/configs/retry-session compile to. */
const NO_POLICY: Policy = { rule: RULE, kind: 'http' };
const RETRY_SESSION: Policy = {
  rule: RULE,
  kind: 'http',
  retry: { attempts: 2, codes: [500, 502, 503], backoffMs: 10, grpcReasons: [] },
  timeouts: { requestMs: 5000, backendRequestMs: 1000 },
  session: {
    type: 'cookie',
    name: 'bench-session',
    path: '/',
    lifetime: 'permanent',
    absoluteTimeoutS: 3600,
  },
};

interface Exchange {
  readonly setCookie: string | undefined;
}

/** One request as gateway mode runs it: downstream headers, one upstream attempt, the response. */
function exchange(host: ProxyWasmHost, token: string | undefined, cookie: string | undefined): Exchange {
  const request: Headers = [
    [':method', 'GET'],
    [':path', '/bench'],
    [':authority', 'bench.example'],
    ['user-agent', 'steadfast-bench'],
    ['x-request-id', '5e1c0b52-7a43-4c1e-9f0e-2d4f1f0f8a11'],
  ];
  if (cookie) request.push(['cookie', cookie]);
  const down = host.newStream(token === undefined ? {} : { [ROUTE_POLICY]: token });
  down.sendRequestHeaders(request);
  const up = host.newStream({}, UPSTREAM_ROOT);
  up.sendRequestHeaders(down.requestHeaders);
  up.sendResponseHeaders([
    [':status', '200'],
    ['content-length', '3'],
  ]);
  up.complete();
  down.setProperty(UPSTREAM_ADDRESS, '127.0.0.2:18080');
  down.sendResponseHeaders([
    [':status', '200'],
    ['content-length', '3'],
  ]);
  down.complete();
  const set = down.responseHeaderValues('set-cookie')[0];
  return { setCookie: set?.split(';')[0] };
}

function totalCalls(host: ProxyWasmHost): Map<string, number> {
  return new Map(host.calls);
}

async function measure(
  wasmPath: string,
  name: string,
  /** Undefined: the route carries no token at all (attach mode's answer for an unmatched request). */
  policy: Policy | undefined,
  resumed: boolean,
  requests: number,
): Promise<FilterCase> {
  const clock = new WasmClock();
  const host = await loadTimedHost(
    wasmPath,
    {
      logLevel: LogLevel.Warn,
      pluginConfig: JSON.stringify({
        policySource: 'route',
        sessionKeys: [Buffer.alloc(32, 7).toString('base64')],
      }),
    },
    clock,
  );
  if (!host.start() || !host.startPlugin(UPSTREAM_ROOT, '{"role":"upstream"}'))
    throw new Error(`the filter refused its configuration: ${host.logs.map((l) => l.message).join('; ')}`);
  const token = policy === undefined ? undefined : encodePolicyToken(policy);
  const first = exchange(host, token, undefined);
  const cookie = resumed ? first.setCookie : undefined;
  if (resumed && !cookie) throw new Error(`${name}: the filter issued no session cookie`);
  // Warm the engine's tiers before counting.
  for (let i = 0; i < 2000; i++) exchange(host, token, cookie);
  const before = totalCalls(host);
  // Several timed batches: the fastest is the least disturbed by whatever else the machine runs.
  const batchNs: number[] = [];
  let reissued = 0;
  for (let b = 0; b < BATCHES; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < requests; i++) if (exchange(host, token, cookie).setCookie && resumed) reissued++;
    batchNs.push(Number(process.hrtime.bigint() - t0) / requests);
  }
  if (reissued > 0) throw new Error(`${name}: ${reissued} resumed requests got a new cookie`);
  batchNs.sort((a, b) => a - b);
  // As many batches again with the clock on, for the time inside the filter's own code.
  const read = clockReadNs();
  const wasmNs: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    clock.reset();
    clock.enabled = true;
    for (let i = 0; i < requests; i++) exchange(host, token, cookie);
    clock.enabled = false;
    wasmNs.push(clock.filterNs(read) / requests);
  }
  wasmNs.sort((a, b) => a - b);
  const calls: Record<string, number> = {};
  let total = 0;
  for (const [k, n] of host.calls) {
    const d = n - (before.get(k) ?? 0);
    total += d;
    const perRequest = Math.round((d / (requests * BATCHES * 2)) * 100) / 100;
    if (perRequest > 0) calls[k] = perRequest;
  }
  return {
    name,
    hostCallsPerRequest: total / (requests * BATCHES * 2),
    wasmNsPerRequest: wasmNs[0] as number,
    nsPerRequest: batchNs[0] as number,
    nsPerRequestMedian: batchNs[Math.floor(BATCHES / 2)] as number,
    calls,
  };
}

export async function measureFilterCost(wasmPath: string, requests = 3000): Promise<FilterCase[]> {
  return [
    await measure(wasmPath, 'no token', undefined, false, requests),
    await measure(wasmPath, 'no policy', NO_POLICY, false, requests),
    await measure(wasmPath, 'retry+session, new session', RETRY_SESSION, false, requests),
    await measure(wasmPath, 'retry+session, resumed session', RETRY_SESSION, true, requests),
  ];
}
