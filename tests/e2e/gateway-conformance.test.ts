// Upstream's Gateway API conformance tables, ported (conformance/conformance-case.ts names
// the tag read): each upstream test is a describe block named `<ShortName> [<features>]`,
// each row of its table an `it` — a request and its answer, or an object and the status the
// control service reports for it (conformance/status-check.ts). One gateway (the real Envoy, the compiled filter, the
// control service) serves every manifest at once, as their paths do not overlap.
// scripts/conformance-table.mjs turns this file's results into docs/gateway-api.md's table,
// and the file's last test checks that table against the results this run really had.
import { FILTER_BUILDS } from '../support/filter-builds.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptLedger } from '../../backends/attempt-ledger.js';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import { startGrpcBackend } from '../../backends/grpc/start-grpc-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { type LocalGateway, startLocalGateway } from '../../extproc/src/local/local-gateway.js';
import {
  type ConformanceCase,
  type ConformanceTest,
  DEFAULT_HOST,
  GATEWAY_PORTS,
  HTTPS_GATEWAYS,
  type RequestCase,
  type StatusCase,
  conformanceTitle,
  isGrpcCase,
  isStatusCase,
} from './conformance/conformance-case.js';
import { checkGrpc } from './conformance/grpc-case.js';
import { makeConformanceTls } from './conformance/certificates.js';
import { exchange } from './conformance/exchange.js';
import { type ClientCertificateName, type TlsSide, startTlsSide } from './conformance/tls-side.js';
import { statusProblems } from './conformance/status-check.js';
import { CONFORMANCE_TESTS as TESTS } from './conformance/all-tables.js';
import { ConfigDir, TEST_SESSION_KEY, serviceYaml } from './support/gateway-fixture.js';
import { FileProvider } from '../../extproc/src/provider/file.js';
import { REPO_ROOT } from '../support/paths.js';

const BACKENDS = ['infra-backend-v1', 'infra-backend-v2', 'infra-backend-v3'];
/** Upstream's gRPC infrastructure backends: the Echo service (backends/grpc), on loopback addresses of their own. */
const GRPC_BACKENDS = ['grpc-infra-backend-v1', 'grpc-infra-backend-v2', 'grpc-infra-backend-v3'];
/** The HTTPS listeners' certificates (conformance/certificates.ts), from a CA the run makes. */
const tls = makeConformanceTls();
/** Every Gateway port the manifests declare: each is bound on a free port. */
const PORTS = new Set([...Object.values(GATEWAY_PORTS), ...TESTS.flatMap((t) => t.ports ?? [])]);
const manifestDir = join(dirname(fileURLToPath(import.meta.url)), 'conformance', 'manifests');

/** The infrastructure's Services: port 8080, as upstream's, onto each echo instance. */
function infraServiceYaml(name: string, backend: RunningBackend): string {
  return serviceYaml(name, [backend]).replace('port: 80, targetPort: app', 'port: 8080, targetPort: app');
}

/** What a case is about, for its title: the request line (and SNI), or the object. */
function caseSubject(c: ConformanceCase): string {
  if (isStatusCase(c)) return `status of ${c.status.namespace ?? 'default'}/${c.status.name}`;
  if (isGrpcCase(c)) return `gRPC ${c.grpc.method} :authority ${c.grpc.authority}`;
  const sni = c.request.serverName ? ` (SNI ${c.request.serverName})` : '';
  return `${c.request.method ?? 'GET'} '${c.request.path}'${c.request.host ? ` Host ${c.request.host}` : ''}${sni}`;
}

/** What a case expects, for its title. */
function outcome(c: ConformanceCase): string {
  if (isStatusCase(c)) return `${c.status.kind} ${c.status.name} should report the status upstream expects`;
  if (isGrpcCase(c)) {
    if (c.weighted) return `should spread ${c.weighted.count} calls as the weights say`;
    if (c.failedWith !== undefined) return `should fail with ${c.failedWith}`;
    if (c.failed) return 'should fail';
    return `should be answered OK${c.answered?.backend ? ` by ${c.answered.backend}` : ''}`;
  }
  if (c.redirect) return `should be redirected ${c.redirect.status} to ${c.redirect.location}`;
  if (c.forwarded) return `should go to ${c.forwarded.backend}`;
  if (c.repeated) return `should go to the backend its header names (${c.repeated.count} times)`;
  return `should be answered ${c.response?.statuses.join(' or ') ?? ''} by the gateway`;
}

describe.each(FILTER_BUILDS)('Gateway API conformance tables (gateway mode, %s filter)', (build) => {
  const config = new ConfigDir();
  let backends: RunningBackend[] = [];
  let grpcBackends: RunningBackend[] = [];
  let gateway: LocalGateway;
  let tlsSide: TlsSide;
  /** Each backend's own ledger: which requests (by uuid) reached it. */
  const ledgers = new Map(BACKENDS.map((name) => [name, new AttemptLedger()]));

  beforeAll(async () => {
    backends = await Promise.all(
      BACKENDS.map((name, i) =>
        startEchoBackend({ address: `127.0.0.${i + 2}`, name, ledger: ledgers.get(name) as AttemptLedger }),
      ),
    );
    grpcBackends = await Promise.all(
      GRPC_BACKENDS.map((name, i) => startGrpcBackend({ address: `127.0.53.${i + 2}`, name })),
    );
    config.write(
      'services.yaml',
      ...BACKENDS.map((n, i) => infraServiceYaml(n, backends[i] as RunningBackend)),
      ...GRPC_BACKENDS.map((n, i) => infraServiceYaml(n, grpcBackends[i] as RunningBackend)),
    );
    config.write('gateways.yaml', readFileSync(join(manifestDir, 'gateways.yaml'), 'utf8'));
    config.write('secrets.yaml', ...tls.secrets);
    tlsSide = await startTlsSide();
    config.write('tls-side.yaml', ...tlsSide.documents);
    for (const file of new Set(TESTS.flatMap((t) => t.manifests))) {
      config.write(file, readFileSync(join(manifestDir, file), 'utf8'));
    }
    gateway = await startLocalGateway({
      provider: new FileProvider({ paths: [config.path] }),
      address: '127.0.0.1',
      adminPort: 0,
      envoyAdminPort: 0,
      sessionKeys: [TEST_SESSION_KEY],
      listenerPorts: Object.fromEntries([...PORTS].map((p) => [p, 0])),
      filter: build,
      debounceMs: 50,
      log: () => undefined,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([...backends, ...grpcBackends].map((b) => b.close()));
    await tlsSide?.close();
    config.remove();
  });

  /** Resolves once `backend` has seen the request with this uuid; fails after 10 s. */
  async function mirrored(backend: string, uuid: string): Promise<void> {
    const ledger = ledgers.get(backend) as AttemptLedger;
    const deadline = Date.now() + 10_000;
    while (ledger.count(uuid) === 0) {
      if (Date.now() > deadline) throw new Error(`${backend} never received the mirrored request ${uuid}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * A status case: what the service reports, after the change the case applies. Like
   * upstream's helpers it waits (up to 10 s) for the status to match, so a change has time to load.
   */
  /** What a status case's change writes: a manifest, or a document the run made. */
  function applied(change: NonNullable<StatusCase['apply']>): string {
    if ('manifest' in change) return readFileSync(join(manifestDir, change.manifest), 'utf8');
    const made = tlsSide.variants[change.made];
    if (made === undefined) throw new Error(`the run made no document ${change.made}`);
    return made;
  }

  async function checkStatus(c: StatusCase): Promise<void> {
    if (c.apply) config.write(c.apply.file, applied(c.apply));
    const problems = () => statusProblems(c.status, gateway.config.snapshot?.statuses ?? []);
    const deadline = Date.now() + 10_000;
    while (problems().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(problems()).toEqual([]);
  }

  async function check(test: ConformanceTest, c: ConformanceCase, i: number): Promise<void> {
    if (isStatusCase(c)) return checkStatus(c);
    if (isGrpcCase(c)) return checkGrpc(listenerUrl(test).replace(/^http:\/\//, ''), c);
    await checkRequest(test, c, i);
  }

  /** Where the test's requests go: its Gateway listener's bound URL (https: on an HTTPS one). */
  function listenerUrl(test: ConformanceTest): string {
    const gw = test.gateway ?? 'same-namespace';
    const https = test.https ?? HTTPS_GATEWAYS.includes(gw);
    const listener = test.listener ?? (https ? 'https' : 'http');
    const bound = gateway.envoy.url(test.envoyListener ?? `gateway/default/${gw}/listener/${listener}`);
    return https ? bound.replace(/^http:/, 'https:') : bound;
  }

  async function checkRequest(test: ConformanceTest, c: RequestCase, i: number): Promise<void> {
    const uuid = `${test.shortName}${test.group ? `-${test.group}` : ''}-${i}`;
    const query = c.forwarded?.mirroredTo ? `?uuid=${uuid}` : '';
    const client = c.request.clientCertificate
      ? tlsSide.clientCertificates[c.request.clientCertificate as ClientCertificateName]
      : undefined;
    // A listener Envoy does not serve has no address: listenerUrl throws, and the exchange is refused too.
    const send = async () =>
      exchange(
        listenerUrl(test),
        c.request.path + query,
        c.request.host ?? DEFAULT_HOST,
        c.request.headers,
        c.request.method ?? 'GET',
        {
          ca: tls.ca,
          ...(c.request.serverName ? { serverName: c.request.serverName } : {}),
          ...(c.request.http2 ? { http2: true } : {}),
          ...(client ? { client } : {}),
        },
      );
    if (c.refused) {
      await expect(send()).rejects.toThrow();
      return;
    }
    const res = await send();
    const url = listenerUrl(test);
    if (c.response) {
      expect(c.response.statuses, res.body).toContain(res.status);
      const normal = (v: string) => (c.response?.ignoreWhitespace ? v.replace(/\s+/g, '') : v);
      for (const [name, values] of Object.entries(c.response.headers ?? {})) {
        const got = res.headers[name];
        const message = `${name} (${JSON.stringify(res.headers)})`;
        expect(typeof got === 'string' ? normal(got) : got, message).toBeOneOf(values.map(normal));
      }
      for (const name of c.response.absentHeaders ?? []) expect(res.headers[name], name).toBeUndefined();
    }
    if (c.repeated) {
      const seenBackends = new Set<string>();
      for (let n = 0; n < c.repeated.count; n++) {
        const r = await exchange(url, c.request.path, c.request.host ?? DEFAULT_HOST, c.request.headers);
        expect(r.status, r.body).toBe(200);
        const seen = JSON.parse(r.body) as { instance: string; headers: Record<string, string[]> };
        expect(seen.headers[c.repeated.headerNamesBackend]).toEqual([seen.instance]);
        seenBackends.add(seen.instance);
      }
      // Both weights are non-zero: both backends answer some of the requests.
      expect(seenBackends.size).toBeGreaterThan(1);
    }
    if (c.redirect) {
      expect(res.status).toBe(c.redirect.status);
      expect(res.headers['location']).toBe(c.redirect.location);
    }
    if (c.forwarded) {
      expect(res.status, res.body).toBe(200);
      const seen = JSON.parse(res.body) as {
        instance: string;
        path: string;
        host: string;
        headers: Record<string, string[]>;
      };
      expect(seen.instance).toBe(c.forwarded.backend);
      expect(seen.path).toBe(c.forwarded.path + query);
      if (c.forwarded.host !== undefined) expect(seen.host).toBe(c.forwarded.host);
      for (const [name, value] of Object.entries(c.forwarded.headers ?? {})) {
        expect(seen.headers[name]?.join(','), name).toBe(value);
      }
      for (const name of c.forwarded.absentHeaders ?? []) expect(seen.headers[name], name).toBeUndefined();
      for (const backend of c.forwarded.mirroredTo ?? []) await mirrored(backend, uuid);
      // The copy is the only one: the mirror is not where the answer came from.
      for (const backend of c.forwarded.mirroredTo ?? []) expect(ledgers.get(backend)?.count(uuid)).toBe(1);
    }
  }

  /** Each case's result in this run, in vitest's JSON reporter's shape (what the table script reads). */
  const results: { ancestorTitles: string[]; title: string; status: 'passed' | 'failed' }[] = [];

  for (const test of TESTS) {
    describe(conformanceTitle(test), () => {
      test.cases.forEach((c, i) => {
        const title = `${i} ${caseSubject(c)} ${outcome(c)}`;
        it(title, async () => {
          const result = {
            ancestorTitles: [conformanceTitle(test)],
            title,
            status: 'failed' as 'passed' | 'failed',
          };
          results.push(result);
          await check(test, c, i);
          result.status = 'passed';
        });
      });
    });
  }

  it("docs/gateway-api.md's conformance table is what this run's results give", () => {
    // Every case ran (a case that never ran would leave the table's count short).
    expect(results.length).toBe(TESTS.reduce((n, t) => n + t.cases.length, 0));
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-table-'));
    try {
      const file = join(dir, 'results.json');
      writeFileSync(file, JSON.stringify({ testResults: [{ assertionResults: results }] }));
      const run = spawnSync(
        process.execPath,
        ['scripts/conformance-table.mjs', '--results', file, '--check'],
        {
          cwd: REPO_ROOT,
          encoding: 'utf8',
        },
      );
      expect(run.status, run.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
