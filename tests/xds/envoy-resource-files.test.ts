// The writer that feeds a running Envoy: every file lands by rename (no half-written file is
// ever in place), clusters that routes may still use stay until the routes have moved, and
// route files of listeners that are gone are removed.
import { mkdtempSync, readFileSync, readdirSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  CDS_FILE,
  LDS_FILE,
  fileBootstrap,
  resourceFiles,
  resourcePath,
} from '../../extproc/src/envoy/file-resources.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { EnvoyResourceFiles, type WrittenFiles } from '../../extproc/src/xds/envoy-resource-files.js';
import { waitUntil } from '../support/wait-until.js';

function files(clusters: string[], routeFiles: string[]): WrittenFiles {
  return {
    clusters: new Map(clusters.map((name) => [name, { name }])),
    routes: new Map(routeFiles.map((f) => [f, `resources: [{ name: ${f} }]\n`])),
    secrets: new Map(),
    listeners: `resources: [{ name: listener }]\n`,
    warnings: [],
  };
}

function clusterNames(dir: string): string[] {
  const doc = parse(readFileSync(join(dir, resourcePath(CDS_FILE)), 'utf8')) as {
    resources: { name: string }[];
  };
  return doc.resources.map((r) => r.name).sort();
}

describe('EnvoyResourceFiles', () => {
  const dirs: string[] = [];
  const newDir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'steadfast-xds-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('writes clusters, then routes, then listeners, each by rename into place', async () => {
    const dir = newDir();
    const events: string[] = [];
    const watcher = watch(dir, { recursive: true }, (type, name) => {
      if (name && !name.endsWith('.tmp') && type === 'rename') events.push(name);
    });
    await new EnvoyResourceFiles(dir, { settleMs: 10 }).write(files(['a', 'b'], ['rds-x.json']), '1');
    // The listeners go last: once their rename is reported, every earlier one was.
    await waitUntil('the listeners file renamed into place', () => events.includes(resourcePath(LDS_FILE)));
    watcher.close();
    const order = [...new Set(events)];
    const at = (file: string) => order.indexOf(resourcePath(file));
    expect(at(CDS_FILE)).toBeGreaterThanOrEqual(0);
    expect(at(CDS_FILE)).toBeLessThan(at('rds-x.json'));
    expect(at('rds-x.json')).toBeLessThan(at(LDS_FILE));
    expect((readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(clusterNames(dir)).toEqual(['a', 'b']);
  });

  it('keeps removed clusters until the routes moved, then prunes them and stale route files', async () => {
    const dir = newDir();
    // The writer waits for new clusters to be active before it writes the routes; the test
    // holds that moment open (as an Envoy still warming would) and looks at the files then.
    let warming!: () => void;
    let activate!: () => void;
    const atWarming = new Promise<void>((r) => (warming = r));
    const writer = new EnvoyResourceFiles(dir, {
      settleMs: 150,
      untilClustersActive: () => {
        warming();
        return new Promise<void>((r) => (activate = r));
      },
    });
    await writer.write(files(['a', 'b'], ['rds-x.json', 'rds-y.json']), '1');
    const second = writer.write(files(['b', 'c'], ['rds-x.json']), '2');
    await atWarming;
    // While the new cluster warms, the old one is still there next to it.
    expect(clusterNames(dir)).toEqual(['a', 'b', 'c']);
    activate();
    await second;
    expect(clusterNames(dir)).toEqual(['b', 'c']);
    expect(readdirSync(dir).sort()).toEqual(['cds', 'lds', 'rds-x']);
    expect(readdirSync(join(dir, 'rds-x'))).toEqual(['rds-x.json']);
  });

  it('serializes writes: the last configuration written wins', async () => {
    const dir = newDir();
    const writer = new EnvoyResourceFiles(dir, { settleMs: 5 });
    await writer.write(files(['a'], ['rds-x.json']), '1');
    await Promise.all([
      writer.write(files(['b'], ['rds-x.json']), '2'),
      writer.write(files(['c'], ['rds-x.json']), '3'),
    ]);
    expect(clusterNames(dir)).toEqual(['c']);
  });
});

describe('the bootstrap of the file-fed Envoy', () => {
  it('watches each resource file in a folder of its own, so a cluster change does not re-read the routes', () => {
    const snap = compileSnapshot([
      {
        path: 'g.yaml',
        text: `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 8080 }]
`,
      },
    ]);
    const options = { wasmPath: 'w.wasm', sessionKeys: [] };
    const boot = fileBootstrap('/d', options) as {
      dynamic_resources: Record<
        string,
        { path_config_source: { path: string; watched_directory: { path: string } } }
      >;
    };
    const listeners = JSON.parse(resourceFiles(snap.ir, options, '/d', '1').listeners) as {
      resources: {
        filter_chains: {
          filters: {
            typed_config: {
              rds: {
                config_source: { path_config_source: { path: string; watched_directory: { path: string } } };
              };
            };
          }[];
        }[];
      }[];
    };
    const rds =
      listeners.resources[0]?.filter_chains[0]?.filters[0]?.typed_config.rds.config_source.path_config_source;
    const sources = [
      boot.dynamic_resources['cds_config']?.path_config_source,
      boot.dynamic_resources['lds_config']?.path_config_source,
      rds,
    ];
    expect(sources.map((p) => p?.path)).toEqual([
      '/d/cds/cds.json',
      '/d/lds/lds.json',
      '/d/rds-gateway_default_gw_listener_http/rds-gateway_default_gw_listener_http.pb',
    ]);
    const watched = sources.map((p) => p?.watched_directory.path);
    expect(watched).toEqual(['/d/cds', '/d/lds', '/d/rds-gateway_default_gw_listener_http']);
  });
});
