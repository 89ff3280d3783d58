// `docker compose up --build` on the repository's compose.yaml, for real: every command of
// docs/quickstart.md's "What to try" runs as written (bash, curl, grpcurl, node) against the
// stack, then an edit to the mounted Gateway API YAML changes what the running Envoy serves.
// Run by `npm run test:compose` (scripts/compose-test.mjs), which provides the Docker engine.
// Traffic goes only to the ports compose.yaml publishes on 127.0.0.1.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

const MODE = process.env['STEADFAST_COMPOSE_MODE'];
const PROJECT = 'steadfast-compose-test';
const GW = 'http://127.0.0.1:10000';
const ENVOY_ADMIN = 'http://127.0.0.1:9901';
const PUBLISHED = [10000, 10001, 9901, 9902];
const COOKIE_JAR = '/tmp/sf-jar';

const configDir = mkdtempSync(join(tmpdir(), 'steadfast-compose-config-'));

function composeArgs(): string[] {
  const files = ['-f', join(REPO_ROOT, 'compose.yaml')];
  // The private daemon has no NAT: only its image build needs the host's network.
  if (MODE === 'private-daemon')
    files.push('-f', join(REPO_ROOT, 'tests/compose/test-machine.override.yaml'));
  return ['compose', '-p', PROJECT, '--project-directory', REPO_ROOT, ...files];
}

const composeEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  STEADFAST_CONFIG: configDir,
  BUILDKIT_PROGRESS: 'plain',
});

/** Runs `docker compose …`, echoing its output as progress; resolves with the output. */
function compose(args: string[], timeoutMs: number): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('docker', [...composeArgs(), ...args], { cwd: REPO_ROOT, env: composeEnv() });
    let output = '';
    const take = (d: Buffer): void => {
      output += d.toString();
      process.stdout.write(d);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output });
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (${String(last)})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function instanceOf(path: string): Promise<{ status: number; instance: string | null }> {
  const r = await fetch(`${GW}${path}`, { signal: AbortSignal.timeout(5000) });
  await r.arrayBuffer();
  return { status: r.status, instance: r.headers.get('x-backend-instance') };
}

async function envoyUptimeSeconds(): Promise<number> {
  const info = (await (await fetch(`${ENVOY_ADMIN}/server_info`)).json()) as { uptime_current_epoch: string };
  return Number.parseInt(info.uptime_current_epoch, 10);
}

async function controlStatus(): Promise<{ generation: number; lastReloadError: unknown }> {
  return (await (await fetch('http://127.0.0.1:9902/v1/status')).json()) as {
    generation: number;
    lastReloadError: unknown;
  };
}

/** The sh blocks of a section of docs/quickstart.md. */
function shBlocks(section: string): string[] {
  const doc = readFileSync(join(REPO_ROOT, 'docs/quickstart.md'), 'utf8');
  const start = doc.indexOf(`\n## ${section}\n`);
  expect(start, `docs/quickstart.md has a "## ${section}" section`).toBeGreaterThan(0);
  const end = doc.indexOf('\n## ', start + 1);
  const text = doc.slice(start, end === -1 ? undefined : end);
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

/** A block is named by its first command line, without a trailing comment. */
const blockName = (block: string): string =>
  (block.split('\n').find((l) => l.trim() !== '' && !l.startsWith('#')) ?? '').replace(/\s+#.*$/, '').trim();

function runBlock(block: string): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync('bash', ['-c', block], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, GW, PATH: `${join(REPO_ROOT, '.tools/bin')}:${process.env['PATH'] ?? ''}` },
  });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

// Not anchored: curl -i prints a body without a final newline (504's "upstream request timeout").
const statusLines = (out: string): string[] =>
  [...out.matchAll(/HTTP\/[\d.]+ (\d{3}) [A-Z]/g)].map((m) => m[1] ?? '');
const lines = (out: string): string[] => out.split('\n').filter((l) => l.trim() !== '');
const composeEcho = /^echo-[123]$/;

/** What each command of the quickstart must print against the compose stack. */
const CHECKS: Record<string, (out: string) => void> = {
  // The first block only sets GW for the ones after it (runBlock sets it too): it prints nothing.
  'export GW=http://127.0.0.1:10000': (out) => {
    expect(out).toBe('');
  },
  'curl -i "$GW/retry?uuid=$RANDOM&succeedAfter=2&responseCode=503"': (out) => {
    // Two 503s retried on whichever backend containers Envoy chose: they count attempts together.
    expect(statusLines(out)).toEqual(['200']);
    expect(out).toMatch(/^x-backend-attempt: 3\r?$/im);
  },
  'curl -i "$GW/retry?delay=3s"': (out) => {
    expect(statusLines(out)).toEqual(['504', '200']);
  },
  'for i in 1 2 3 4; do': (out) => {
    const seen = lines(out);
    expect(seen).toHaveLength(4);
    expect(seen[0]).toMatch(composeEcho);
    expect(new Set(seen).size).toBe(1);
  },
  "T=$(curl -s -D - -o /dev/null $GW/api | grep -i '^x-shop-session' | cut -d' ' -f2 | tr -d '\\r')": (
    out,
  ) => {
    const seen = lines(out);
    expect(seen).toHaveLength(4);
    expect(seen[0]).toMatch(composeEcho);
    expect(new Set(seen).size).toBe(1);
  },
  "for i in $(seq 100); do curl -s -o /dev/null -w '%header{x-backend-instance}\\n' $GW/split; done | sort | uniq -c":
    (out) => {
      const counts = new Map(
        lines(out).map((l) => {
          const [, n, name] = /^\s*(\d+) (\S+)$/.exec(l) ?? [];
          return [name ?? l, Number(n)];
        }),
      );
      expect([...counts.keys()].sort()).toEqual(['echo-1', 'echo-2', 'echo-3', 'echo-canary']);
      expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(100);
      // 70/30 by locality-weighted round robin, per Envoy worker thread.
      expect(counts.get('echo-canary')).toBeGreaterThanOrEqual(20);
      expect(counts.get('echo-canary')).toBeLessThanOrEqual(40);
    },
  'curl -s $GW/h2c/hello': (out) => {
    expect([...out.matchAll(/"protocol": "HTTP\/2"/g)]).toHaveLength(2);
    expect(out).toMatch(/^echoed: hello$/m);
  },
  '.tools/bin/grpcurl -plaintext 127.0.0.1:10001 list': (out) => {
    expect(out).toMatch(/^steadfast\.test\.v1\.Echo$/m);
    expect(out).toMatch(/^grpc\.health\.v1\.Health$/m);
    expect(out).toMatch(/"attempt": 3/);
  },
  'curl -s http://127.0.0.1:9901/stats | grep steadfast': (out) => {
    expect(lines(out).length).toBeGreaterThan(0);
    for (const l of lines(out)) expect(l).toMatch(/steadfast.*: \d+$/);
  },
};

describe('docker compose up --build: the quickstart in containers', () => {
  let up = { code: 1, output: '' };
  let upSeconds = 0;

  beforeAll(async () => {
    if (MODE === undefined) throw new Error('run `npm run test:compose`: it provides the Docker engine');
    for (const port of PUBLISHED) {
      if (!(await portFree(port))) throw new Error(`127.0.0.1:${port} is in use: compose.yaml publishes it`);
    }
    // The mounted configuration: a copy of examples/compose that the last test edits.
    cpSync(join(REPO_ROOT, 'examples/compose'), configDir, { recursive: true });
    chmodSync(configDir, 0o755);
    for (const f of readdirSync(configDir)) chmodSync(join(configDir, f), 0o644);
    rmSync(COOKIE_JAR, { force: true });
    const t0 = Date.now();
    up = await compose(['up', '--build', '--detach', '--wait', '--wait-timeout', '300'], 25 * 60_000);
    upSeconds = (Date.now() - t0) / 1000;
    process.stdout.write(`test:compose: docker compose up --build took ${upSeconds.toFixed(0)} s\n`);
    if (up.code !== 0) throw new Error(`docker compose up failed (exit ${up.code})`);
    // Envoy warms its DNS clusters after the containers run: wait for the first routed answer.
    await until('the gateway answers /split', 60_000, async () =>
      (await instanceOf('/split')).status === 200 ? true : undefined,
    );
  });

  afterAll(async () => {
    rmSync(configDir, { recursive: true, force: true });
    if (MODE === undefined) return;
    if (up.code !== 0 || process.exitCode) await compose(['logs', '--no-color', '--tail', '80'], 60_000);
    await compose(['down', '--volumes', '--remove-orphans', '--timeout', '10'], 5 * 60_000);
    rmSync(COOKIE_JAR, { force: true });
  });

  it('builds the image without engine warnings', () => {
    expect(up.code).toBe(0);
    expect(up.output).not.toMatch(/EBADENGINE/);
  });

  it('runs steadfast from the image it built: --version, and validate on a mounted directory', () => {
    // No network: the private daemon has no bridge, and neither command needs one.
    const docker = (args: readonly string[]) =>
      spawnSync('docker', ['run', '--rm', '--network', 'none', ...args], {
        env: composeEnv(),
        encoding: 'utf8',
        timeout: 60_000,
      });
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const v = docker(['steadfast:dev', '--version']);
    expect(v.status, v.stdout + v.stderr).toBe(0);
    expect(v.stdout.trim()).toBe(`steadfast ${version}`);
    const validate = docker(['-v', `${configDir}:/config:ro`, 'steadfast:dev', 'validate', '/config']);
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).toMatch(/all accepted and resolved/);
  });

  it('checks every command of the quickstart, and the quickstart has no command unchecked', () => {
    const names = shBlocks('What to try').map(blockName);
    expect(names.sort()).toEqual(Object.keys(CHECKS).sort());
  });

  for (const [name, check] of Object.entries(CHECKS)) {
    it(`quickstart: ${name}`, () => {
      const block = shBlocks('What to try').find((b) => blockName(b) === name);
      expect(block, `docs/quickstart.md still has ${name}`).toBeDefined();
      const r = runBlock(block ?? '');
      try {
        check(r.stdout);
      } catch (e) {
        throw new Error(`${(e as Error).message}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
      }
    });
  }

  it('serves an edit of the mounted Gateway API YAML without restarting Envoy', async () => {
    const uptimeBefore = await envoyUptimeSeconds();
    const before = await controlStatus();
    const routes = join(configDir, 'routes.yaml');
    const text = readFileSync(routes, 'utf8');
    const edited = text
      .replace('value: /split }', 'value: /moved }')
      .replace(/(- name: echo\n\s+port: 80\n\s+weight: )70/, '$10');
    expect(edited).not.toBe(text);
    const t0 = Date.now();
    writeFileSync(routes, edited);
    // The new route, all of it to the canary (weight 0 for echo), and the old path gone.
    await until('/moved reaches the canary only', 30_000, async () => {
      for (let i = 0; i < 10; i++) {
        const r = await instanceOf('/moved');
        if (r.status !== 200 || r.instance !== 'echo-canary') return undefined;
      }
      return true;
    });
    expect((await instanceOf('/split')).status).toBe(404);
    const seconds = (Date.now() - t0) / 1000;
    process.stdout.write(`test:compose: the edit was served after ${seconds.toFixed(1)} s\n`);
    expect(await envoyUptimeSeconds()).toBeGreaterThanOrEqual(uptimeBefore);
    const after = await controlStatus();
    expect(after.generation).toBeGreaterThan(before.generation);
    expect(after.lastReloadError).toBeNull();
  });
});
