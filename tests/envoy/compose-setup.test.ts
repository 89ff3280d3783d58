// docker compose cannot run here (no Docker engine), so this checks everything that can be
// checked without one: the Envoy configuration compose mounts is current and passes
// `envoy --mode validate` with the same relative layout it has in the container; and every
// file, port and service name compose.yaml and the Dockerfile reference exists and agrees.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { run } from '../../extproc/src/cli/main.js';
import { COMPOSE_CONFIG_FILES } from '../../extproc/src/envoy/compose-preset.js';
import { pinnedToolVersions, validateEnvoyConfig } from '../../extproc/src/runtime/envoy-binary.js';
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

const compose = parse(readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8')) as {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
};
const envoyService = compose.services['envoy'] as ComposeService;
const envoyConfigText = readFileSync(join(REPO_ROOT, 'envoy/compose.yaml'), 'utf8');
const envoyConfig = parse(envoyConfigText) as Node;

function collect(v: unknown, visit: (n: Node) => void): void {
  if (Array.isArray(v)) for (const x of v) collect(x, visit);
  else if (typeof v === 'object' && v !== null) {
    visit(v as Node);
    for (const x of Object.values(v)) collect(x, visit);
  }
}

/** `host:container[:mode]` → its parts. */
function volume(spec: string): { source: string; target: string } {
  const [source = '', target = ''] = spec.split(':');
  return { source, target };
}

describe('docker compose setup', () => {
  it('envoy/compose.yaml is what `npm run compose:config` generates now', async () => {
    let out = '';
    const code = await run(
      ['envoy-config', '--compose', ...COMPOSE_CONFIG_FILES.flatMap((f) => ['--config', join(REPO_ROOT, f)])],
      { out: (t) => (out += t.endsWith('\n') ? t : `${t}\n`), err: () => undefined },
    );
    expect(code).toBe(0);
    expect(out, 'envoy/compose.yaml is stale: run `npm run compose:config`').toBe(envoyConfigText);
    const script = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts['compose:config'];
    for (const f of COMPOSE_CONFIG_FILES) expect(script).toContain(`--config ${f}`);
    expect(script).toContain('> envoy/compose.yaml');
  });

  it('envoy/compose.yaml passes envoy --mode validate', () => {
    const r = validateEnvoyConfig('envoy/compose.yaml');
    expect(r.output).toContain('OK');
    expect(r.ok).toBe(true);
  });

  it('runs the pinned Envoy version from the official image', () => {
    expect(envoyService.image).toBe(`envoyproxy/envoy:v${pinnedToolVersions().envoy}`);
  });

  it('mounts the Envoy configuration and the filter where the configuration names them', () => {
    const workdir = envoyService.working_dir ?? '/';
    const command = envoyService.command ?? [];
    const configArg = command[command.indexOf('-c') + 1] ?? '';
    const mounts = (envoyService.volumes ?? []).map(volume);
    const configMount = mounts.find((m) => m.target === `${workdir}/${configArg}`);
    expect(configMount?.source).toBe('./envoy/compose.yaml');
    expect(existsSync(join(REPO_ROOT, configMount?.source ?? 'missing'))).toBe(true);
    const wasmPaths: string[] = [];
    collect(envoyConfig, (n) => {
      const local = n['local'] as Node | undefined;
      if (typeof local?.['filename'] === 'string') wasmPaths.push(local['filename']);
    });
    expect(wasmPaths.length).toBeGreaterThan(0);
    for (const p of new Set(wasmPaths)) {
      const dir = `${workdir}/${p.slice(0, p.lastIndexOf('/'))}`;
      const wasmMount = mounts.find((m) => m.target === dir);
      expect(wasmMount, `a volume at ${dir}`).toBeDefined();
      expect(Object.keys(compose.volumes ?? {})).toContain(wasmMount?.source);
      // The steadfast service fills that volume with the wasm file its image builds.
      const steadfast = compose.services['steadfast'] as ComposeService;
      const fill = (steadfast.volumes ?? []).map(volume).find((m) => m.source === wasmMount?.source);
      expect(steadfast.command?.join(' ')).toContain(`${fill?.target}/${p.slice(p.lastIndexOf('/') + 1)}`);
      // The image user (not root) writes there: the image must create the directory for it.
      const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
      expect(dockerfile).toContain(`chown node:node ${fill?.target}`);
    }
  });

  it('publishes every listener port and the admin port of the Envoy configuration', () => {
    const published = (envoyService.ports ?? []).map((p) => Number(p.split(':').pop()));
    const listeners = ((envoyConfig['static_resources'] as Node)['listeners'] as Node[]).map(
      (l) => ((l['address'] as Node)['socket_address'] as Node)['port_value'] as number,
    );
    const admin = (((envoyConfig['admin'] as Node)['address'] as Node)['socket_address'] as Node)[
      'port_value'
    ];
    expect(listeners.length).toBeGreaterThan(0);
    for (const p of [...listeners, admin]) expect(published).toContain(p);
  });

  it('runs a compose service for every FQDN endpoint, on the port the endpoint names', () => {
    const endpoints = new Map<string, Set<number>>();
    collect(envoyConfig, (n) => {
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
      const listening = Number(service?.command?.at(-1));
      // The wss endpoint (no TLS backend in the demo) may name a port nobody serves.
      const served = [...ports].filter((p) => p !== 8443);
      for (const p of served) expect(listening, `${name}:${p}`).toBe(p);
      expect(envoyService.depends_on?.[name]).toBeDefined();
    }
  });

  it('refers only to services, images, files and scripts that exist', () => {
    const names = Object.keys(compose.services);
    for (const s of Object.values(compose.services)) {
      for (const dep of Object.keys(s.depends_on ?? {})) expect(names).toContain(dep);
      if (s.image === 'steadfast:dev' || s.build !== undefined) {
        expect((compose.services['steadfast'] as ComposeService).build).toBe('.');
        const script = s.command?.find((c) => c.startsWith('scripts/'));
        if (script) expect(existsSync(join(REPO_ROOT, script))).toBe(true);
      }
    }
    expect(existsSync(join(REPO_ROOT, 'Dockerfile'))).toBe(true);
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:20/m);
    for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const source of (m[1] ?? '').split(' ')) {
        expect(existsSync(join(REPO_ROOT, source)), `Dockerfile COPY ${source}`).toBe(true);
      }
    }
    // The control service's admin port, as the healthcheck and the published port say.
    const steadfast = compose.services['steadfast'] as ComposeService & { healthcheck?: { test: string[] } };
    const serve = steadfast.command?.join(' ') ?? '';
    expect(serve).toContain('--admin-port 9902');
    // It serves the status of the same files envoy/compose.yaml was generated from (copied by `COPY examples`).
    for (const f of COMPOSE_CONFIG_FILES) {
      expect(serve).toContain(`--config ${f}`);
      expect(f.startsWith('examples/')).toBe(true);
    }
    expect(dockerfile).toMatch(/^COPY examples \.\/examples$/m);
    expect(steadfast.ports).toContain('127.0.0.1:9902:9902');
    expect(steadfast.healthcheck?.test.join(' ')).toContain('127.0.0.1:9902/healthz');
  });
});
