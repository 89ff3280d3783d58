// `--upstream-idle-timeout`: read like the other duration flags (or `off`), refused where no
// cluster is generated, and honoured by every configuration that has backend clusters —
// envoy-config in gateway mode and for compose, the attach snippet's recommendation for the
// operator's own clusters, dev, and a running serve's Envoy files and ADS clusters.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseArgs } from '../../extproc/src/cli/args.js';
import { DEV_FLAGS, devSettings } from '../../extproc/src/cli/commands/dev.js';
import { run } from '../../extproc/src/cli/main.js';
import {
  UPSTREAM_IDLE_TIMEOUT_FLAG,
  upstreamIdleTimeoutOf,
} from '../../extproc/src/cli/upstream-idle-flag.js';
import { TYPE_CLUSTER } from '../../extproc/src/envoy/envoy-names.js';
import { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { decodeAny } from '../../extproc/src/xds/envoy-protos.js';
import { AdsClient } from '../support/ads-delta-client.js';
import { CliProcess } from '../e2e/support/cli-process.js';
import { TEST_SESSION_KEY, freePort } from '../e2e/support/gateway-fixture.js';

type Node = Record<string, unknown>;
type Any = { type_url: string; value: Buffer };
const HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';
const CONFIG = 'examples/quickstart';
const tmp = mkdtempSync(join(tmpdir(), 'steadfast-idle-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function cli(...args: string[]) {
  let out = '';
  let err = '';
  const code = await run(args, { out: (t) => (out += t), err: (t) => (err += `${t}\n`) });
  return { code, out, err };
}

const read = (...args: string[]) =>
  upstreamIdleTimeoutOf(parseArgs(args, { 'upstream-idle-timeout': UPSTREAM_IDLE_TIMEOUT_FLAG }));

/** Every idle_timeout of the clusters' HTTP protocol options in a printed configuration. */
function clusterIdleTimeouts(clusters: readonly Node[]): unknown[] {
  return clusters.map((c) => {
    const options = (c['typed_extension_protocol_options'] as Node | undefined)?.[HTTP_OPTIONS] as
      Node | undefined;
    return (options?.['common_http_protocol_options'] as Node | undefined)?.['idle_timeout'];
  });
}

const backendClusters = (config: Node): Node[] =>
  ((config['static_resources'] as Node)['clusters'] as Node[]).filter(
    (c) => c['name'] !== 'steadfast_extproc',
  );

describe('--upstream-idle-timeout', () => {
  it('reads s, ms, seconds and off into what Envoy takes; nothing given, the generator decides', () => {
    expect(read()).toBeUndefined();
    expect(read('--upstream-idle-timeout', '30s')).toBe('30s');
    expect(read('--upstream-idle-timeout', '1500ms')).toBe('1.5s');
    expect(read('--upstream-idle-timeout', '1.1')).toBe('1.1s');
    expect(read('--upstream-idle-timeout=off')).toBe('0s');
  });

  it('refuses what is not a duration, zero (naming off), under a millisecond and over a day', () => {
    expect(() => read('--upstream-idle-timeout', 'soon')).toThrow(
      '--upstream-idle-timeout: "soon" is not a duration such as 15s or 500ms',
    );
    expect(() => read('--upstream-idle-timeout', '0s')).toThrow(/must be more than 0 \(off keeps idle/);
    expect(() => read('--upstream-idle-timeout', '0.2ms')).toThrow(/at least 1ms/);
    expect(() => read('--upstream-idle-timeout', '86401s')).toThrow(/at most 86400s/);
  });

  it('sets every backend cluster of the gateway configuration, and of the compose one', async () => {
    const base = ['envoy-config', '--config', CONFIG, '--session-key', TEST_SESSION_KEY];
    const plain = await cli(...base);
    expect(plain.code).toBe(0);
    const defaults = clusterIdleTimeouts(backendClusters(parse(plain.out) as Node));
    expect(defaults.length).toBeGreaterThan(0);
    expect(new Set(defaults)).toEqual(new Set(['50s']));
    for (const extra of [[], ['--compose']]) {
      const r = await cli(...base, ...extra, '--upstream-idle-timeout', '20s');
      expect(r.code).toBe(0);
      const set = clusterIdleTimeouts(backendClusters(parse(r.out) as Node));
      expect(set).toEqual(defaults.map(() => '20s'));
    }
    const off = await cli(...base, '--upstream-idle-timeout', 'off');
    expect(new Set(clusterIdleTimeouts(backendClusters(parse(off.out) as Node)))).toEqual(new Set(['0s']));
  });

  it("prints it in the attach snippet for the operator's clusters, and leaves the control service's cluster alone", async () => {
    const attach = (...extra: string[]) =>
      cli('envoy-config', '--config', CONFIG, '--mode', 'attach', ...extra);
    const options = (out: string) =>
      ((parse(out) as Node)['cluster_typed_extension_protocol_options'] as Node)[HTTP_OPTIONS] as Node;
    const plain = await attach();
    expect(options(plain.out)).toMatchObject({
      common_http_protocol_options: { idle_timeout: '50s' },
      explicit_http_config: { http_protocol_options: {} },
    });
    expect(plain.out).toContain('And close a backend connection idle for 50s');
    // Envoy ignores a cluster's own protocol fields once it has these options: the snippet says to move them.
    expect(plain.out).toContain('Envoy ignores the protocol fields on the cluster');
    expect(plain.out).toContain('http2_protocol_options under explicit_http_config');
    const set = await attach('--upstream-idle-timeout', '20s');
    expect(options(set.out)['common_http_protocol_options']).toEqual({ idle_timeout: '20s' });
    expect(set.out).toContain('idle for 20s');
    expect(JSON.stringify((parse(set.out) as Node)['clusters'])).not.toContain('idle_timeout');
    const off = await attach('--upstream-idle-timeout', 'off');
    expect(options(off.out)['common_http_protocol_options']).toEqual({ idle_timeout: '0s' });
    expect(off.out).toContain('stay open (--upstream-idle-timeout off)');
  });

  it('is refused where no cluster is generated: an xDS bootstrap, serve in attach mode', async () => {
    const xds = await cli('envoy-config', '--xds', '127.0.0.1:18000', '--upstream-idle-timeout', '20s');
    expect(xds).toMatchObject({ code: 2, err: expect.stringContaining('give it to `serve --xds`') });
    const serve = await cli('serve', '--config', CONFIG, '--upstream-idle-timeout', '20s');
    expect(serve).toMatchObject({
      code: 2,
      err: expect.stringContaining('--upstream-idle-timeout sets the clusters of --xds and --envoy-files'),
    });
    const bad = await cli('dev', '--config', CONFIG, '--upstream-idle-timeout', 'later');
    expect(bad).toMatchObject({ code: 2, err: expect.stringContaining('"later" is not a duration') });
  });

  it('reaches the local gateway of dev', async () => {
    const parsed = parseArgs(
      ['--config', CONFIG, '--session-key', TEST_SESSION_KEY, '--upstream-idle-timeout', '20s'],
      DEV_FLAGS,
    );
    const settings = await devSettings(parsed, { out: () => undefined, err: () => undefined }, 'test');
    expect(settings.upstreamIdleTimeout).toBe('20s');
  });

  it("sets the clusters of serve's Envoy files and of its ADS stream", async () => {
    const files = join(tmp, 'envoy-files');
    const xdsPort = await freePort();
    const serve = new CliProcess([
      ...['serve', '--config', CONFIG, '--session-key', TEST_SESSION_KEY, '--upstream-idle-timeout', '20s'],
      ...['--envoy-files', files, '--xds', `127.0.0.1:${xdsPort}`],
      ...['--ext-proc-address', '127.0.0.1:0', '--admin-port', '0'],
    ]);
    let client: AdsClient | undefined;
    try {
      await serve.waitFor(/ready; ext_proc on/);
      const cds = readdirSync(files, { recursive: true, withFileTypes: true }).find(
        (f) => f.name === 'cds.json',
      );
      expect(cds).toBeDefined();
      const written = JSON.parse(readFileSync(join(cds?.parentPath ?? '', 'cds.json'), 'utf8')) as {
        resources: Node[];
      };
      expect(written.resources.length).toBeGreaterThan(0);
      expect(clusterIdleTimeouts(written.resources)).toEqual(written.resources.map(() => '20s'));

      const definition = new AdsServer({ resources: () => ({}) as never, log: () => undefined });
      client = new AdsClient(`127.0.0.1:${xdsPort}`, definition, 'DeltaAggregatedResources');
      client.call.write({ node: { id: 'idle-test' }, type_url: TYPE_CLUSTER });
      const pushed = await client.next(TYPE_CLUSTER, 0);
      const clusters = (pushed.resources ?? []).map((r) => decodeAny(r.resource as Any));
      expect(clusters.length).toBeGreaterThan(0);
      // Decoded from protobuf: the options are an Any of their own, the duration its seconds.
      const idle = clusters.map((c) => {
        const options = decodeAny((c['typed_extension_protocol_options'] as Node)[HTTP_OPTIONS] as Any);
        return (options['common_http_protocol_options'] as Node)['idle_timeout'];
      });
      expect(idle).toEqual(clusters.map(() => ({ seconds: 20, nanos: 0 })));
    } finally {
      client?.close();
      serve.child.kill('SIGTERM');
      await serve.exit;
    }
  }, 60_000);
});
