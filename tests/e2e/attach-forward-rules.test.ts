// Attach mode sends ext_proc only what the rules read: the snippet's forward_rules, in the
// pinned Envoy. A rule matching on a header still gets it; every other header stays in
// Envoy (seen by an in-process ext_proc server that records what arrives).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { extProcForwardRules } from '../../extproc/src/envoy/attach-snippet.js';
import { startGrpcServer, type GrpcServerHandle } from '../../extproc/src/server/grpc/grpc-server.js';
import type { RequestAttributes } from '../../extproc/src/server/grpc/request-attributes.js';
import { startEnvoy, type EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { ServiceMetrics } from '../../extproc/src/server/metrics.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { REPO_ROOT } from '../support/paths.js';
import { type AttachRoute, baseObjectsYaml, routesYaml } from './support/attach-config.js';
import { type AttachStack, startAttachStack } from './support/attach-stack.js';
import { curl } from './support/curl.js';
import { rewriteEnvoyConfig } from './support/envoy-config-rewrite.js';
import { POLICY_HEADER, oneWithPolicy } from './support/with-policy.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';

const HOST = 'shop.example';
// The match names the header in capitals: Gateway API header names are case-insensitive.
const SHOP: AttachRoute = {
  name: 'shop',
  hostnames: [HOST],
  rules: [
    { path: '/', headers: { 'X-Env': 'canary' }, retry: { attempts: 1, codes: [503] } },
    { path: '/', timeouts: { request: '3s' } },
  ],
};
const CLIENT_HEADERS = ['X-Env: canary', 'Cookie: session=secret', 'Authorization: Bearer t', 'X-Other: 1'];

describe('attach mode: a rule matching on a header, with the snippet forward_rules', () => {
  let stack: AttachStack;

  beforeAll(async () => {
    stack = await startAttachStack({ routes: [SHOP] });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  // With a policy: one whose ext_proc answer came too late went on without any, and is sent
  // again (support/with-policy.ts); which rule's policy it got is what is checked.
  const get = (args: string[]) =>
    oneWithPolicy(
      { mode: 'attach', envoy: stack.envoy },
      () => curl(`${stack.url}/a`, args),
      (r) => r.headers.has(POLICY_HEADER),
    );

  it('still sees the header it matches on', async () => {
    const withHeader = await get(['-H', `Host: ${HOST}`, ...CLIENT_HEADERS.flatMap((h) => ['-H', h])]);
    expect(withHeader.status).toBe(200);
    expect(withHeader.headers.get(POLICY_HEADER)?.[0]).toContain('httproute/default/shop/rule/0');
    const without = await get(['-H', `Host: ${HOST}`, '-H', 'X-Env: stable']);
    expect(without.headers.get(POLICY_HEADER)?.[0]).toContain('httproute/default/shop/rule/1');
  });
});

describe('what Envoy sends ext_proc with the snippet forward_rules', () => {
  let backend: RunningBackend;
  let server: GrpcServerHandle;
  let envoy: EnvoyProcess;
  const seen: RequestAttributes[] = [];

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.0.2', name: 'forward-rules' });
    server = await startGrpcServer('127.0.0.1:0', {
      metrics: new ServiceMetrics().extProc,
      lookup: (req) => {
        seen.push(req);
        return undefined;
      },
    });
    const table = compileSnapshot([
      { path: 'base.yaml', text: baseObjectsYaml([backend], backend.port) },
      { path: 'routes.yaml', text: routesYaml([SHOP]) },
    ]).table;
    envoy = await startEnvoy({
      config: rewriteEnvoyConfig(readFileSync(join(REPO_ROOT, 'envoy/attach-example.yaml'), 'utf8'), {
        clusters: {
          app: [{ address: backend.address, port: backend.port }],
          steadfast_extproc: [{ address: '127.0.0.1', port: server.port }],
        },
        extProcForwardRules: extProcForwardRules(buildIr(table)),
      }),
    });
  }, 60_000);

  afterAll(async () => {
    await envoy?.stop();
    await server?.shutdown(1000);
    await backend?.close();
  });

  it('is the request line and the matched header, nothing else the client sent', async () => {
    const res = await curl(`${envoy.url('ingress')}/a?q=1`, [
      '-H',
      `Host: ${HOST}`,
      ...CLIENT_HEADERS.flatMap((h) => ['-H', h]),
    ]);
    expect(res.status).toBe(200);
    const got = seen.at(-1);
    expect(got).toMatchObject({ method: 'GET', authority: HOST, path: '/a?q=1' });
    expect(got?.headers['x-env']).toBe('canary');
    for (const name of ['cookie', 'authorization', 'x-other', 'user-agent', 'accept']) {
      expect(got?.headers, name).not.toHaveProperty(name);
    }
    const allowed = [':authority', ':method', ':path', 'host', 'x-env'];
    expect(Object.keys(got?.headers ?? {}).filter((k) => !allowed.includes(k))).toEqual([]);
  });
});
