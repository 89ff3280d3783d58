// Where the API server is and how a request proves who sends it, from a kubeconfig file or the
// pod's service account. Plain credentials (a token or token file, a client certificate, a CA,
// skip-verify, a TLS server name, an impersonated user) are read here, so that `serve` does not
// load @kubernetes/client-node for them: importing it (its generated API models) took 0.3-0.5 s
// and 70-80 MiB of RSS (37-40 MiB of heap) in a bare Node process. Everything else (an exec
// plugin, an auth provider, a username, a proxy, a server over plain HTTP, a malformed file)
// goes to @kubernetes/client-node, loaded then, as before.
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { isIPv6 } from 'node:net';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

export interface KubeCredentials {
  /** The API server's URL, without a trailing slash; undefined when the kubeconfig names no current cluster. */
  readonly server: string | undefined;
  /** Requests go through a proxy: the agent `apply` sets is theirs. */
  readonly proxied: boolean;
  /** Read here, without loading @kubernetes/client-node. */
  readonly plain: boolean;
  /** Sets one request's TLS material and credentials (files read again, a token renewed). */
  apply(options: RequestOptions): Promise<void>;
}

/** The service account's files in a pod. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** client-go and @kubernetes/client-node read the service account's token again after a minute. */
const TOKEN_FILE_REREAD_MS = 60_000;

type Json = Record<string, unknown>;

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const onlyStrings = (o: Json, keys: readonly string[]) =>
  Object.keys(o).every((k) => keys.includes(k) && typeof o[k] === 'string');

/** A cluster's and a user's plain settings, files made absolute. */
interface Plain {
  readonly server: string;
  readonly skipTlsVerify: boolean;
  readonly tlsServerName?: string | undefined;
  readonly ca: { readonly file?: string | undefined; readonly data?: string | undefined };
  readonly cert: { readonly file?: string | undefined; readonly data?: string | undefined };
  readonly key: { readonly file?: string | undefined; readonly data?: string | undefined };
  readonly impersonate?: string | undefined;
  /** The bearer token, read anew each time it is asked for when it comes from a file. */
  token(): string | undefined;
}

/** The entry named `name` of a kubeconfig list (clusters, users, contexts): its `key` part. */
function entry(list: unknown, name: unknown, key: string): Json | undefined {
  if (!Array.isArray(list)) return undefined;
  const found = list.find((e) => isRecord(e) && e.name === name) as Json | undefined;
  return isRecord(found?.[key]) ? found[key] : undefined;
}

/** Every entry has what @kubernetes/client-node requires of it (else it throws its own error). */
function wellFormed(config: Json): boolean {
  const entries = (list: unknown, key: string, required?: string) =>
    !Array.isArray(list) ||
    list.every(
      (e) =>
        isRecord(e) &&
        typeof e.name === 'string' &&
        e.name !== '' &&
        (key === 'user' || (isRecord(e[key]) && (!required || !!(e[key] as Json)[required]))),
    );
  return (
    entries(config.clusters, 'cluster', 'server') &&
    entries(config.users, 'user') &&
    entries(config.contexts, 'context', 'cluster')
  );
}

const CLUSTER_KEYS = [
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'tls-server-name',
] as const;
const USER_KEYS = [
  'token',
  'token-file',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'as',
] as const;

/** The kubeconfig's current cluster and user when both are plain; undefined otherwise. */
function plainFile(file: string): Plain | undefined {
  let config: unknown;
  try {
    config = parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(config) || !wellFormed(config)) return undefined;
  const context = entry(config.contexts, config['current-context'], 'context');
  if (!context || !onlyStrings(context, ['cluster', 'user', 'namespace'])) return undefined;
  const cluster = entry(config.clusters, context.cluster, 'cluster');
  const user = entry(config.users, context.user, 'user');
  if (!cluster || !user) return undefined;
  const { 'insecure-skip-tls-verify': skip, ...clusterRest } = cluster;
  if (!(skip === undefined || typeof skip === 'boolean') || !onlyStrings(clusterRest, CLUSTER_KEYS))
    return undefined;
  if (!onlyStrings(user, USER_KEYS)) return undefined;
  const server = String(cluster.server);
  if (!server.startsWith('https://')) return undefined;
  const at = (f: unknown) =>
    typeof f === 'string' && f !== '' && !isAbsolute(f) ? join(dirname(file), f) : f;
  const s = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  let token: string | undefined;
  try {
    token =
      s(user.token) ?? (s(user['token-file']) ? readFileSync(String(user['token-file']), 'utf8') : undefined);
  } catch {
    return undefined;
  }
  return {
    server: server.replace(/\/$/, ''),
    skipTlsVerify: skip === true,
    tlsServerName: s(cluster['tls-server-name']),
    ca: { file: s(at(cluster['certificate-authority'])), data: s(cluster['certificate-authority-data']) },
    cert: { file: s(at(user['client-certificate'])), data: s(user['client-certificate-data']) },
    key: { file: s(at(user['client-key'])), data: s(user['client-key-data']) },
    impersonate: typeof user.as === 'string' ? user.as : undefined,
    token: () => token,
  };
}

/** The pod's service account, unless the API server is reached over plain HTTP (its usual ports). */
function plainInCluster(prefix: string): Plain | undefined {
  const dir = `${prefix}${SERVICE_ACCOUNT_DIR}`;
  const host = process.env.KUBERNETES_SERVICE_HOST ?? '';
  const port = process.env.KUBERNETES_SERVICE_PORT ?? '';
  if (host === '' || port === '' || ['80', '8080', '8001'].includes(port)) return undefined;
  let token: string | undefined;
  let readAt = 0;
  return {
    server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    skipTlsVerify: false,
    ca: { file: `${dir}/ca.crt` },
    cert: {},
    key: {},
    // A projected token is rotated on disk: read again once it is a minute old.
    token: () => {
      if (token === undefined || Date.now() - readAt > TOKEN_FILE_REREAD_MS) {
        token = readFileSync(`${dir}/token`, 'utf8');
        readAt = Date.now();
      }
      return token || undefined;
    },
  };
}

function material(from: Plain['ca']): Buffer | undefined {
  if (from.file) return readFileSync(from.file);
  return from.data ? Buffer.from(from.data, 'base64') : undefined;
}

function credentialsOf(plain: Plain): KubeCredentials {
  return {
    server: plain.server,
    proxied: false,
    plain: true,
    apply: (o) => {
      if (plain.skipTlsVerify) o.rejectUnauthorized = false;
      if (plain.tlsServerName) o.servername = plain.tlsServerName;
      const [ca, cert, key] = [material(plain.ca), material(plain.cert), material(plain.key)];
      if (ca) o.ca = ca;
      if (cert) o.cert = cert;
      if (key) o.key = key;
      const headers = (o.headers ??= {}) as Record<string, string>;
      if (plain.impersonate !== undefined) headers['Impersonate-User'] = plain.impersonate;
      const token = plain.token();
      if (token) headers.Authorization = `Bearer ${token}`;
      return Promise.resolve();
    },
  };
}

/** The same from @kubernetes/client-node (loaded now), for what is not plain. */
async function viaClientNode(file: string | undefined, prefix: string): Promise<KubeCredentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (file === undefined) {
    try {
      kc.loadFromCluster(prefix);
    } catch (e) {
      throw new Error(`cannot load the in-cluster configuration: ${(e as Error).message}`);
    }
  } else {
    try {
      kc.loadFromFile(file);
    } catch (e) {
      throw new Error(`cannot read the kubeconfig ${file}: ${(e as Error).message}`);
    }
  }
  const cluster = kc.getCurrentCluster();
  return {
    server: cluster?.server,
    proxied: !!cluster?.proxyUrl,
    plain: false,
    apply: (o) => kc.applyToHTTPSOptions(o),
  };
}

/**
 * The credentials of kubeconfig `file`, or of the pod's service account when `file` is
 * undefined (its files under `prefix`, for tests, then the usual path). Throws with a readable
 * message when the file cannot be read.
 */
export async function kubeCredentials(file: string | undefined, prefix = ''): Promise<KubeCredentials> {
  const plain = file === undefined ? plainInCluster(prefix) : plainFile(file);
  return plain ? credentialsOf(plain) : viaClientNode(file, prefix);
}
