// Attach mode fails open: with the control service killed, frozen (slower than
// message_timeout) or fed garbage, requests through Envoy still succeed — without policy —
// and the outage shows in Envoy's ext_proc stats and steadfast's metrics. A restarted
// `steadfast serve` on the same port is used again without restarting Envoy.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttachRoute } from './support/attach-config.js';
import { type AttachStack, startAttachStack, within } from './support/attach-stack.js';
import { getOnce, startBoundedLoad } from './support/bounded-load.js';
import { freePort } from './support/free-port.js';

const ROUTES: AttachRoute[] = [
  { name: 'shop', hostnames: ['shop.example'], rules: [{ path: '/', retry: { attempts: 1, codes: [503] } }] },
];
const HOST = { host: 'shop.example' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: AttachStack;

async function stat(name: string): Promise<number> {
  return (await stack.envoy.stats()).get(`http.ingress.ext_proc.${name}`) ?? 0;
}

beforeAll(async () => {
  stack = await startAttachStack({ routes: ROUTES, grpcPort: await freePort() });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('attach mode: the control service goes away', () => {
  it('loses no request when it is killed under load, and policy is back within 2 s of a restart', async () => {
    expect((await getOnce(`${stack.url}/warm`, HOST)).policy).toMatch(/^sf1;id=httproute\/default\/shop/);
    const failOpenBefore = await stat('failure_mode_allowed');
    // ~200 requests/s for 4 s, at most 1000 requests.
    const load = startBoundedLoad({
      url: `${stack.url}/load`,
      headers: HOST,
      ratePerSecond: 200,
      durationMs: 4000,
      maxRequests: 1000,
    });
    await sleep(1000);
    stack.control.process.kill('SIGKILL');
    await stack.control.stop();
    await sleep(1000);
    const restarted = await stack.restartControl();
    const ms = await within(
      2000,
      async () => (await getOnce(`${stack.url}/back`, HOST)).policy !== undefined,
    );
    const { samples, failed } = await load.done;

    expect(failed).toEqual([]);
    expect(samples.length).toBeGreaterThan(600);
    // Some requests went without policy while it was down, the rest with it.
    const without = samples.filter((s) => s.policy === undefined).length;
    expect(without).toBeGreaterThan(0);
    expect(samples.length - without).toBeGreaterThan(0);
    console.log(
      `attach-failure: ${samples.length} requests, ${without} without policy, policy back ${ms.toFixed(0)} ms after the restart was ready`,
    );
    expect(await stat('failure_mode_allowed')).toBeGreaterThan(failOpenBefore);
    expect((await fetch(`${restarted.adminUrl}/readyz`)).status).toBe(200);
  }, 30_000);

  it('fails open on message_timeout when the service is too slow (frozen), then recovers', async () => {
    const timeoutsBefore = await stat('message_timeouts');
    stack.control.process.kill('SIGSTOP');
    try {
      const load = startBoundedLoad({
        url: `${stack.url}/slow`,
        headers: HOST,
        ratePerSecond: 50,
        durationMs: 1000,
        maxRequests: 60,
      });
      const { samples, failed } = await load.done;
      expect(failed).toEqual([]);
      expect(samples.every((s) => s.policy === undefined)).toBe(true);
      // Each waited for message_timeout (0.2 s), not much longer.
      expect(Math.min(...samples.map((s) => s.latencyMs))).toBeGreaterThanOrEqual(190);
      expect(Math.max(...samples.map((s) => s.latencyMs))).toBeLessThan(3000);
    } finally {
      stack.control.process.kill('SIGCONT');
    }
    expect(await stat('message_timeouts')).toBeGreaterThan(timeoutsBefore);
    await within(2000, async () => (await getOnce(`${stack.url}/after-freeze`, HOST)).policy !== undefined);
    // The stall shows in steadfast's metrics as event-loop lag far beyond message_timeout.
    const metrics = await (await fetch(`${stack.control.adminUrl}/metrics`)).text();
    const lag = Number(/^steadfast_process_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics)?.[1]);
    expect(lag).toBeGreaterThan(0.2);
  }, 30_000);

  it('survives garbage on its gRPC port and keeps answering', async () => {
    const [host, port] = stack.control.grpcAddress.split(':') as [string, string];
    const junk = [
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
      Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x04\x01\x00\x00\x00\x00\x01garbage'),
      Buffer.alloc(4096, 0xff),
    ];
    for (const bytes of junk) {
      await new Promise<void>((resolve) => {
        const s = connect(Number(port), host, () => s.end(bytes));
        s.on('error', () => resolve());
        s.on('close', () => resolve());
        s.setTimeout(1000, () => s.destroy());
      });
    }
    expect(stack.control.process.exitCode).toBeNull();
    expect((await getOnce(`${stack.url}/after-junk`, HOST)).policy).toMatch(/^sf1;/);
  });
});

describe('attach mode with --workers 2', () => {
  let workers: AttachStack;

  beforeAll(async () => {
    workers = await startAttachStack({ routes: ROUTES, serveArgs: ['--workers', '2'] });
  }, 60_000);

  afterAll(async () => {
    await workers?.stop();
  });

  it('sends a change to every worker: all answer with the new table', async () => {
    const fresh = (policy: string | undefined) =>
      policy?.startsWith('sf1;id=httproute/default/fresh/') === true;
    workers.writeRoutes([
      ...ROUTES,
      {
        name: 'fresh',
        hostnames: ['fresh.example'],
        rules: [{ path: '/', retry: { attempts: 2, codes: [503] } }],
      },
    ]);
    await within(10_000, async () =>
      fresh((await getOnce(`${workers.url}/f`, { host: 'fresh.example' })).policy),
    );
    // Envoy's two worker threads each hold an ext_proc connection, handed to the workers in turn.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => getOnce(`${workers.url}/f/${i}`, { host: 'fresh.example' })),
    );
    expect(answers.filter((a) => !fresh(a.policy)).map((a) => a.policy)).toEqual([]);
    expect((await getOnce(`${workers.url}/w`, HOST)).policy).toMatch(/^sf1;id=httproute\/default\/shop\//);
  }, 30_000);

  it('serves policy from every worker and replaces one that dies, losing no request', async () => {
    expect((await getOnce(`${workers.url}/w`, HOST)).policy).toMatch(/^sf1;/);
    const load = startBoundedLoad({
      url: `${workers.url}/load`,
      headers: HOST,
      ratePerSecond: 200,
      durationMs: 3000,
      maxRequests: 700,
    });
    await sleep(1000);
    // Kill one worker (a child of the serve process) outright.
    const { execFileSync } = await import('node:child_process');
    const children = execFileSync('pgrep', ['-P', String(workers.control.process.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
    expect(children.length).toBe(2);
    process.kill(children[0] as number, 'SIGKILL');
    const { failed, samples } = await load.done;
    expect(failed).toEqual([]);
    expect(samples.filter((s) => s.policy !== undefined).length).toBeGreaterThan(samples.length / 2);
    const metrics = await (await fetch(`${workers.control.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/steadfast_extproc_worker_restarts_total 1/);
    expect(metrics).toMatch(/steadfast_extproc_requests_total\{result="matched"\} [1-9]/);
  }, 30_000);
});
