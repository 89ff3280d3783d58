// A replica whose Lease API calls are refused (no RBAC for Leases: 403) or land in a missing
// namespace (404) cannot elect: it says why and what to change in the log, once per reason, and
// in /readyz's leadership detail; it never holds, so it never writes status.
import { describe, expect, it, vi } from 'vitest';
import type { KubeClient, KubeResponse } from '../../extproc/src/provider/kubernetes/client.js';
import { LeaseElector } from '../../extproc/src/provider/kubernetes/lease.js';

const SETTINGS = {
  namespace: 'steadfast-system',
  name: 'steadfast',
  identity: 'replica-0',
  durationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 5,
};

/** A fake API server whose Lease answers come from `answer` (method → response). */
function elector(answer: (method: string) => KubeResponse<unknown>) {
  const asked: string[] = [];
  const logs: string[] = [];
  const client = {
    server: 'https://fake',
    async send(method: string) {
      asked.push(method);
      return answer(method);
    },
  } as unknown as KubeClient;
  const changes: boolean[] = [];
  const e = new LeaseElector(
    client,
    SETTINGS,
    (leading) => changes.push(leading),
    (line) => logs.push(line),
  );
  return { e, asked, logs, changes };
}

const forbidden = {
  status: 403,
  body: {
    reason: 'Forbidden',
    message:
      'leases.coordination.k8s.io "steadfast" is forbidden: User "system:serviceaccount:x:y" cannot get resource "leases"',
  },
};
const noNamespace = {
  status: 404,
  body: { reason: 'NotFound', message: 'namespaces "steadfast-system" not found' },
};

describe('a Lease this replica may not use', () => {
  it('says on 403 that the Role of deploy/kubernetes/rbac.yaml is missing, once, and never holds', async () => {
    const { e, asked, logs, changes } = elector(() => forbidden);
    e.start();
    await vi.waitFor(() => expect(asked.length).toBeGreaterThanOrEqual(5));
    await e.stop();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/cannot get resource "leases"/);
    expect(logs[0]).toMatch(/deploy\/kubernetes\/rbac\.yaml/);
    expect(logs[0]).toMatch(/--lease-namespace\/--lease-name/);
    const view = e.view();
    expect(view.leading).toBe(false);
    expect(e.holds()).toBe(false);
    expect(view.problem).toMatch(/^cannot elect: lease: Forbidden: .*\(HTTP 403\).*rbac\.yaml/);
    expect(changes).toEqual([]);
    expect(asked.every((m) => m === 'GET')).toBe(true);
  });

  it('says on 404 that the namespace may be missing, and clears the problem once it can take the Lease', async () => {
    let namespaceExists = false;
    const { e, logs, changes } = elector((method) => {
      if (method === 'GET')
        return { status: 404, body: { reason: 'NotFound', message: 'leases "steadfast" not found' } };
      return namespaceExists ? { status: 201, body: {} } : noNamespace;
    });
    e.start();
    await vi.waitFor(() => expect(e.view().problem).toBeDefined());
    expect(e.view().problem).toMatch(
      /^cannot elect: .*namespaces "steadfast-system" not found \(HTTP 404\).*create the namespace/,
    );
    expect(logs[0]).toMatch(/--lease-namespace/);
    namespaceExists = true;
    await vi.waitFor(() => expect(e.holds()).toBe(true));
    expect(e.view().problem).toBeUndefined();
    expect(changes).toEqual([true]);
    await e.stop();
  });
});
