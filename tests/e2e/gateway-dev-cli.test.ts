// `steadfast dev` and `steadfast envoy-config` as a user runs them: the built CLI in its own
// process, one ready line with the URLs, traffic through the Envoy it started, and a clean
// exit 0 on SIGTERM that takes Envoy with it.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { REPO_ROOT, steadfastBin } from '../support/paths.js';
import { curl } from './support/curl.js';
import { ConfigDir, freePort, gatewayYaml, serviceYaml } from './support/gateway-fixture.js';

const READY = /^steadfast dev: ready; gateway (\S+); Envoy admin (\S+); control service admin (\S+)$/m;

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [steadfastBin(), ...args], { cwd: REPO_ROOT }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe('steadfast dev', () => {
  const config = new ConfigDir();
  const keyDir = mkdtempSync(join(tmpdir(), 'steadfast-keys-'));
  let backend: RunningBackend;
  let child: ChildProcess;
  let output = '';
  let exit: Promise<number>;
  let ready: RegExpExecArray;

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.0.2', name: 'dev-backend' });
    const port = await freePort();
    config.write('gateway.yaml', gatewayYaml(port));
    config.write('services.yaml', serviceYaml('web', [backend]));
    config.write(
      'routes.yaml',
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: web }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - retry: { codes: [503], attempts: 2 }
      backendRefs: [{ name: web, port: 80 }]
`,
    );
    const keys = join(keyDir, 'keys');
    writeFileSync(keys, `# test key\n${Buffer.alloc(32, 3).toString('base64')}\n`);
    child = spawn(
      process.execPath,
      [
        steadfastBin(),
        'dev',
        '--config',
        config.path,
        '--admin-port',
        '0',
        '--envoy-admin-port',
        '0',
        '--session-key-file',
        keys,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    exit = new Promise((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
    ready = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`steadfast dev not ready:\n${output}`)), 30_000);
      const onData = (d: Buffer): void => {
        output += d.toString();
        const m = READY.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(m);
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`steadfast dev exited with ${code}:\n${output}`));
      });
    });
  });

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await backend?.close();
    config.remove();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('prints one ready line with the gateway, Envoy admin and control service URLs', () => {
    expect(output.match(new RegExp(READY.source, 'gm'))).toHaveLength(1);
    expect(ready[1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(output).not.toContain('ephemeral');
  });

  it('serves the configuration through Envoy, with the rule policy in route metadata', async () => {
    const res = await curl(`${ready[1]}/hello`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-backend-instance')).toEqual(['dev-backend']);
    const health = await fetch(`${ready[3]}/healthz`);
    expect(health.status).toBe(200);
  });

  it('stops Envoy and exits 0 on SIGTERM', async () => {
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(output).toContain('steadfast dev: stopped');
    await expect(fetch(`${ready[2]}/ready`)).rejects.toThrow();
  });
});

describe('steadfast dev and envoy-config: usage', () => {
  it('refuses a session key file without keys (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-keys-'));
    writeFileSync(join(dir, 'keys'), 'not a key\n');
    const r = await runCli([
      'dev',
      '--config',
      'examples/quickstart',
      '--session-key-file',
      join(dir, 'keys'),
    ]);
    rmSync(dir, { recursive: true, force: true });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/keys:1: not a session key/);
  });

  it('refuses a missing or empty configuration directory with one line (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-empty-'));
    const missing = await runCli(['dev', '--config', join(dir, 'nowhere')]);
    const empty = await runCli(['dev', '--config', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--config ${join(dir, 'nowhere')}: ENOENT`);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain(
      `--config ${dir}: no *.yaml, *.yml or *.json file there, so there is nothing to serve. ` +
        'Give a directory of Gateway API YAML, or --allow-empty to start and wait for files',
    );
    expect(empty.stdout).toBe('');
  });

  it('prints a gateway configuration that Envoy accepts', async () => {
    const r = await runCli([
      'envoy-config',
      '--config',
      'examples/quickstart',
      '--mode',
      'gateway',
      '--session-key',
      Buffer.alloc(32, 5).toString('base64'),
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('envoy.filters.http.stateful_session');
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-envoy-config-'));
    const file = join(dir, 'envoy.yaml');
    writeFileSync(file, r.stdout);
    const v = validateEnvoyConfig(file);
    rmSync(dir, { recursive: true, force: true });
    expect(v.output).toContain('OK');
    expect(v.ok).toBe(true);
  });
});
