// `steadfast dev --kubeconfig --session-key-secret` follows the Secret as serve --xds does: a new
// key ring in it reaches dev's Envoy without a restart. New sessions are sealed with the new
// first key, sessions sealed with the old one still open while it stays in the ring.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { KUBECTL, type LocalKube, startLocalKube } from '../../scripts/kube-local.mjs';
import { sessionKeyId } from '../../extproc/src/provider/key-files.js';
import { CliProcess } from './support/cli-process.js';
import { until } from './support/fleet.js';
import { exchange } from './conformance/exchange.js';
import { TEST_SESSION_KEY, cookieOf, freePort } from './support/gateway-fixture.js';
import { appServiceYaml, gatewayYaml, sessionKeySecretYaml, shopRouteYaml } from './support/kube-objects.js';

const ADDRESS = '127.0.0.43';
const NEW_KEY = Buffer.alloc(32, 5).toString('base64');

const idOf = (key: string) => sessionKeyId(Buffer.from(key, 'base64')).toString('hex');
const keyIdOf = (cookie: string) =>
  Buffer.from(cookie.slice(cookie.indexOf('=') + 1), 'base64url')
    .subarray(1, 5)
    .toString('hex');

describe('steadfast dev --kubeconfig follows its session-key Secret', () => {
  let kube: LocalKube;
  let backend: RunningBackend;
  let dev: CliProcess;
  let url: string;

  const kubectl = (args: readonly string[], input: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn(KUBECTL, ['--kubeconfig', kube.adminConfig, ...args]);
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(err))));
      child.stdin.end(input);
    });
  const open = async (cookie?: string) => {
    const res = await exchange(url, '/cart/k', 'shop.example', cookie ? { cookie } : {});
    expect(res.status).toBe(200);
    return {
      issued: cookieOf(res.headers['set-cookie'], 'cart-session'),
      instance: (JSON.parse(res.body) as { instance: string }).instance,
    };
  };

  beforeAll(async () => {
    kube = await startLocalKube({ log: () => {} });
    backend = await startEchoBackend({ address: '127.0.0.1', name: 'dev-keys' });
    const port = await freePort();
    url = `http://${ADDRESS}:${port}`;
    await kubectl(['apply', '-f', '-'], sessionKeySecretYaml([TEST_SESSION_KEY]));
    await kubectl(
      ['apply', '-f', '-'],
      [
        gatewayYaml(port),
        appServiceYaml([backend.port]),
        shopRouteYaml({
          cartRule: '      sessionPersistence: { sessionName: cart-session, type: Cookie }\n',
        }),
      ].join('---\n'),
    );
    dev = new CliProcess([
      'dev',
      '--kubeconfig',
      kube.steadfastConfig,
      '--session-key-secret',
      'steadfast-system/session-keys',
      '--address',
      ADDRESS,
      '--admin-port',
      '0',
      '--envoy-admin-port',
      '0',
    ]);
    await dev.waitFor(/steadfast dev: ready/, 90_000);
  }, 240_000);

  afterAll(async () => {
    dev?.kill('SIGTERM');
    await dev?.exit;
    await backend?.close();
    await kube?.stop();
  });

  it('seals new sessions with the new first key at once, and still opens those of the old one', async () => {
    const old = await open();
    expect(keyIdOf(old.issued as string)).toBe(idOf(TEST_SESSION_KEY));
    await kubectl(['apply', '-f', '-'], sessionKeySecretYaml([NEW_KEY, TEST_SESSION_KEY]));
    await until(
      async () => keyIdOf((await open()).issued as string) === idOf(NEW_KEY),
      15_000,
      'new sessions sealed with the new key',
    );
    const again = await open(old.issued);
    expect(again.issued).toBeUndefined();
    expect(again.instance).toBe(old.instance);
    expect(dev.output).toMatch(
      /session keys from Secret steadfast-system\/session-keys changed: [0-9a-f]{8}, [0-9a-f]{8} \(the first seals\); sent to Envoy/,
    );
  });
});
