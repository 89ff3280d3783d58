// Status writes as the API server itself counts them (apiserver_request_total): the truth about
// what a control plane wrote, whatever the control plane says. The API server drops a write that
// changes nothing without a new resourceVersion, so the object alone cannot tell.
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { LocalKube } from '../../../scripts/kube-local.mjs';

/** PUTs and PATCHes of the status subresource served so far, per resource (httproutes, gateways...). */
export async function apiServerStatusWrites(kube: LocalKube): Promise<Record<string, number>> {
  const text = await new Promise<string>((resolve, reject) => {
    const req = httpsRequest(
      `${kube.server}/metrics`,
      { headers: { authorization: `Bearer ${kube.adminToken}` }, ca: readFileSync(kube.ca) },
      (r) => {
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => resolve(body));
      },
    );
    req.on('error', reject);
    req.end();
  });
  const writes: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (!/verb="(PUT|PATCH)"/.test(line) || !/subresource="status"/.test(line)) continue;
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
    writes[resource] = (writes[resource] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return writes;
}

/** Every status write, whatever the resource. */
export async function apiServerStatusWritesTotal(kube: LocalKube): Promise<number> {
  return Object.values(await apiServerStatusWrites(kube)).reduce((a, b) => a + b, 0);
}
