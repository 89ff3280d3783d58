#!/usr/bin/env node
// `npm run test:compose`: runs the repository's compose.yaml for real and checks the quickstart
// against it (tests/compose/). With a working Docker (a laptop), it uses that Docker and the
// official images. Without one (a Linux CI machine, as root, with no container registry) it
// prepares what is missing, once, cached under .tools/docker/:
//   - the engine: Debian's docker.io (apt), never started as a service;
//   - Compose v2: `go install github.com/docker/compose/v2/cmd@<pin>`, as a CLI plugin;
//   - stand-ins for the base images the project names (node:20-bookworm-slim,
//     envoyproxy/envoy:v<pin>): a Debian bookworm minbase root (debootstrap) with this
//     machine's Node and npm, or the pinned Envoy binary from .tools/venv, `docker import`ed.
// Then it starts a private daemon (own socket, data and exec roots under one temporary
// directory; overlay2 storage, or vfs where overlay2 cannot run; no iptables, no NAT, no default
// bridge: the machine's firewall is left alone), runs the tests, and stops the daemon and
// removes the directory, whatever happened.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

const COMPOSE_VERSION = 'v2.29.7';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pins = JSON.parse(readFileSync(join(root, 'tools.json'), 'utf8'));
const cache = join(root, '.tools', 'docker');
const started = Date.now();

function say(msg) {
  const s = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
  process.stdout.write(`test:compose [${s}s] ${msg}\n`);
}

class Failure extends Error {}

/** Stops the run with a message; cleanup (the daemon) still happens on the way out. */
function fail(msg) {
  throw new Failure(msg);
}

function ok(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000, ...options });
  return r.status === 0;
}

function run(cmd, args, options = {}) {
  execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
}

/** `run`, without blocking: the two long preparations (Go build, debootstrap) overlap. */
function runAsync(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Failure(`${cmd} ${args[0]} failed (exit ${code})`)),
    );
  });
}

function onPath(cmd) {
  return ok('sh', ['-c', `command -v ${cmd}`]);
}

/** A Docker that already works here, with Compose v2: use it as it is. */
function existingDocker() {
  if (process.env.STEADFAST_COMPOSE_PRIVATE_DAEMON === '1') return false;
  return onPath('docker') && ok('docker', ['info']) && ok('docker', ['compose', 'version']);
}

// ---- preparation (cached) ----

/** apt-get install, with service starts refused for the time of the install. */
function aptInstall(packages) {
  if (process.getuid?.() !== 0) {
    fail(
      `${packages.join(', ')} missing and not root: install a Docker engine (or Debian's ` +
        `${packages.join(' ')}) and run again.`,
    );
  }
  const policy = '/usr/sbin/policy-rc.d';
  const ownPolicy = !existsSync(policy);
  // Installing docker.io would start dockerd with its default settings (and its iptables
  // rules); exit code 101 tells the package scripts not to start anything.
  if (ownPolicy) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    say(`apt-get update, then install ${packages.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['update', '-q'], { env });
    run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...packages], { env });
  } finally {
    if (ownPolicy) rmSync(policy, { force: true });
  }
}

function ensurePackages() {
  const missing = [];
  if (!onPath('dockerd')) missing.push('docker.io');
  if (!onPath('debootstrap')) missing.push('debootstrap');
  if (missing.length > 0) aptInstall(missing);
  else say('engine (dockerd) and debootstrap present');
}

function stamp(name) {
  const file = join(cache, `${name}.version`);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
}

function setStamp(name, value) {
  writeFileSync(join(cache, `${name}.version`), `${value}\n`);
}

/** Compose v2 as a CLI plugin under DOCKER_CONFIG=.tools/docker. */
async function ensureCompose() {
  const plugin = join(cache, 'cli-plugins', 'docker-compose');
  if (stamp('compose') === COMPOSE_VERSION && existsSync(plugin)) {
    say(`Compose ${COMPOSE_VERSION} present`);
    return;
  }
  if (!onPath('go')) fail('Go is needed to build Compose v2 (go install); install Go 1.22 or newer.');
  say(`building Compose ${COMPOSE_VERSION} with go install (about 5 minutes on 2 cores)`);
  const gobin = join(cache, 'gobin');
  mkdirSync(gobin, { recursive: true });
  await runAsync('go', ['install', `github.com/docker/compose/v2/cmd@${COMPOSE_VERSION}`], {
    env: { ...process.env, GOBIN: gobin, GOFLAGS: '-mod=mod' },
  });
  mkdirSync(dirname(plugin), { recursive: true });
  renameSync(join(gobin, 'cmd'), plugin);
  rmSync(gobin, { recursive: true, force: true });
  setStamp('compose', COMPOSE_VERSION);
  say(`Compose ${COMPOSE_VERSION} built: ${plugin}`);
}

/** A Debian bookworm minbase root, as a tar: the base of both stand-in images. */
const ROOTFS_TAR = join(cache, 'bookworm-minbase.tar');

async function ensureRootfs() {
  const tar = ROOTFS_TAR;
  if (stamp('rootfs') === 'bookworm-minbase' && existsSync(tar)) return;
  const dir = join(cache, 'rootfs.tmp');
  rmSync(dir, { recursive: true, force: true });
  say("debootstrap --variant=minbase bookworm (a few minutes, from Debian's packages)");
  await runAsync('debootstrap', ['--variant=minbase', 'bookworm', dir, 'http://deb.debian.org/debian'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // The machine's CA bundle: npm inside the image build must trust what this machine trusts.
  mkdirSync(join(dir, 'etc/ssl/certs'), { recursive: true });
  copyFileSync('/etc/ssl/certs/ca-certificates.crt', join(dir, 'etc/ssl/certs/ca-certificates.crt'));
  const debs = join(dir, 'var/cache/apt/archives');
  for (const f of readdirSync(debs).filter((n) => n.endsWith('.deb'))) rmSync(join(debs, f));
  run('tar', ['--numeric-owner', '-C', dir, '-cf', `${tar}.tmp`, '.']);
  renameSync(`${tar}.tmp`, tar);
  rmSync(dir, { recursive: true, force: true });
  setStamp('rootfs', 'bookworm-minbase');
  say(`bookworm root ready: ${tar}`);
}

/** The base root with `overlay`'s files on top, as one tar for `docker import` (no duplicate paths). */
function layered(base, overlay, out) {
  const stage = mkdtempSync(join(cache, 'stage-'));
  try {
    run('tar', ['--numeric-owner', '-C', stage, '-xf', base]);
    run('cp', ['-a', `${overlay}/.`, stage]);
    run('tar', ['--numeric-owner', '-C', stage, '-cf', `${out}.tmp`, '.']);
    renameSync(`${out}.tmp`, out);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

function npmDirectory() {
  const r = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' });
  const dir = join(r.stdout.trim(), 'npm');
  if (r.status !== 0 || !existsSync(join(dir, 'bin', 'npm-cli.js')))
    fail(`cannot find npm's own directory (${dir})`);
  return dir;
}

function nodeOverlay(dir, rootTar) {
  const usrLocal = join(dir, 'usr/local');
  mkdirSync(join(usrLocal, 'bin'), { recursive: true });
  mkdirSync(join(usrLocal, 'lib/node_modules'), { recursive: true });
  copyFileSync(process.execPath, join(usrLocal, 'bin/node'));
  chmodSync(join(usrLocal, 'bin/node'), 0o755);
  cpSync(npmDirectory(), join(usrLocal, 'lib/node_modules/npm'), { recursive: true, dereference: true });
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(usrLocal, 'bin/npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(usrLocal, 'bin/npx'));
  // The official image's user: node, uid and gid 1000, home /home/node.
  const etc = join(dir, 'etc');
  mkdirSync(etc, { recursive: true });
  const passwd = execFileSync('tar', ['-xOf', rootTar, './etc/passwd'], { encoding: 'utf8' });
  const group = execFileSync('tar', ['-xOf', rootTar, './etc/group'], { encoding: 'utf8' });
  writeFileSync(join(etc, 'passwd'), `${passwd}node:x:1000:1000::/home/node:/bin/sh\n`);
  writeFileSync(join(etc, 'group'), `${group}node:x:1000:\n`);
  mkdirSync(join(dir, 'home/node'), { recursive: true });
  execFileSync('chown', ['1000:1000', join(dir, 'home/node')]);
}

function envoyBinary() {
  const lib = join(root, '.tools', 'venv', 'lib');
  const python = existsSync(lib) ? readdirSync(lib).find((d) => d.startsWith('python')) : undefined;
  const bin = python ? join(lib, python, 'site-packages', 'envoy', '_bin', 'envoy') : '';
  if (!existsSync(bin)) fail('the pinned Envoy is not in .tools/venv: run `npm run tools` first');
  return bin;
}

function envoyOverlay(dir) {
  mkdirSync(join(dir, 'usr/local/bin'), { recursive: true });
  copyFileSync(envoyBinary(), join(dir, 'usr/local/bin/envoy'));
  chmodSync(join(dir, 'usr/local/bin/envoy'), 0o755);
}

/** Stand-in images under the official names, when they are not there and cannot be pulled. */
function ensureStandIns(env) {
  const nodeVersion = process.version;
  if (!nodeVersion.startsWith('v20.'))
    fail(`the node:20 stand-in needs this machine's Node to be 20.x, not ${nodeVersion}`);
  const images = [
    {
      name: 'node:20-bookworm-slim',
      key: `node-${nodeVersion}`,
      overlay: nodeOverlay,
      changes: [
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        `ENV NODE_VERSION=${nodeVersion.slice(1)}`,
        // Only in the stand-in: this machine's network inspects TLS with its own CA.
        'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
        'CMD ["node"]',
      ],
    },
    {
      name: `envoyproxy/envoy:v${pins.envoy}`,
      key: `envoy-${pins.envoy}`,
      overlay: envoyOverlay,
      changes: [
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        'CMD ["envoy", "-c", "/etc/envoy/envoy.yaml"]',
      ],
    },
  ];
  for (const image of images) {
    if (ok('docker', ['image', 'inspect', image.name], { env })) continue;
    const tar = join(cache, 'images', `${image.key}.tar`);
    if (!existsSync(tar)) {
      const rootTar = ROOTFS_TAR;
      say(`building the stand-in for ${image.name}`);
      mkdirSync(dirname(tar), { recursive: true });
      const overlay = mkdtempSync(join(cache, 'overlay-'));
      // The overlay's top directory becomes the image's `/`: readable by the image's users.
      chmodSync(overlay, 0o755);
      try {
        image.overlay(overlay, rootTar);
        layered(rootTar, overlay, tar);
      } finally {
        rmSync(overlay, { recursive: true, force: true });
      }
    }
    say(`docker import ${image.name} (stand-in: no registry reachable from this daemon)`);
    run('docker', ['import', ...image.changes.flatMap((c) => ['--change', c]), tar, image.name], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
}

// ---- the private daemon ----

const DAEMON_PREFIX = '/tmp/sfdock-';

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function pidIn(file) {
  const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * A run that was killed outright (CI timeout, SIGKILL) leaves its daemon and directory behind:
 * stop and remove those whose test:compose process is gone, so a reused machine starts clean.
 */
async function removeStaleDaemons() {
  for (const name of readdirSync(dirname(DAEMON_PREFIX))) {
    const dir = join(dirname(DAEMON_PREFIX), name);
    if (!dir.startsWith(DAEMON_PREFIX)) continue;
    const owner = pidIn(join(dir, 'owner.pid'));
    if (owner !== undefined && alive(owner)) continue;
    const pid = pidIn(join(dir, 'docker.pid'));
    const ours =
      pid !== undefined && alive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
    say(`removing a daemon directory left by an earlier run: ${dir}`);
    if (ours) {
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 60 && alive(pid); i++) await new Promise((r) => setTimeout(r, 500));
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    await removeDaemon({ dir, child: { exitCode: 0 } });
  }
}

async function startDaemon(driver) {
  // Short: containerd's socket paths must fit in a unix socket address.
  const dir = mkdtempSync(DAEMON_PREFIX);
  writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
  const socket = join(dir, 'docker.sock');
  const log = join(dir, 'dockerd.log');
  say(`starting a private dockerd (storage driver ${driver}) in ${dir}`);
  const out = openSync(log, 'a');
  const child = spawn(
    'dockerd',
    [
      '-H',
      `unix://${socket}`,
      '--data-root',
      join(dir, 'data'),
      '--exec-root',
      join(dir, 'exec'),
      '--pidfile',
      join(dir, 'docker.pid'),
      '--storage-driver',
      driver,
      '--iptables=false',
      '--ip-masq=false',
      '--bridge=none',
    ],
    { stdio: ['ignore', out, out] },
  );
  const env = { ...process.env, DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: cache };
  const daemon = { dir, child, env, log };
  const deadline = Date.now() + 60_000;
  while (!ok('docker', ['version'], { env, timeout: 5000 })) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : '';
      await stopDaemon(daemon);
      throw new Failure(`the private dockerd did not start:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  say('private dockerd ready');
  return daemon;
}

function stopDaemon(daemon) {
  daemon.stopping ??= removeDaemon(daemon);
  return daemon.stopping;
}

async function removeDaemon(daemon) {
  if (daemon.child.exitCode === null) {
    say('stopping the private dockerd');
    const exited = new Promise((r) => daemon.child.once('exit', r));
    daemon.child.kill('SIGTERM');
    const timer = setTimeout(() => daemon.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
  // Anything still mounted under the directory (it should not be) is unmounted before removal.
  const mounts = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m.startsWith(`${daemon.dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) spawnSync('umount', ['-l', m]);
  rmSync(daemon.dir, { recursive: true, force: true });
  say(`removed ${daemon.dir}`);
}

function vitest(env) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', 'vitest.compose.config.ts'],
      { cwd: root, env, stdio: 'inherit' },
    );
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.once('exit', (code) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? 1);
    });
  });
}

async function main() {
  if (existingDocker()) {
    say('using the Docker engine already running here (official images are pulled as needed)');
    const code = await vitest({ ...process.env, STEADFAST_COMPOSE_MODE: 'docker' });
    say(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return code;
  }
  if (process.platform !== 'linux')
    fail('no working Docker found: start Docker (with Compose v2) and run again.');
  mkdirSync(cache, { recursive: true });
  ensurePackages();
  await removeStaleDaemons();
  // Both at once: the Go build is CPU, debootstrap mostly downloads. Each waits for the other
  // to end, so a failure leaves nothing running.
  const prepared = await Promise.allSettled([ensureCompose(), ensureRootfs()]);
  for (const p of prepared) if (p.status === 'rejected') throw p.reason;
  // overlay2 shares image layers between containers; vfs (a full copy per layer and container,
  // much slower) works everywhere. STEADFAST_COMPOSE_STORAGE_DRIVER picks one.
  const chosen = process.env.STEADFAST_COMPOSE_STORAGE_DRIVER;
  let daemon;
  try {
    daemon = await startDaemon(chosen ?? 'overlay2');
  } catch (e) {
    if (chosen !== undefined || !(e instanceof Failure)) throw e;
    say(`overlay2 is not available here (${e.message.split('\n').at(-2) ?? ''}); using vfs`);
    daemon = await startDaemon('vfs');
  }
  // Ctrl-C or a CI timeout: stop the daemon and remove its directory before exiting.
  const interrupted = (signal) => {
    void stopDaemon(daemon).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  let code = 1;
  try {
    ensureStandIns(daemon.env);
    say(`prepared in ${((Date.now() - started) / 1000).toFixed(0)} s; running tests/compose`);
    code = await vitest({ ...daemon.env, STEADFAST_COMPOSE_MODE: 'private-daemon' });
  } finally {
    await stopDaemon(daemon);
  }
  say(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return code;
}

try {
  process.exitCode = await main();
} catch (e) {
  process.stderr.write(`\ntest:compose: ${e instanceof Failure ? e.message : (e?.stack ?? e)}\n\n`);
  process.exitCode = 1;
}
