// What can be checked of the docker compose setup without a Docker engine (`npm run
// test:compose` runs it for real): the Envoy configuration compose's Envoy is fed passes
// `envoy --mode validate` with the layout it has in the container; and every file, volume,
// port and service name compose.yaml and the Dockerfile reference exists and agrees.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { run } from '../../extproc/src/cli/main.js';
import { COMPOSE_CONFIG_DIR } from '../../extproc/src/envoy/compose-preset.js';
import { pinnedToolVersions, validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { REPO_ROOT } from '../support/paths.js';

type Node = Record<string, unknown>;

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  working_dir?: string;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
}

const compose = parse(readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
};
const envoyService = compose.services['envoy'] as ComposeService;
const steadfast = compose.services['steadfast'] as ComposeService & { healthcheck?: { test: string[] } };
const serveCommand = steadfast.command?.join(' ') ?? '';
const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'steadfast-compose-setup-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The configuration compose's Envoy runs, every resource static (`envoy-config --compose`). */
async function composeEnvoyConfig(): Promise<{ text: string; config: Node }> {
  let text = '';
  const code = await run(['envoy-config', '--compose', '--config', join(REPO_ROOT, COMPOSE_CONFIG_DIR)], {
    out: (t) => (text += t.endsWith('\n') ? t : `${t}\n`),
    err: () => undefined,
  });
  expect(code).toBe(0);
  return { text, config: parse(text) as Node };
}

function collect(v: unknown, visit: (n: Node) => void): void {
  if (Array.isArray(v)) for (const x of v) collect(x, visit);
  else if (typeof v === 'object' && v !== null) {
    visit(v as Node);
    for (const x of Object.values(v)) collect(x, visit);
  }
}

/** `host:container[:mode]` → its parts; the host part may be a `${VAR:-default}`. */
function volume(spec: string): { source: string; target: string } {
  const [, source = '', target = ''] = /^(\$\{[^}]*\}|[^:]+):([^:]+)/.exec(spec) ?? [];
  return { source, target };
}

const mounts = (s: ComposeService | undefined): { source: string; target: string }[] =>
  (s?.volumes ?? []).map(volume);

describe('docker compose setup', () => {
  it("mounts examples/compose by default, whose Gateway and routes are the quickstart's", () => {
    const config = mounts(steadfast).find((m) => m.target === '/config');
    expect(config?.source).toBe(`\${STEADFAST_CONFIG:-./${COMPOSE_CONFIG_DIR}}`);
    expect(serveCommand).toContain('--config /config');
    for (const f of ['gateway.yaml', 'routes.yaml']) {
      expect(readFileSync(join(REPO_ROOT, COMPOSE_CONFIG_DIR, f), 'utf8'), `examples/compose/${f}`).toBe(
        readFileSync(join(REPO_ROOT, 'examples/quickstart', f), 'utf8'),
      );
    }
  });

  it('feeds Envoy through a volume both services mount at the same path', () => {
    const dir = /--envoy-files (\S+)/.exec(serveCommand)?.[1] ?? '';
    expect(dir).not.toBe('');
    const written = mounts(steadfast).find((m) => m.target === dir);
    const read = mounts(envoyService).find((m) => m.target === dir);
    expect(written?.source).toBeDefined();
    expect(read?.source).toBe(written?.source);
    expect(Object.keys(compose.volumes ?? {})).toContain(written?.source);
    const command = envoyService.command ?? [];
    expect(command[command.indexOf('-c') + 1]).toBe(`${dir}/envoy.yaml`);
    expect(dockerfile).toMatch(new RegExp(`chown node:node .*${dir}(\\s|$)`, 'm'));
  });

  it("passes envoy --mode validate, as compose's Envoy runs it", async () => {
    const { text } = await composeEnvoyConfig();
    const file = join(tmp, 'compose-envoy.yaml');
    writeFileSync(file, text);
    const r = validateEnvoyConfig(file);
    expect(r.output).toContain('OK');
    expect(r.ok).toBe(true);
  });

  it('runs the pinned Envoy version from the official image', () => {
    expect(envoyService.image).toBe(`envoyproxy/envoy:v${pinnedToolVersions().envoy}`);
  });

  it('mounts the filter where the configuration names it', async () => {
    const { config } = await composeEnvoyConfig();
    const workdir = envoyService.working_dir ?? '/';
    const wasmPaths: string[] = [];
    collect(config, (n) => {
      const local = n['local'] as Node | undefined;
      if (typeof local?.['filename'] === 'string') wasmPaths.push(local['filename']);
    });
    expect(wasmPaths.length).toBeGreaterThan(0);
    for (const p of new Set(wasmPaths)) {
      const dir = `${workdir}/${p.slice(0, p.lastIndexOf('/'))}`;
      const wasmMount = mounts(envoyService).find((m) => m.target === dir);
      expect(wasmMount, `a volume at ${dir}`).toBeDefined();
      expect(Object.keys(compose.volumes ?? {})).toContain(wasmMount?.source);
      // The steadfast service fills that volume with the wasm file its image builds.
      const fill = mounts(steadfast).find((m) => m.source === wasmMount?.source);
      expect(serveCommand).toContain(`${fill?.target}/${p.slice(p.lastIndexOf('/') + 1)}`);
      // The image user (not root) writes there: the image must create the directory for it.
      expect(dockerfile).toMatch(new RegExp(`chown node:node .*${fill?.target}(\\s|$)`, 'm'));
    }
  });

  it('publishes every listener port and the admin port, on loopback only', async () => {
    const { config } = await composeEnvoyConfig();
    const ports = envoyService.ports ?? [];
    for (const p of ports) expect(p).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    const published = ports.map((p) => Number(p.split(':').pop()));
    const listeners = ((config['static_resources'] as Node)['listeners'] as Node[]).map(
      (l) => ((l['address'] as Node)['socket_address'] as Node)['port_value'] as number,
    );
    const admin = (((config['admin'] as Node)['address'] as Node)['socket_address'] as Node)['port_value'];
    expect(listeners.length).toBeGreaterThan(0);
    for (const p of [...listeners, admin]) expect(published).toContain(p);
  });

  it('runs a compose service for every FQDN endpoint, on the port the endpoint names', async () => {
    const { config } = await composeEnvoyConfig();
    const endpoints = new Map<string, Set<number>>();
    collect(config, (n) => {
      const socket = n['socket_address'] as Node | undefined;
      const address = socket?.['address'];
      if (typeof address === 'string' && /^[a-z][a-z0-9-]*$/.test(address)) {
        const ports = endpoints.get(address) ?? new Set<number>();
        ports.add(socket?.['port_value'] as number);
        endpoints.set(address, ports);
      }
    });
    expect(endpoints.size).toBeGreaterThan(0);
    for (const [name, ports] of endpoints) {
      const service = compose.services[name];
      expect(service, `compose service ${name}`).toBeDefined();
      // node scripts/compose-backend.mjs <kind> <name> <port> <attempts-dir>
      const listening = Number(service?.command?.[4]);
      // The wss endpoint (no TLS backend in the demo) may name a port nobody serves.
      const served = [...ports].filter((p) => p !== 8443);
      for (const p of served) expect(listening, `${name}:${p}`).toBe(p);
      expect(envoyService.depends_on?.[name]).toBeDefined();
    }
  });

  it('lets the demo backends count attempts together, through one volume', () => {
    const backends = Object.entries(compose.services).filter(([, s]) =>
      s.command?.includes('scripts/compose-backend.mjs'),
    );
    expect(backends.length).toBeGreaterThan(1);
    const sources = new Set<string>();
    for (const [name, s] of backends) {
      const dir = s.command?.[5] ?? '';
      const shared = mounts(s).find((m) => m.target === dir);
      expect(shared, `${name} mounts its attempts directory ${dir}`).toBeDefined();
      sources.add(shared?.source ?? '');
      expect(dockerfile).toMatch(new RegExp(`chown node:node .*${dir}(\\s|$)`, 'm'));
    }
    expect([...sources]).toHaveLength(1);
    expect(Object.keys(compose.volumes ?? {})).toContain([...sources][0]);
  });

  it('refers only to services, images, files and scripts that exist', () => {
    const names = Object.keys(compose.services);
    for (const s of Object.values(compose.services)) {
      for (const dep of Object.keys(s.depends_on ?? {})) expect(names).toContain(dep);
      if (s.image === 'steadfast:dev' || s.build !== undefined) {
        expect(steadfast.build).toBe('.');
        const script = s.command?.find((c) => c.startsWith('scripts/'));
        if (script) expect(existsSync(join(REPO_ROOT, script))).toBe(true);
      }
    }
    expect(dockerfile).toMatch(/^FROM node:20/m);
    for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const source of (m[1] ?? '').split(' ')) {
        expect(existsSync(join(REPO_ROOT, source)), `Dockerfile COPY ${source}`).toBe(true);
      }
    }
    // The control service's admin port, as the healthcheck and the published port say.
    expect(serveCommand).toContain('--admin-port 9902');
    expect(steadfast.ports).toContain('127.0.0.1:9902:9902');
    expect(steadfast.healthcheck?.test.join(' ')).toContain('127.0.0.1:9902/healthz');
  });
});
