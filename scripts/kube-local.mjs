#!/usr/bin/env node
// A real Kubernetes API server on loopback, for the tests and for trying steadfast against a
// cluster (docs/kubernetes.md): etcd and kube-apiserver from .tools/bin (built on first use by
// `npm run tools -- --kubernetes`), the Gateway API CRDs installed, steadfast's RBAC applied
// and bound to a user `steadfast` that has nothing else. No controllers run: nothing writes
// EndpointSlices for you, so write them as the examples do.
//
//   npm run kube                 starts it and prints the kubeconfig paths; Ctrl-C stops it
//   import { startLocalKube }    the same from a test
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const binDir = join(root, '.tools', 'bin');
export const KUBECTL = join(binDir, 'kubectl');
export const HELM = join(binDir, 'helm');
export const CRD_DIR = join(root, '.tools', 'kubernetes', 'crds');
export const RBAC_FILE = join(root, 'deploy', 'kubernetes', 'rbac.yaml');

/** Builds etcd, kube-apiserver, kubectl, helm and the CRDs when any is missing (minutes, the first time). */
export function ensureKubeTools(log = (l) => process.stderr.write(`${l}\n`)) {
  const missing = ['etcd', 'kube-apiserver', 'kubectl', 'helm'].filter((b) => !existsSync(join(binDir, b)));
  if (missing.length === 0 && existsSync(CRD_DIR)) return;
  log(`kube-local: ${missing.join(', ') || 'the CRDs'} not built yet: running npm run tools -- --kubernetes`);
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'install-tools.mjs'), '--kubernetes-only'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) throw new Error('building the Kubernetes tools failed (see above)');
}

/** A port the kernel has free now (it may be taken before use: callers retry). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Starts `bin` with `args`; its output goes to `logFile`. Rejects if it exits before `ready()` holds. */
async function startProcess(name, bin, args, logFile, ready, timeoutMs) {
  const out = [];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let exited = null;
  child.on('exit', (code, signal) => (exited = signal ?? code));
  const keep = (chunk) => {
    out.push(chunk);
    writeFileSync(logFile, chunk, { flag: 'a' });
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited !== null) {
      const lines = Buffer.concat(out).toString('utf8').trimEnd().split('\n');
      const cause =
        lines.findLast((l) => /^E\d{4}|"level":"(error|fatal)"|error/i.test(l)) ?? lines.at(-1) ?? '';
      throw new Error(
        `${name} exited (${exited}) before it was ready: ${cause.trim()}\n${lines.slice(-15).join('\n')}`,
      );
    }
    if (await ready().catch(() => false)) return child;
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`${name} was not ready within ${timeoutMs} ms (its log: ${logFile})`);
}

async function httpOk(url, headers = {}, ca) {
  const { request } = await import(url.startsWith('https') ? 'node:https' : 'node:http');
  return new Promise((resolve) => {
    const req = request(url, { headers, ca, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

function kubeconfig(server, ca, user, token) {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: steadfast-local',
    '    cluster:',
    `      server: ${server}`,
    `      certificate-authority: ${ca}`,
    'users:',
    `  - name: ${user}`,
    '    user:',
    `      token: ${token}`,
    'contexts:',
    `  - name: ${user}@steadfast-local`,
    '    context:',
    '      cluster: steadfast-local',
    `      user: ${user}`,
    `current-context: ${user}@steadfast-local`,
    '',
  ].join('\n');
}

function kubectl(config, args, input) {
  const r = spawnSync(KUBECTL, ['--kubeconfig', config, ...args], {
    encoding: 'utf8',
    input,
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/**
 * Starts etcd and kube-apiserver on loopback with their state under `dir` (a fresh temporary
 * folder when not given), installs the CRDs and steadfast's RBAC. Resolves once both serve.
 */
export async function startLocalKube(options = {}) {
  const log = options.log ?? ((l) => process.stderr.write(`${l}\n`));
  ensureKubeTools(log);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'steadfast-kube-'));
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  let lastError;
  // A port picked free can be taken before etcd or the API server binds it: try again with others.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const kube = await startOnce(dir, log, options.apiPort, options.profiling === true);
      log(`kube-local: API server ${kube.server} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return kube;
    } catch (e) {
      lastError = e;
      // Only a port taken between picking and binding is worth another try.
      if (!/address already in use|bind/i.test(e.message)) throw e;
      log(`kube-local: ${e.message.split('\n')[0]}${attempt < 2 ? '; trying other ports' : ''}`);
    }
  }
  throw lastError;
}

async function startOnce(dir, log, fixedApiPort, profiling) {
  const etcdData = join(dir, 'etcd');
  rmSync(etcdData, { recursive: true, force: true });
  const [clientPort, peerPort, apiPort] = [
    await freePort(),
    await freePort(),
    fixedApiPort ?? (await freePort()),
  ];
  const etcdUrl = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const etcd = await startProcess(
    'etcd',
    join(binDir, 'etcd'),
    [
      '--name=local',
      `--data-dir=${etcdData}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=local=${peerUrl}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    join(dir, 'etcd.log'),
    () => httpOk(`${etcdUrl}/health`),
    30_000,
  );
  try {
    const certs = join(dir, 'certs');
    rmSync(certs, { recursive: true, force: true });
    mkdirSync(certs, { recursive: true });
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const adminToken = randomBytes(24).toString('hex');
    const steadfastToken = randomBytes(24).toString('hex');
    // token,user,uid,"groups"
    writeFileSync(
      join(dir, 'tokens.csv'),
      `${adminToken},admin,admin,"system:masters"\n${steadfastToken},steadfast,steadfast\n`,
    );
    const server = `https://127.0.0.1:${apiPort}`;
    const ca = join(certs, 'apiserver.crt');
    const startApiServer = () =>
      startProcess(
        'kube-apiserver',
        join(binDir, 'kube-apiserver'),
        [
          `--etcd-servers=${etcdUrl}`,
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          `--secure-port=${apiPort}`,
          `--cert-dir=${certs}`,
          `--token-auth-file=${join(dir, 'tokens.csv')}`,
          '--authorization-mode=RBAC',
          '--service-account-issuer=https://kubernetes.default.svc',
          `--service-account-key-file=${join(dir, 'sa.pub')}`,
          `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
          '--service-cluster-ip-range=10.96.0.0/16',
          // The kubernetes Service's endpoints would be this loopback address, which it refuses.
          '--endpoint-reconciler-type=none',
          '--enable-priority-and-fairness=false',
          // /debug/pprof only for a benchmark that profiles the API server.
          `--profiling=${profiling}`,
          '-v=0',
        ],
        join(dir, 'kube-apiserver.log'),
        async () =>
          existsSync(ca) &&
          httpOk(`${server}/readyz`, { authorization: `Bearer ${adminToken}` }, readFileSync(ca)),
        90_000,
      );
    let apiserver = await startApiServer();
    const end = async (p) => {
      if (p.exitCode !== null || p.signalCode !== null) return;
      const gone = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await Promise.race([gone, sleep(5000)]);
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    };
    const stop = async () => {
      await end(apiserver);
      await end(etcd);
    };
    /** Stops the API server, waits `downMs`, and starts it again on the same port (etcd keeps the objects). */
    const restartApiServer = async (downMs = 0) => {
      await end(apiserver);
      await sleep(downMs);
      apiserver = await startApiServer();
    };
    try {
      const adminConfig = join(dir, 'admin.kubeconfig');
      const steadfastConfig = join(dir, 'steadfast.kubeconfig');
      writeFileSync(adminConfig, kubeconfig(server, ca, 'admin', adminToken));
      writeFileSync(steadfastConfig, kubeconfig(server, ca, 'steadfast', steadfastToken));
      // Server-side apply: the CRDs are too large for kubectl's last-applied annotation.
      kubectl(adminConfig, ['apply', '--server-side', '-f', CRD_DIR]);
      kubectl(adminConfig, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
      kubectl(adminConfig, ['apply', '-f', RBAC_FILE]);
      // The RBAC file binds the roles to the service account steadfast runs as in a cluster;
      // here the same roles go to the user of steadfast.kubeconfig.
      kubectl(
        adminConfig,
        ['apply', '-f', '-'],
        [
          'apiVersion: rbac.authorization.k8s.io/v1',
          'kind: ClusterRoleBinding',
          'metadata: { name: steadfast-local-user }',
          'roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: steadfast }',
          'subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: steadfast }]',
          '---',
          'apiVersion: rbac.authorization.k8s.io/v1',
          'kind: RoleBinding',
          'metadata: { name: steadfast-lease-local-user, namespace: steadfast-system }',
          'roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: steadfast-lease }',
          'subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: steadfast }]',
          '',
        ].join('\n'),
      );
      return {
        dir,
        server,
        ca,
        adminToken,
        adminConfig,
        steadfastConfig,
        etcd: etcdUrl,
        stop,
        restartApiServer,
      };
    } catch (e) {
      await stop();
      throw e;
    }
  } catch (e) {
    etcd.kill('SIGKILL');
    throw e;
  }
}

// `npm run kube`: run until Ctrl-C, state kept in .tools/kubernetes/local.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = join(root, '.tools', 'kubernetes', 'local');
  const portArg = process.argv.find((a) => a.startsWith('--port='));
  const kube = await startLocalKube({ dir, ...(portArg ? { apiPort: Number(portArg.slice(7)) } : {}) });
  process.stdout.write(
    [
      `kube-local: ready. The API server is ${kube.server}; its state and logs are in ${dir}.`,
      `  admin (kubectl):       export KUBECONFIG=${kube.adminConfig}`,
      `  steadfast (its RBAC):  steadfast dev --kubeconfig ${kube.steadfastConfig}`,
      `  kubectl:               ${KUBECTL}`,
      'Ctrl-C stops it (etcd starts empty next time).',
      '',
    ].join('\n'),
  );
  const stop = () => void kube.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
