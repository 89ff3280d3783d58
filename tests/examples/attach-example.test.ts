// envoy/attach-example.yaml is an operator's Envoy — its own listener, routes and a
// two-backend cluster — with exactly the snippet `steadfast envoy-config --mode attach`
// prints for examples/attach/gateway-api added, each added part marked `# steadfast`, and
// the sample session key, so it runs the walk-through of docs/attach.md. This test holds
// the file to the generated snippet, and Envoy accepts it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { run } from '../../extproc/src/cli/main.js';
import { validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { REPO_ROOT } from '../support/paths.js';

type Node = Record<string, unknown>;
const FILE = join(REPO_ROOT, 'envoy', 'attach-example.yaml');

async function snippet(): Promise<Node> {
  let out = '';
  const code = await run(
    [
      'envoy-config',
      '--mode',
      'attach',
      '--config',
      'examples/attach/gateway-api',
      '--session-key-file',
      'examples/attach/sample-session-keys.txt',
      '--debug',
      '--ext-proc-address',
      '127.0.0.1:19051',
    ],
    { out: (t) => (out += t), err: () => undefined },
  );
  expect(code).toBe(0);
  return parse(out) as Node;
}

const typed = (n: unknown): Node => (n as Node)['typed_config'] as Node;

describe('envoy/attach-example.yaml', () => {
  const text = readFileSync(FILE, 'utf8');
  const example = parse(text) as Node;
  const statics = example['static_resources'] as Node;
  const chain = (((statics['listeners'] as Node[])[0] as Node)['filter_chains'] as Node[])[0] as Node;
  const manager = typed((chain['filters'] as Node[])[0]);

  it('is an existing Envoy with exactly the snippet for examples/attach added', async () => {
    const s = await snippet();
    const httpFilters = manager['http_filters'] as Node[];
    expect(httpFilters.slice(0, 5)).toEqual(s['http_filters']);
    expect(httpFilters[5]).toEqual(s['router']);
    const routeConfig = manager['route_config'] as Node;
    expect(routeConfig['internal_only_headers']).toEqual(['x-steadfast-pin']);
    const routes = ((routeConfig['virtual_hosts'] as Node[])[0] as Node)['routes'] as Node[];
    for (const r of routes) {
      expect((r['route'] as Node)['retry_policy']).toEqual(s['route_retry_policy']);
    }
    expect(statics['clusters']).toContainEqual((s['clusters'] as Node[])[0]);
    const app = (statics['clusters'] as Node[]).find((c) => c['name'] === 'app') as Node;
    expect(app['outlier_detection']).toEqual(s['cluster_outlier_detection']);
    expect(app['circuit_breakers']).toEqual(s['cluster_circuit_breakers']);
    expect(app['typed_extension_protocol_options']).toEqual(s['cluster_typed_extension_protocol_options']);
    expect(example['layered_runtime']).toEqual(s['layered_runtime']);
  });

  it('marks every added part "# steadfast"', () => {
    expect(text.match(/# steadfast:/g)?.length).toBeGreaterThanOrEqual(7);
  });

  it('sends to the endpoints examples/attach/gateway-api names, so sessions pin to them', () => {
    const app = (statics['clusters'] as Node[]).find((c) => c['name'] === 'app') as Node;
    const endpoints = (((app['load_assignment'] as Node)['endpoints'] as Node[])[0] as Node)[
      'lb_endpoints'
    ] as Node[];
    expect(endpoints.map((e) => ((e['endpoint'] as Node)['address'] as Node)['socket_address'])).toEqual([
      { address: '127.0.0.2', port_value: 18080 },
      { address: '127.0.0.3', port_value: 18080 },
    ]);
  });

  it('lists the routes it adds the retry policy to in retry_routes, and has a session key', async () => {
    const s = await snippet();
    expect((s['retry_routes'] as Node[]).map((r) => r['matches'])).toEqual([
      ['PathPrefix /cart'],
      ['PathPrefix /api'],
    ]);
    const wasm = JSON.stringify(s['http_filters']);
    expect(wasm).toContain('"debug\\":true');
    expect(wasm).not.toContain('"sessionKeys\\":[]');
  });

  it('passes envoy --mode validate', () => {
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-attach-example-'));
    try {
      // The wasm path is relative to the repository root, where Envoy is documented to run.
      const config = text.replaceAll(
        'filename: filter/build/steadfast.wasm',
        `filename: ${join(REPO_ROOT, 'filter/build/steadfast.wasm')}`,
      );
      writeFileSync(join(dir, 'envoy.yaml'), config);
      const v = validateEnvoyConfig(join(dir, 'envoy.yaml'));
      expect(v.output).toContain('OK');
      expect(v.ok).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
