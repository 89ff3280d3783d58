// The client-side rate limit: a token bucket as client-go's (a burst at once, then one request
// per 1/qps s, in the order asked), counting every request of the client — reads go at once,
// writes wait — and none of the Lease's client, so a renewal never waits behind status writes.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, NotSent } from '../../extproc/src/provider/kubernetes/client.js';
import { TokenBucket } from '../../extproc/src/provider/kubernetes/rate-limit.js';

describe('TokenBucket', () => {
  it('lets a burst go at once, then one request per 1/qps, and fills again while quiet', () => {
    let now = 0;
    const bucket = new TokenBucket({ qps: 10, burst: 3 }, () => now);
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 0]);
    // Each later request waits for its own token, behind those promised before it.
    expect(bucket.reserve()).toBeCloseTo(100);
    expect(bucket.reserve()).toBeCloseTo(200);
    now = 10_000;
    // Quiet long enough: full again, never above the burst.
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 0]);
    expect(bucket.reserve()).toBeCloseTo(100);
  });

  it('counts a token spent without waiting against the next request', () => {
    const bucket = new TokenBucket({ qps: 10, burst: 1 }, () => 0);
    bucket.spend();
    bucket.spend();
    expect(bucket.reserve()).toBeCloseTo(200);
  });

  it('never waits with a negative rate (no limit)', () => {
    const bucket = new TokenBucket({ qps: -1, burst: 1 }, () => 0);
    for (let i = 0; i < 100; i++) expect(bucket.reserve()).toBe(0);
  });
});

describe('KubeClient under a rate limit', () => {
  let server: Server;
  let kubeconfig: string;
  const arrived: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      arrived.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    kubeconfig = join(mkdtempSync(join(tmpdir(), 'steadfast-rate-')), 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: 'http://127.0.0.1:${port}', insecure-skip-tls-verify: true } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`,
    );
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("sends the Lease client's request at once while the limited ones wait their turn", async () => {
    arrived.length = 0;
    const limited = await KubeClient.load(kubeconfig, { qps: 2, burst: 1 });
    const lease = limited.unlimited();
    const queued = ['/a', '/b', '/c'].map((p) => limited.call('PUT', p, {}));
    await lease.call('PUT', '/lease', {});
    await Promise.all(queued);
    // /a took the one token; /b and /c came 0.5 s and 1 s later, the Lease's request in between.
    expect(arrived).toEqual(['/a', '/lease', '/b', '/c']);
    limited.close();
    lease.close();
  });

  it('sends a read at once, ahead of a write waiting its turn', async () => {
    arrived.length = 0;
    const limited = await KubeClient.load(kubeconfig, { qps: 2, burst: 1 });
    await limited.call('PUT', '/write', {});
    // No token left: the write asked next waits its turn, the list asked after it goes first.
    const next = limited.call('PUT', '/next', {});
    await limited.call('GET', '/list');
    await next;
    expect(arrived).toEqual(['/write', '/list', '/next']);
    limited.close();
  });

  it('does not send a request its caller no longer wants once its turn comes', async () => {
    arrived.length = 0;
    const limited = await KubeClient.load(kubeconfig, { qps: 2, burst: 1 });
    await limited.call('PUT', '/first', {});
    let wanted = true;
    const late = limited.call('PUT', '/status', {}, () => (wanted ? 1000 : 0));
    wanted = false;
    await expect(late).rejects.toBeInstanceOf(NotSent);
    expect(arrived).toEqual(['/first']);
    limited.close();
  });
});
