// Without a Docker engine, the steadfast image's final stage is rebuilt as a directory: every
// `COPY` of the Dockerfile's last stage, taken from this (built) checkout, into a temporary
// /steadfast. Then the commands compose.yaml runs in that image are started there, on free
// ports: the control service and each kind of demo backend must come up from those files alone.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../support/paths.js';
import { freePort } from './support/gateway-fixture.js';

interface Copy {
  readonly sources: string[];
  readonly dest: string;
}

/** The COPY instructions of the Dockerfile's last stage, sources relative to the repository. */
function finalStageCopies(dockerfile: string): Copy[] {
  const stages = dockerfile.split(/^FROM /m);
  const last = stages[stages.length - 1] ?? '';
  const copies: Copy[] = [];
  for (const m of last.matchAll(/^COPY (--from=\S+ )?(.+)$/gm)) {
    const parts = (m[2] ?? '').trim().split(/\s+/);
    const dest = parts.pop() ?? '';
    copies.push({
      sources: parts.map((p) => (m[1] ? p.replace(/^\/steadfast\//, '') : p)),
      dest,
    });
  }
  return copies;
}

function assemble(root: string, copies: readonly Copy[]): void {
  for (const { sources, dest } of copies) {
    for (const source of sources) {
      const from = join(REPO_ROOT, source);
      if (!existsSync(from)) throw new Error(`Dockerfile COPY ${source}: missing (is the checkout built?)`);
      const to = dest.endsWith('/') ? join(root, dest, basename(source)) : join(root, dest);
      mkdirSync(dirname(to), { recursive: true });
      // node_modules is large: a link stands in for the copy.
      if (source === 'node_modules') symlinkSync(from, to);
      else cpSync(from, to, { recursive: true });
    }
  }
}

function startIn(
  cwd: string,
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; output: string }> {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${args.join(' ')}\n${output}`)), 20_000);
    const onData = (d: Buffer): void => {
      output += d.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve({ child, output });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${args.join(' ')}\n${output}`));
    });
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

const compose = parse(readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, { command?: string[] }>;
};

describe('the steadfast image, rebuilt as a directory from the Dockerfile', () => {
  const root = mkdtempSync(join(tmpdir(), 'steadfast-image-'));

  beforeAll(() => assemble(root, finalStageCopies(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'))));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("runs the control service with compose's command, writing Envoy's files", async () => {
    const shell = compose.services['steadfast']?.command?.at(-1) ?? '';
    const serve = /exec (node bin\/steadfast\.js serve .*)$/s.exec(shell)?.[1]?.split(/\s+/) ?? [];
    expect(serve.slice(0, 3)).toEqual(['node', 'bin/steadfast.js', 'serve']);
    const port = await freePort();
    const envoyFiles = join(root, 'shared-envoy');
    // compose mounts examples/compose at /config (by default) and a volume at /shared/envoy.
    const args = serve
      .slice(1)
      .map((a) => a.replace('0.0.0.0:50051', `127.0.0.1:${port}`).replace(/^0\.0\.0\.0$/, '127.0.0.1'))
      .map((a) => (a === '9902' ? '0' : a))
      .map((a) => (a === '/config' ? join(root, 'examples/compose') : a))
      .map((a) => (a === '/shared/envoy' ? envoyFiles : a));
    const { child, output } = await startIn(root, args, /steadfast serve: ready/);
    expect(output).toMatch(/configuration generation 1: 3 route\(s\)/);
    const bootstrap = parse(readFileSync(join(envoyFiles, 'envoy.yaml'), 'utf8')) as {
      dynamic_resources: { lds_config: { path_config_source: { path: string } } };
    };
    expect(bootstrap.dynamic_resources.lds_config.path_config_source.path).toBe(
      join(envoyFiles, 'lds', 'lds.json'),
    );
    expect(readFileSync(join(envoyFiles, 'cds', 'cds.json'), 'utf8')).toContain('"address":"echo-canary"');
    expect(await stop(child)).toBe(0);
  });

  it.each(['echo-1', 'grpc-echo'])('runs the demo backend %s with its compose command', async (name) => {
    // node scripts/compose-backend.mjs <kind> <name> <port> <attempts-dir>
    const command = compose.services[name]?.command ?? [];
    const port = await freePort();
    const args = [...command.slice(1, 4), String(port), join(root, 'shared-attempts')];
    const { child } = await startIn(root, args, /"backend":/);
    // Through the forwarder: an HTTP answer from echo, a TCP connection for gRPC.
    const reply =
      name === 'grpc-echo'
        ? await new Promise<boolean>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => {
              socket.end();
              resolve(true);
            });
            socket.on('error', () => resolve(false));
          })
        : (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
    expect(reply).toBe(true);
    expect(await stop(child)).toBe(0);
  });
});
