// The one place flags become sources: a Provider of Gateway API objects (files, or a
// Kubernetes API server) and a KeySource of session keys (a key file and inline keys, or a
// Secret). Everything below the CLI takes only those two interfaces; nothing is started here.
import { SessionKeyFileError } from '../provider/key-files.js';
import { FileProvider } from '../provider/file.js';
import { KeyFileSource } from '../provider/key-files.js';
import type { KeySource, SessionKeyRing } from '../provider/key-source.js';
import type { Provider } from '../provider/provider.js';
// Types only: the Kubernetes provider is loaded when a command reads from a cluster, so serving
// files does not pay for it at start.
import type { KubeClient } from '../provider/kubernetes/client.js';
import type { ParsedArgs } from './args.js';
import { UsageError } from './command.js';
import { configPathsOf } from './flags.js';
import { KUBE_API_FLAGS, rateLimitOf } from './kube-api-flags.js';
import { LEASE_FLAGS, leaseSettingsOf } from './lease-flags.js';

export interface Sources {
  /** Where the objects come from; undefined when neither --config nor a cluster is given. */
  readonly provider: Provider | undefined;
  readonly keys: KeySource;
  /** The --config paths (none for a cluster): a long-running command checks them before it starts. */
  readonly configPaths: readonly string[];
  /** The cluster's client (--kubeconfig, --in-cluster), for what else a command reads from it. */
  readonly kube: KubeClient | undefined;
}

/** The provider and the key source the flags name; checks that they do not exclude each other. */
export async function sourcesOf(parsed: ParsedArgs, log: (line: string) => void): Promise<Sources> {
  const kube = await kubeClientOf(parsed);
  const keys = await keySourceOf(parsed, kube, log);
  if (kube) {
    const { KubernetesProvider } = await import('../provider/kubernetes/provider.js');
    const lease = leaseSettingsOf(parsed, !parsed.flags.has('kubeconfig'));
    return { provider: new KubernetesProvider({ client: kube, log, lease }), keys, configPaths: [], kube };
  }
  const clusterFlag = Object.keys({ ...LEASE_FLAGS, ...KUBE_API_FLAGS }).find((f) => parsed.flags.has(f));
  if (clusterFlag) throw new UsageError(`--${clusterFlag} needs --kubeconfig FILE or --in-cluster`);
  const configPaths = configPathsOf(parsed);
  const provider = configPaths.length > 0 ? filesProvider(configPaths, log) : undefined;
  return { provider, keys, configPaths, kube: undefined };
}

/** The provider of Gateway API YAML files or directories (the one-shot commands read only those). */
export function filesProvider(paths: readonly string[], log?: (line: string) => void): Provider {
  return new FileProvider({ paths, ...(log ? { log } : {}) });
}

/** The key ring a source holds now; a ring that is not one is a usage error. */
export async function readKeys(keys: KeySource): Promise<SessionKeyRing> {
  try {
    return await keys.start();
  } catch (e) {
    throw e instanceof SessionKeyFileError ? e : new UsageError((e as Error).message);
  }
}

/** The cluster to read from (--kubeconfig or --in-cluster), or undefined for files. */
async function kubeClientOf(parsed: ParsedArgs): Promise<KubeClient | undefined> {
  const file = parsed.flags.get('kubeconfig')?.[0];
  const inCluster = parsed.flags.has('in-cluster') && parsed.flags.get('in-cluster')?.[0] !== 'false';
  if (file === undefined && !inCluster) {
    if (parsed.flags.has('session-key-secret'))
      throw new UsageError('--session-key-secret needs --kubeconfig FILE or --in-cluster');
    return undefined;
  }
  if (file !== undefined && inCluster)
    throw new UsageError('--kubeconfig and --in-cluster exclude each other');
  if (configPathsOf(parsed).length > 0)
    throw new UsageError(
      `--config and ${file !== undefined ? '--kubeconfig' : '--in-cluster'} exclude each other`,
    );
  const limit = rateLimitOf(parsed);
  const { KubeClient } = await import('../provider/kubernetes/client.js');
  try {
    return await KubeClient.load(file, limit);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** --session-key-file then --session-key, or the Secret that holds the whole ring. */
async function keySourceOf(
  parsed: ParsedArgs,
  kube: KubeClient | undefined,
  log: (line: string) => void,
): Promise<KeySource> {
  const file = parsed.flags.get('session-key-file')?.[0];
  const secret = parsed.flags.get('session-key-secret')?.[0];
  const inline = parsed.flags.get('session-key') ?? [];
  if (secret !== undefined && (file !== undefined || parsed.flags.has('session-key')))
    throw new UsageError(
      `--session-key-secret and ${file !== undefined ? '--session-key-file' : '--session-key'} exclude each other: the Secret holds the whole key ring`,
    );
  if (secret === undefined || !kube) return new KeyFileSource(file, inline);
  const { SecretKeySource } = await import('../provider/kubernetes/secret-keys.js');
  try {
    return new SecretKeySource(kube, secret, log);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
