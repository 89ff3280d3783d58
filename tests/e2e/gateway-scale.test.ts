// Gateway mode at 10,000 routes (the fault matrix's "10,000 routes loaded and served"; attach
// mode has attach-scale.test.ts): the local gateway loads a generated configuration (route-i
// serves svc-i.example under /r/i with i % 5 + 1 retries on 503), Envoy accepts what it is
// given, and sampled requests reach their own rule, retried as that rule says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http1 } from '../backends/clients.js';
import { manyRoutes } from './support/attach-config.js';
import { getOnce } from './support/bounded-load.js';
import { type ModeStack, startMode } from './support/mode-stack.js';

const ROUTES = 10_000;
let stack: ModeStack;
let loadSeconds = 0;

const expected = (i: number) =>
  new RegExp(`^sf1;id=httproute/default/route-${i}/rule/0;k=h;ra=${(i % 5) + 1};rc=503$`);

beforeAll(async () => {
  const t0 = performance.now();
  stack = await startMode('gateway', manyRoutes(ROUTES));
  loadSeconds = (performance.now() - t0) / 1000;
  console.log(`gateway-scale: ${ROUTES} routes served after ${loadSeconds.toFixed(1)} s`);
}, 300_000);

afterAll(async () => {
  await stack?.stop();
});

describe(`gateway mode with ${ROUTES} routes`, () => {
  it('Envoy holds one cluster for all the routes, which send to the same Service', async () => {
    const clusters = await (await fetch(`${stack.envoy.adminUrl}/clusters?format=json`)).json();
    const names = (clusters as { cluster_statuses: { name: string }[] }).cluster_statuses.map((c) => c.name);
    // Their rules differ only in retries, which are route settings: one cluster serves them all.
    expect(names.filter((n) => n.startsWith('backend/'))).toHaveLength(1);
    expect(names.filter((n) => n.startsWith('httproute/'))).toEqual([]);
  });

  it('serves sampled hosts from their own rule', async () => {
    for (const i of [0, 1, 777, 4242, 5000, 9998, 9999]) {
      const s = await getOnce(`${stack.url}/r/${i}/item?x=1`, { host: `svc-${i}.example` });
      expect(s.status).toBe(200);
      expect(s.policy).toMatch(expected(i));
    }
    // The right host with another route's path, and an unknown host: no route.
    expect((await getOnce(`${stack.url}/r/6`, { host: 'svc-5.example' })).status).toBe(404);
    expect((await getOnce(`${stack.url}/r/5`, { host: 'svc-10000.example' })).status).toBe(404);
  });

  it('retries a 503 as many times as the sampled rule says, and no more', async () => {
    for (const i of [3, 9999]) {
      const attempts = (i % 5) + 1;
      const uuid = `scale-${process.pid}-${i}`;
      // Fails every try: the answer is the last 503, after 1 + attempts tries.
      const failing = await http1(stack.url, `/r/${i}?uuid=${uuid}&succeedAfter=100&responseCode=503`, {
        headers: { host: `svc-${i}.example` },
      });
      expect(failing.status).toBe(503);
      expect(failing.headers['x-backend-attempt']).toBe(String(attempts + 1));
    }
  });
});
