// ServedConfig: what `steadfast serve --config` answers from — readiness, reload metrics,
// and the lookup ext_proc calls (matched, unmatched, and rules that fail closed).
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requestAttributes } from '../../extproc/src/server/grpc/request-attributes.js';
import { ServiceMetrics } from '../../extproc/src/server/metrics.js';
import { ServedConfig } from '../../extproc/src/server/served-config.js';
import { baseObjectsYaml, routesYaml } from '../e2e/support/attach-config.js';
import { FileProvider } from '../../extproc/src/provider/file.js';

const dirs: string[] = [];
const served: ServedConfig[] = [];

afterEach(() => {
  for (const s of served.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-served-'));
  dirs.push(dir);
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, `.${name}`), text);
    renameSync(join(dir, `.${name}`), join(dir, name));
  };
  for (const [n, t] of Object.entries(files)) write(n, t);
  const metrics = new ServiceMetrics();
  const config = new ServedConfig({ provider: new FileProvider({ paths: [dir] }), metrics, debounceMs: 20 });
  served.push(config);
  return { dir, write, metrics, config };
}

const request = (authority: string, path: string) =>
  requestAttributes({
    headers: {
      headers: [
        { key: ':method', value: 'GET' },
        { key: ':authority', value: authority },
        { key: ':path', value: path },
      ],
    },
  });

const BASE = baseObjectsYaml([{ address: '127.0.0.2' }], 8080);
const ROUTES = routesYaml([
  { name: 'shop', hostnames: ['shop.example'], rules: [{ path: '/cart', retry: { attempts: 2 } }] },
]);

describe('ServedConfig', () => {
  it('does its work for while the first configuration compiles once, with the first compile, and never again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-served-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'base.yaml'), BASE);
    writeFileSync(join(dir, 'routes.yaml'), ROUTES);
    let calls = 0;
    const config = new ServedConfig({
      provider: new FileProvider({ paths: [dir] }),
      metrics: new ServiceMetrics(),
      debounceMs: 20,
      whileCompiling: () => {
        calls++;
        // A failure here is only a lost head start: the configuration still loads.
        throw new Error('no protos here');
      },
    });
    served.push(config);
    expect(calls).toBe(0);
    await config.start();
    expect(calls).toBe(1);
    expect(config.lookup(request('shop.example', '/cart'))).toMatchObject({ result: 'matched' });
    writeFileSync(join(dir, 'routes.yaml'), ROUTES.replace('/cart', '/basket'));
    await config.reload();
    expect(config.lookup(request('shop.example', '/basket'))).toMatchObject({ result: 'matched' });
    expect(calls).toBe(1);
  });

  it('logs a backend without ready endpoints as a warning, once per appearance', async () => {
    const lines: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-served-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'base.yaml'), baseObjectsYaml([], 8080));
    writeFileSync(join(dir, 'routes.yaml'), ROUTES);
    const config = new ServedConfig({
      provider: new FileProvider({ paths: [dir] }),
      metrics: new ServiceMetrics(),
      debounceMs: 20,
      log: (l) => lines.push(l),
    });
    served.push(config);
    await config.start();
    expect(lines.filter((l) => l.startsWith('warning: '))).toEqual([
      expect.stringMatching(
        /^warning: routes\.yaml:\d+ HTTPRoute default\/shop spec\.rules\[0\]\.backendRefs\[0\]: Service default\/\S+ port \d+ has no endpoints/,
      ),
    ]);
    expect(lines[0]).toMatch(/, 1 warning\(s\)$/);
    await config.reload();
    expect(lines.filter((l) => l.startsWith('warning: '))).toHaveLength(1);
  });

  it('says when a reload changes the headers the rules match on (the attach snippet forwards only those)', async () => {
    const lines: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-served-'));
    dirs.push(dir);
    const routes = (headers?: Record<string, string>) =>
      routesYaml([
        {
          name: 'shop',
          hostnames: ['shop.example'],
          rules: [{ path: '/cart', ...(headers ? { headers } : {}) }],
        },
      ]);
    writeFileSync(join(dir, 'base.yaml'), BASE);
    writeFileSync(join(dir, 'routes.yaml'), routes());
    const config = new ServedConfig({
      provider: new FileProvider({ paths: [dir] }),
      metrics: new ServiceMetrics(),
      debounceMs: 20,
      log: (l) => lines.push(l),
    });
    served.push(config);
    await config.start();
    const said = () => lines.filter((l) => l.includes('match on request headers'));
    expect(said()).toEqual([]);
    expect(config.headersRead()).toEqual(new Set());
    writeFileSync(join(dir, 'routes.yaml'), routes({ 'X-Env': 'canary' }));
    await config.reload();
    expect(said()).toEqual([
      expect.stringMatching(
        /now match on request headers \[x-env\] \(before: \[\]\).*envoy-config --mode attach/,
      ),
    ]);
    expect(config.headersRead()).toEqual(new Set(['x-env']));
    await config.reload();
    expect(said()).toHaveLength(1);
  });

  it('is not ready before the first load, then ready and resolving', async () => {
    const { config, metrics } = setup({ 'base.yaml': BASE, 'routes.yaml': ROUTES });
    expect(config.notReadyReason()).toBe('no configuration loaded yet');
    expect(config.lookup(request('shop.example', '/cart'))).toEqual({ result: 'unmatched' });
    await config.start();
    expect(config.notReadyReason()).toBeNull();
    expect(config.lookup(request('shop.example', '/cart/1'))).toMatchObject({
      result: 'matched',
      token: expect.stringMatching(/^sf1;id=httproute\/default\/shop\/rule\/0;k=h;ra=2/),
    });
    expect(config.lookup(request('other.example', '/cart'))).toEqual({
      result: 'unmatched',
      listener: 'single_port',
      scope: expect.stringMatching(/^sc1;g=[0-9a-f]{16};l=1$/),
    });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^steadfast_config_reloads_total 1$/m);
    expect(text).toMatch(/^steadfast_config_generation 1$/m);
    expect(text).toMatch(/^steadfast_config_matches 1$/m);
  });

  it('stays not ready while the first load has broken files, and becomes ready once they are fixed', async () => {
    const { config, write, metrics } = setup({ 'base.yaml': BASE, 'routes.yaml': 'kind: [oops\n' });
    await config.start();
    expect(config.notReadyReason()).toMatch(/^the configuration did not load: routes\.yaml:\d+: /);
    expect(await metrics.registry.metrics()).toMatch(/^steadfast_config_reload_errors_total 1$/m);
    write('routes.yaml', ROUTES);
    await config.reload();
    expect(config.notReadyReason()).toBeNull();
    expect(config.generation).toBe(2);
  });

  it('waits for a configuration directory that does not exist yet, then loads and watches it', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'steadfast-served-'));
    dirs.push(parent);
    const dir = join(parent, 'later');
    const config = new ServedConfig({
      provider: new FileProvider({ paths: [dir], retryMs: 50 }),
      metrics: new ServiceMetrics(),
      debounceMs: 20,
    });
    served.push(config);
    await config.start();
    expect(config.notReadyReason()).toMatch(/did not load: .*later/);
    mkdirSync(dir);
    writeFileSync(join(dir, 'base.yaml'), BASE);
    writeFileSync(join(dir, 'routes.yaml'), ROUTES);
    for (let i = 0; i < 100 && config.notReadyReason() !== null; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(config.notReadyReason()).toBeNull();
    expect(config.lookup(request('shop.example', '/cart'))).toMatchObject({ result: 'matched' });
  });

  it('logs a failed reload as one line per error, file:line first, and not again until the files change', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-served-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'base.yaml'), BASE);
    writeFileSync(join(dir, 'routes.yaml'), ROUTES);
    const lines: string[] = [];
    const metrics = new ServiceMetrics();
    const config = new ServedConfig({
      provider: new FileProvider({ paths: [dir] }),
      metrics,
      log: (l) => lines.push(l),
    });
    served.push(config);
    await config.start();
    lines.length = 0;
    writeFileSync(join(dir, 'routes.yaml'), 'kind: [oops\n');
    await config.reload();
    await config.reload();
    expect(lines).toEqual([
      expect.stringMatching(/^routes\.yaml:\d+: [^\n]+ \(kept configuration generation 1\)$/),
    ]);
    expect(await metrics.registry.metrics()).toMatch(/^steadfast_config_reload_errors_total 1$/m);
    writeFileSync(join(dir, 'routes.yaml'), 'kind: [oops again\n');
    await config.reload();
    expect(lines).toHaveLength(2);
  });

  it('gives a rule that fails closed no policy, counted as invalid', async () => {
    const broken = routesYaml([
      { name: 'shop', hostnames: ['shop.example'], rules: [{ path: '/cart', retry: { attempts: 2 } }] },
    ]).replace('backendRefs: [{ name: app, port: 80 }]', 'backendRefs: [{ name: missing, port: 80 }]');
    const { config } = setup({ 'base.yaml': BASE, 'routes.yaml': broken });
    await config.start();
    expect(config.lookup(request('shop.example', '/cart'))).toEqual({
      result: 'invalid',
      listener: 'single_port',
    });
  });

  it('hands every swap to listeners (the --workers primary forwards it)', async () => {
    const { config, write } = setup({ 'base.yaml': BASE, 'routes.yaml': ROUTES });
    const seen: number[] = [];
    config.onSwap((_s, generation) => seen.push(generation));
    await config.start();
    write('routes.yaml', ROUTES.replace('attempts: 2', 'attempts: 4'));
    await config.reload();
    expect(seen).toEqual([1, 2]);
    expect(config.snapshot?.table.routes[0]?.rules[0]?.token).toContain(';ra=4');
  });
});
