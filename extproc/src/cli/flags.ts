// The flags several commands share, declared once so each is spelled and described the
// same way everywhere.
import { readFile } from 'node:fs/promises';
import type { FlagSpec, ParsedArgs } from './args.js';
import { UsageError } from './command.js';
import { FILTER_CHOICES, type FilterChoice } from '../local/filter-build.js';

export const CONFIG: FlagSpec = {
  type: 'string',
  multiple: true,
  value: 'PATH',
  description: 'a Gateway API YAML file or a directory of them (read recursively)',
};

export const SESSION_KEY_FILE: FlagSpec = {
  type: 'string',
  value: 'FILE',
  description:
    'session keys, one base64 32-byte key per line (`openssl rand -base64 32`); the first seals, all open',
  aliases: ['session-keys'],
};

export const SESSION_KEY: FlagSpec = {
  type: 'string',
  multiple: true,
  value: 'BASE64',
  description: 'a session key given inline (after those of --session-key-file)',
};

export const ADDRESS: FlagSpec = {
  type: 'string',
  value: 'ADDR',
  description: "the address Envoy's Gateway listeners bind",
  default: '127.0.0.1',
};

export const ADMIN_PORT: FlagSpec = {
  type: 'string',
  value: 'N',
  description:
    "the control service's admin API port (/healthz, /readyz, /metrics, /v1/...); 0 picks a free one",
  default: '9902',
};

export const ENVOY_ADMIN_PORT: FlagSpec = {
  type: 'string',
  value: 'N',
  description: "Envoy's admin port, on 127.0.0.1; 0 picks a free one",
  default: '9901',
};

export const EXT_PROC_ADDRESS_DEFAULT = '127.0.0.1:50051';

export const OUTPUT: FlagSpec = {
  type: 'string',
  value: 'text|json',
  description: 'output format',
  default: 'text',
};

export const ALLOW_EMPTY: FlagSpec = {
  type: 'boolean',
  description: 'start even when --config is missing or holds no YAML file, and wait for files to appear',
  default: 'off: refuse to start',
};

export const KUBECONFIG: FlagSpec = {
  type: 'string',
  value: 'FILE',
  description:
    'read the Gateway API objects from a Kubernetes API server (this kubeconfig) instead of --config, and write their status back (docs/kubernetes.md)',
};

export const IN_CLUSTER: FlagSpec = {
  type: 'boolean',
  description: "as --kubeconfig, with the pod's service account (running inside the cluster)",
  default: 'off',
};

export const SESSION_KEY_SECRET: FlagSpec = {
  type: 'string',
  value: 'NAMESPACE/NAME',
  description:
    "with --kubeconfig or --in-cluster: the session keys from this Secret's data.keys (the lines of a --session-key-file)",
};

/** --config values and positional paths: one list. */
export function configPathsOf(parsed: ParsedArgs): string[] {
  return [...(parsed.flags.get('config') ?? []), ...parsed.positionals];
}

export function requireConfigPaths(parsed: ParsedArgs): string[] {
  const paths = configPathsOf(parsed);
  if (paths.length === 0) throw new UsageError('give --config PATH (a Gateway API YAML file or directory)');
  return paths;
}

export function outputOf(parsed: ParsedArgs): 'text' | 'json' {
  const output = parsed.flags.get('output')?.[0] ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new UsageError(`--output must be text or json, not ${output}`);
  return output;
}

/** The xDS token: the file's first line, at least 16 characters. */
export async function readXdsToken(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--xds-token-file: cannot read ${file}: ${(e as Error).message}`);
  }
  const token = text.split('\n')[0]?.trim() ?? '';
  if (token.length < 16 || /\s/.test(token)) {
    throw new UsageError(
      `--xds-token-file: ${file} must hold one token of at least 16 characters, no spaces`,
    );
  }
  return token;
}

export const XDS_TOKEN_FILE: FlagSpec = {
  type: 'string',
  value: 'FILE',
  description:
    'a secret every Envoy presents on the ADS stream (its first line, 16+ characters); required unless --xds is on loopback, as the stream carries the session keys',
};

/** Which build of the filter a generated Envoy configuration loads (docs/native-filter.md). */
export function filterFlag(defaultText: string, what: string): FlagSpec {
  return {
    type: 'string',
    value: FILTER_CHOICES.join('|'),
    description:
      `${what}: native (the filter compiled into an Envoy dynamic module, no VM; for the Envoy it was built for), ` +
      "wasm (steadfast.wasm in Envoy's wasm VM; any Envoy), or auto (native where it was built for the Envoy this runs, else wasm)",
    default: defaultText,
  };
}

export function filterChoiceOf(parsed: ParsedArgs, name: string, defaultChoice: FilterChoice): FilterChoice {
  const value = parsed.flags.get(name)?.[0] ?? defaultChoice;
  if (!(FILTER_CHOICES as readonly string[]).includes(value))
    throw new UsageError(`--${name} must be one of ${FILTER_CHOICES.join(', ')}, not ${value}`);
  return value as FilterChoice;
}
