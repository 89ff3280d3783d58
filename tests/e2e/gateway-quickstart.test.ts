// `npm start` as a newcomer meets it: `steadfast quickstart` in its own process, then every
// command it prints, run as printed (bash, curl, grpcurl, node), with what each should show.
// It runs examples/quickstart as shipped, but on ports picked free for this run: a copy of
// the example with its Gateway listener ports (10000, 10001) and demo backend ports (8080,
// 8081, 50061, 8443) replaced, so a run never collides with anything else on the machine.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, steadfastBin } from '../support/paths.js';
import { freePort } from './support/free-port.js';

const EXAMPLE = join(REPO_ROOT, 'examples', 'quickstart');
/** Every loopback address the example's demo backends listen on. */
const BACKEND_ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];

function bindable(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, address, () => s.close(() => resolve(true)));
  });
}

/** A port free on every demo backend address a moment ago. */
async function freeOnAll(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const ok = await Promise.all(BACKEND_ADDRESSES.map((a) => bindable(a, port)));
    if (ok.every(Boolean)) return port;
  }
}

/** The example, copied with `port: N` replaced for each port in `ports`. */
function exampleOnPorts(ports: ReadonlyMap<number, number>): string {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-quickstart-'));
  for (const file of readdirSync(EXAMPLE).filter((f) => f.endsWith('.yaml'))) {
    const text = readFileSync(join(EXAMPLE, file), 'utf8').replace(/\bport: (\d+)\b/g, (whole, n: string) =>
      ports.has(Number(n)) ? `port: ${ports.get(Number(n))}` : whole,
    );
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

// The gateway's listener URLs come in port order, whatever the ports picked for this run.
const READY =
  /^steadfast quickstart: ready; gateway ((?:\S+ )*\S+); Envoy admin (\S+); control service admin (\S+)$/m;

/** The printed commands: indented lines that are not comments. */
function printedCommands(output: string): string[] {
  const start = output.indexOf('Try it');
  return output
    .slice(start)
    .split('\n')
    .filter((l) => l.startsWith('  ') && !l.trim().startsWith('#') && l.trim() !== '')
    .map((l) => l.trim());
}

function bash(script: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      'bash',
      ['-c', script],
      { cwd: REPO_ROOT, timeout: 60_000, maxBuffer: 8 << 20 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
}

describe('npm start (steadfast quickstart)', () => {
  let child: ChildProcess;
  let output = '';
  let exit: Promise<number>;
  const sections = new Map<string, string>();
  const ports = new Map<number, number>();
  let configDir = '';
  let httpsPort = 0;

  beforeAll(async () => {
    for (const p of [10000, 10001, 8080, 8081, 50061, 8443]) ports.set(p, await freeOnAll());
    configDir = exampleOnPorts(ports);
    httpsPort = await freeOnAll();
    child = spawn(
      process.execPath,
      [
        steadfastBin(),
        'quickstart',
        '--config',
        configDir,
        '--https-port',
        String(httpsPort),
        '--admin-port',
        '0',
        '--envoy-admin-port',
        '0',
      ],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    exit = new Promise((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`quickstart not ready:\n${output}`)), 45_000);
      const onData = (d: Buffer): void => {
        output += d.toString();
        if (READY.test(output) && output.includes('Ctrl-C stops everything')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`quickstart exited with ${code}:\n${output}`));
      });
    });
    // One script, so a variable one command sets (the header session token) reaches the next.
    const commands = printedCommands(output);
    const script = [
      'rm -f /tmp/sf-jar',
      ...commands.flatMap((c, i) => [`printf '\\n=== ${i}\\n'`, `${c} 2>&1 || true`]),
    ].join('\n');
    const out = await bash(script);
    for (const part of out
      .split(/^=== (\d+)$/m)
      .slice(1)
      .reduce<string[][]>((acc, x, i, all) => {
        if (i % 2 === 0) acc.push([commands[Number(x)] ?? x, all[i + 1] ?? '']);
        return acc;
      }, [])) {
      sections.set(part[0] as string, part[1] as string);
    }
  }, 120_000);

  afterAll(async () => {
    if (child?.exitCode === null) child.kill('SIGTERM');
    await exit;
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  const outputOf = (pattern: RegExp): string => {
    const key = [...sections.keys()].find((k) => pattern.test(k));
    if (key === undefined)
      throw new Error(`no printed command matches ${pattern}:\n${[...sections.keys()].join('\n')}`);
    return sections.get(key) ?? '';
  };

  it('prints one ready line, the backends it started, and the commands', () => {
    expect(output.match(new RegExp(READY.source, 'gm'))).toHaveLength(1);
    expect(output).toMatch(new RegExp(`backends: .*echo-2 127\\.0\\.0\\.2:${ports.get(8080)}[,\\s]`));
    const gateway = READY.exec(output);
    expect(gateway?.[1]?.split(' ').sort()).toEqual(
      [
        `http://127.0.0.1:${ports.get(10000)}`,
        `http://127.0.0.1:${ports.get(10001)}`,
        `https://127.0.0.1:${httpsPort}`,
      ].sort(),
    );
    // No --session-key-file: an ephemeral key, and a warning that says so.
    expect(output).toMatch(/warning: no --session-key-file; using an ephemeral session key/);
    expect(sections.size).toBeGreaterThanOrEqual(12);
  });

  it('retries: two 503s, then 200 on the third attempt', () => {
    const out = outputOf(/succeedAfter=2&responseCode=503/);
    expect(out).toMatch(/^HTTP\/1\.1 200/m);
    expect(out).toMatch(/^x-backend-attempt: 3/m);
  });

  it('timeouts: 504 when every try is too slow, 200 when only the first is', () => {
    expect(outputOf(/delay=3s/)).toMatch(/^HTTP\/1\.1 504/m);
    expect(outputOf(/delayRetry=800ms/)).toMatch(/^HTTP\/1\.1 200/m);
  });

  it('cookie and header sessions: one instance answers every time', () => {
    for (const pattern of [/\/cart/, /x-shop-session: \$T/]) {
      const instances = outputOf(pattern).trim().split('\n');
      expect(instances).toHaveLength(4);
      expect(new Set(instances).size).toBe(1);
      expect(instances[0]).toMatch(/^echo-\d$/);
    }
  });

  it('the split: about 70 to echo, 30 to echo-canary', () => {
    const counts = Object.fromEntries(
      outputOf(/\/split/)
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .map(([n, who]) => [who, Number(n)]),
    ) as Record<string, number>;
    const echo = (counts['echo-2'] ?? 0) + (counts['echo-3'] ?? 0) + (counts['echo-4'] ?? 0);
    expect(echo + (counts['echo-canary-2'] ?? 0)).toBe(100);
    expect(Math.abs(echo - 70)).toBeLessThanOrEqual(5);
  });

  it('HTTPS with the development certificate made at start: HTTP/2, and a Secure session cookie', () => {
    const out = outputOf(/--cacert/);
    expect(out).toMatch(/^HTTP\/2 200/m);
    expect(out).toMatch(/^set-cookie: shop-session=[^;]+;.*; Secure/im);
  });

  it('h2c backend from HTTP/1.1 and h2c clients, WebSocket, gRPC with reflection', () => {
    expect(outputOf(/^curl -s http:\/\/\S+\/h2c\/hello$/)).toContain('"protocol": "HTTP/2"');
    expect(outputOf(/http2-prior-knowledge/)).toContain('"protocol": "HTTP/2"');
    expect(outputOf(/require\('ws'\)/)).toContain('echoed: hello');
    expect(outputOf(/grpcurl .* list$/)).toContain('steadfast.test.v1.Echo');
    expect(outputOf(/steadfast\.test\.v1\.Echo\/Echo$/)).toMatch(/"attempt": 3/);
    expect(outputOf(/\/stats \| grep steadfast/)).toContain('steadfast');
  });

  it('stops everything and exits 0 on SIGTERM', async () => {
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(output).toContain('steadfast quickstart: stopped');
  });
});
