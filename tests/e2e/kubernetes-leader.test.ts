// Three replicas of `steadfast serve --kubeconfig --xds` against a real API server
// (scripts/kube-local.mjs), each reaching it through a TCP proxy the test can cut, and two real
// Envoys fed by two of them. Short Lease timings (6 s / 4 s / 1 s) keep the test quick. kubectl
// runs asynchronously: a synchronous one would stall the load this process measures.
// Checks that only the holder of the Lease writes status (its counter moves, the others' stay
// at 0); that when the holder is killed another takes the Lease and a route changed after the
// kill gets its status within the Lease duration + 5 s; that a holder cut off from the API
// server stops writing before another replica starts, and writes nothing once it is back; and
// that traffic through both Envoys loses no request through all of it.
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { KUBECTL, type LocalKube, startLocalKube } from '../../scripts/kube-local.mjs';
import { type RunningLoad, getOnce, startBoundedLoad } from './support/bounded-load.js';
import { CliProcess } from './support/cli-process.js';
import { startFleetEnvoys, until } from './support/fleet.js';
import { TEST_SESSION_KEY, freePort } from './support/gateway-fixture.js';
import { type TcpCut, startTcpCut } from './support/tcp-cut.js';
import {
  CONTROLLER,
  appServiceYaml,
  gatewayYaml,
  sessionKeySecretYaml,
  shopRouteYaml,
} from './support/kube-objects.js';

const ENVOY_ADDRESSES = ['127.0.0.41', '127.0.0.42'] as const;
const LEASE_DURATION_S = 6;
const LEASE_FLAGS = [
  '--lease-duration',
  `${LEASE_DURATION_S}s`,
  '--lease-renew-deadline',
  '4s',
  '--lease-retry-period',
  '1s',
];

interface Replica {
  readonly name: string;
  readonly proxy: TcpCut;
  readonly xdsPort: number;
  process: CliProcess;
  adminUrl: string;
}

type Route = {
  metadata: { generation: number };
  status?: { parents?: { controllerName: string; conditions: { observedGeneration?: number }[] }[] };
};

describe('three replicas of steadfast serve on one API server: one status writer (Lease)', () => {
  let kube: LocalKube;
  let backends: RunningBackend[] = [];
  let gatewayPort: number;
  const replicas: Replica[] = [];
  const envoys: EnvoyProcess[] = [];
  const urls: string[] = [];

  const kubectl = (args: readonly string[], input?: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn(KUBECTL, ['--kubeconfig', kube.adminConfig, ...args]);
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      // A kubectl that reads no input may exit before its stdin is closed: the exit code decides.
      child.stdin.on('error', () => {});
      child.on('exit', (code) =>
        code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')}: ${err}`)),
      );
      child.stdin.end(input ?? '');
    });
  const holder = () =>
    kubectl(['-n', 'steadfast-system', 'get', 'lease', 'steadfast', '-o', 'jsonpath={.spec.holderIdentity}']);
  const route = async () => JSON.parse(await kubectl(['get', 'httproute', 'shop', '-o', 'json'])) as Route;
  const statusFollows = (r: Route) =>
    (r.status?.parents?.find((p) => p.controllerName === CONTROLLER)?.conditions ?? []).some(
      (c) => c.observedGeneration === r.metadata.generation,
    );
  /** Changes the route (a new generation) and returns that generation. */
  let changes = 0;
  const changeRoute = async (): Promise<number> => {
    changes++;
    await kubectl(['apply', '-f', '-'], shopRouteYaml({ extraPath: `/change-${changes}` }));
    return (await route()).metadata.generation;
  };
  const statusWritten = async () => statusFollows(await route());
  const metric = async (r: Replica, name: string): Promise<number> => {
    const text = await (await fetch(`${r.adminUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ')[1] ?? NaN);
  };
  const writes = (r: Replica) => metric(r, 'steadfast_kubernetes_status_writes_total');
  /** The ISO time in a replica's log line about the Lease. */
  const loggedAt = (r: Replica, what: RegExp): number => {
    const m = what.exec(r.process.output);
    if (!m?.[1]) throw new Error(`no ${what} in the log of ${r.name}:\n${r.process.output}`);
    return Date.parse(m[1]);
  };
  const startReplica = async (r: Replica): Promise<void> => {
    const config = join(kube.dir, `${r.name}.kubeconfig`);
    writeFileSync(
      config,
      execFileSync(KUBECTL, ['--kubeconfig', kube.steadfastConfig, 'config', 'view', '--raw'], {
        encoding: 'utf8',
      }).replace(/server: https:\/\/127\.0\.0\.1:\d+/, `server: https://127.0.0.1:${r.proxy.port}`),
    );
    r.process = new CliProcess([
      'serve',
      '--kubeconfig',
      config,
      '--xds',
      `127.0.0.1:${r.xdsPort}`,
      '--session-key-secret',
      'steadfast-system/session-keys',
      '--ext-proc-address',
      '127.0.0.1:0',
      '--admin-port',
      '0',
      '--lease-identity',
      r.name,
      ...LEASE_FLAGS,
    ]);
    r.adminUrl = (await r.process.waitFor(/ready; ext_proc on \S+; admin on (\S+);/))[1] as string;
  };
  /** Load on both Envoys until stopped. */
  const loadBoth = (): { stop(): Promise<void> } => {
    let stopping = false;
    const loads: RunningLoad[] = urls.map((url) =>
      startBoundedLoad({
        url: `${url}/cart/load`,
        headers: { host: 'shop.example' },
        ratePerSecond: 20,
        durationMs: 60_000,
        maxRequests: 1200,
        stopWhen: () => stopping,
      }),
    );
    return {
      async stop() {
        stopping = true;
        for (const load of loads) {
          const result = await load.done;
          expect(result.samples.length).toBeGreaterThan(20);
          expect(result.failed).toEqual([]);
        }
      },
    };
  };

  beforeAll(async () => {
    kube = await startLocalKube({ log: () => {} });
    backends = await Promise.all(
      ['a', 'b'].map((n) => startEchoBackend({ address: '127.0.0.1', name: `lead-${n}` })),
    );
    gatewayPort = await freePort();
    await kubectl(
      ['apply', '-f', '-'],
      [
        sessionKeySecretYaml([TEST_SESSION_KEY]),
        gatewayYaml(gatewayPort),
        appServiceYaml(backends.map((b) => b.port)),
      ].join('---\n'),
    );
    await kubectl(['apply', '-f', '-'], shopRouteYaml());
    const apiPort = Number(new URL(kube.server).port);
    for (const name of ['replica-0', 'replica-1', 'replica-2']) {
      replicas.push({
        name,
        proxy: await startTcpCut({ host: '127.0.0.1', port: apiPort }),
        xdsPort: await freePort(),
        process: undefined as unknown as CliProcess,
        adminUrl: '',
      });
    }
    // replica-0 first, so that it is the one holding the Lease; then the two the Envoys use.
    await startReplica(replicas[0] as Replica);
    await (replicas[0] as Replica).process.waitFor(/replica-0 holds it since/);
    await Promise.all(replicas.slice(1).map(startReplica));
    envoys.push(
      ...(await Promise.all(
        [1, 2].map(
          async (i) =>
            (
              await startFleetEnvoys({
                xdsPort: (replicas[i] as Replica).xdsPort,
                addresses: [ENVOY_ADDRESSES[i - 1] as string],
                nodePrefix: `lead-envoy-${i}`,
              })
            )[0] as EnvoyProcess,
        ),
      )),
    );
    urls.push(...ENVOY_ADDRESSES.map((address) => `http://${address}:${gatewayPort}`));
    for (const url of urls) {
      await until(
        async () => (await getOnce(`${url}/cart/a`, { host: 'shop.example' })).status === 200,
        15_000,
        `${url} serving`,
      );
    }
  }, 240_000);

  afterAll(async () => {
    for (const r of replicas) r.process?.kill('SIGKILL');
    await Promise.all(envoys.map((e) => e.stop()));
    await Promise.all(replicas.map((r) => r.proxy.close()));
    await Promise.all(backends.map((b) => b.close()));
    await kube?.stop();
  });

  it('lets only the holder of the Lease write status, and says who holds it', async () => {
    const [leader, ...followers] = replicas as [Replica, Replica, Replica];
    expect(await holder()).toBe('replica-0');
    const before = await Promise.all(followers.map(writes));
    const leaderBefore = await writes(leader);
    const generation = await changeRoute();
    await until(statusWritten, 10_000, 'status of the changed route');
    expect((await route()).metadata.generation).toBe(generation);
    expect(await holder()).toBe('replica-0');
    expect(await writes(leader)).toBeGreaterThan(leaderBefore);
    expect(await metric(leader, 'steadfast_kubernetes_leader')).toBe(1);
    expect(await Promise.all(followers.map(writes))).toEqual(before);
    for (const f of followers) expect(await metric(f, 'steadfast_kubernetes_leader')).toBe(0);
    const ready = (await (await fetch(`${leader.adminUrl}/readyz`)).json()) as Record<string, unknown>;
    expect(ready).toMatchObject({
      status: 'ready',
      leadership: { lease: 'steadfast-system/steadfast', identity: 'replica-0', leading: true },
    });
    const follower = (await (await fetch(`${followers[0].adminUrl}/readyz`)).json()) as Record<
      string,
      unknown
    >;
    expect(follower).toMatchObject({
      status: 'ready',
      leadership: { identity: 'replica-1', leading: false, holder: 'replica-0' },
    });
  });

  it('hands the Lease on when the holder is killed: a route changed after the kill gets its status within the duration + 5 s', async () => {
    const load = loadBoth();
    const [killed, ...rest] = replicas as [Replica, Replica, Replica];
    const writesBefore = await Promise.all(rest.map(writes));
    killed.process.kill('SIGKILL');
    await killed.process.exit;
    const killedAt = performance.now();
    await changeRoute();
    const took = await until(
      statusWritten,
      (LEASE_DURATION_S + 5) * 1000,
      'status written by the next holder',
    );
    console.log(`status of a route changed after the holder was killed written after ${Math.round(took)} ms`);
    expect(performance.now() - killedAt).toBeLessThan((LEASE_DURATION_S + 5) * 1000);
    const next = await holder();
    expect(['replica-1', 'replica-2']).toContain(next);
    // Exactly one of the two wrote: the new holder.
    const after = await Promise.all(rest.map(writes));
    const wrote = rest
      .filter((_r, i) => (after[i] as number) > (writesBefore[i] as number))
      .map((r) => r.name);
    expect(wrote).toEqual([next]);
    await load.stop();
  }, 60_000);

  it('stops a holder cut off from the API server before another starts, and it writes nothing once back', async () => {
    const load = loadBoth();
    const current = await holder();
    const leader = replicas.find((r) => r.name === current) as Replica;
    const other = replicas.find((r) => r !== leader && r.name !== 'replica-0') as Replica;
    const otherWritesBefore = await writes(other);
    leader.proxy.cut();
    const generation = await changeRoute();
    await until(async () => (await holder()) === other.name, 20_000, `${other.name} holding the Lease`);
    await until(statusWritten, 10_000, 'status written by the new holder');
    expect((await route()).metadata.generation).toBe(generation);
    expect(await writes(other)).toBeGreaterThan(otherWritesBefore);
    // The old holder's last moment of writing came before the new holder's first.
    const stopped = loggedAt(leader, new RegExp(`${leader.name} stopped writing status at (\\S+):`));
    const started = loggedAt(other, new RegExp(`${other.name} holds it since (\\S+);`));
    expect(stopped).toBeLessThan(started);
    expect(leader.process.output).toMatch(/not renewed within the renew deadline/);

    // Back on the network, the old holder reads the Lease, sees the new holder and writes nothing.
    const leaderWrites = await writes(leader);
    leader.proxy.restore();
    await until(
      async () =>
        (await (await fetch(`${leader.adminUrl}/readyz`)).text()).includes(`"holder":"${other.name}"`),
      10_000,
      `${leader.name} seeing ${other.name} hold the Lease`,
    );
    await changeRoute();
    await until(statusWritten, 10_000, 'status of a later change');
    expect(await writes(leader)).toBe(leaderWrites);
    expect(await metric(leader, 'steadfast_kubernetes_leader')).toBe(0);
    await load.stop();
  }, 60_000);
});
