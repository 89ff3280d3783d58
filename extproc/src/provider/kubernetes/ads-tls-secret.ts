// The ADS port's certificate, key and client CA from Kubernetes Secrets (`serve --xds-tls-secret
// NAMESPACE/NAME`): a kubernetes.io/tls Secret as cert-manager writes it — tls.crt, tls.key, and
// ca.crt, the CA the Envoys' client certificates come from — or, when the Envoys' CA is
// another, the ca.crt of `--xds-client-ca-secret`. Read at start: a Secret missing or not
// readable stops serve, naming it and the RBAC it needs. Then each Secret alone is watched
// (secret-watch.ts: a watch that cannot start is tried again), and what they hold after a
// change is handed on whole: the ADS side puts it in use only once the three fit together
// (xds/ads-tls.ts), so a half-rotated Secret keeps the last good set.
import { KubeApiError, type KubeClient } from './client.js';
import type { KubeObject } from './reflector.js';
import type { WatchedSecret } from '../key-source.js';
import { SecretWatch } from './secret-watch.js';

/** The three parts as PEM (xds/ads-tls.ts checks them). */
export interface TlsPem {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
}

interface SecretRef {
  readonly namespace: string;
  readonly name: string;
  /** The flag that named it, for errors. */
  readonly flag: string;
}

type SecretData = Readonly<Record<string, unknown>> | undefined;

export class AdsTlsSecretSource {
  readonly description: string;
  readonly parts: { readonly cert: string; readonly key: string; readonly clientCa: string };
  readonly initial: TlsPem;
  /** Each Secret's data as last seen, by `namespace/name`. */
  private readonly data: Map<string, SecretData>;
  private watches: readonly SecretWatch[] = [];

  private constructor(
    private readonly client: KubeClient,
    private readonly tls: SecretRef,
    private readonly ca: SecretRef,
    data: Map<string, SecretData>,
    private readonly log: (line: string) => void,
  ) {
    this.data = data;
    this.description = `TLS Secret ${keyOf(tls)}${ca === tls ? '' : ` (client CA from Secret ${keyOf(ca)})`}`;
    this.parts = {
      cert: `Secret ${keyOf(tls)} tls.crt`,
      key: `Secret ${keyOf(tls)} tls.key`,
      clientCa: `Secret ${keyOf(ca)} ca.crt`,
    };
    const pem = this.pem();
    if (pem instanceof Error) throw pem;
    this.initial = pem;
  }

  /**
   * Reads the Secret `--xds-tls-secret` names (and `--xds-client-ca-secret`'s, when given);
   * throws a message naming the flag, the Secret and what is wrong with it.
   */
  static async load(
    client: KubeClient,
    tlsRef: string,
    caRef: string | undefined,
    log: (line: string) => void,
  ): Promise<AdsTlsSecretSource> {
    const tls = refOf(tlsRef, '--xds-tls-secret');
    const caOwn = caRef === undefined ? undefined : refOf(caRef, '--xds-client-ca-secret');
    // The same Secret named twice is one Secret, read and watched once.
    const ca = caOwn === undefined || keyOf(caOwn) === keyOf(tls) ? tls : caOwn;
    const data = new Map<string, SecretData>();
    for (const ref of ca === tls ? [tls] : [tls, ca]) data.set(keyOf(ref), await readSecret(client, ref));
    return new AdsTlsSecretSource(client, tls, ca, data, log);
  }

  /** Watches each Secret; `changed` gets what they hold after each change, or why it is not whole. */
  follow(changed: (next: TlsPem | Error) => void): () => void {
    const watches = (this.ca === this.tls ? [this.tls] : [this.tls, this.ca]).map((ref) => {
      const key = keyOf(ref);
      const seen = (data: SecretData) => {
        this.data.set(key, data);
        changed(this.pem());
      };
      const what = `xds: TLS Secret ${key} (${ref.flag})`;
      const hooks = { seen: (o: KubeObject) => seen(dataOf(o)), deleted: () => seen(undefined) };
      return new SecretWatch(this.client, ref.namespace, ref.name, ref.flag, hooks, this.log, what);
    });
    this.watches = watches;
    for (const w of watches) w.start();
    return () => {
      for (const w of watches) w.stop();
    };
  }

  /** Whether each Secret is watched now, for /metrics. */
  watchStates(): WatchedSecret[] {
    return this.watches.map((w) => w.state());
  }

  /** The three parts from the Secrets' data as last seen, or which one is missing. */
  private pem(): TlsPem | Error {
    const part = (ref: SecretRef, field: string, hint: string): Buffer | Error => {
      const data = this.data.get(keyOf(ref));
      if (data === undefined) return new Error(`Secret ${keyOf(ref)} (${ref.flag}) is gone`);
      const value = data[field];
      if (typeof value !== 'string' || value === '')
        return new Error(`Secret ${keyOf(ref)} (${ref.flag}) has no ${field}${hint}`);
      return Buffer.from(value, 'base64');
    };
    const tlsHint = ': a kubernetes.io/tls Secret holds tls.crt and tls.key';
    const caHint =
      this.ca === this.tls
        ? ": the CA of the Envoys' client certificates (cert-manager writes its issuer's CA there), or give --xds-client-ca-secret"
        : ": the CA of the Envoys' client certificates";
    const cert = part(this.tls, 'tls.crt', tlsHint);
    const key = part(this.tls, 'tls.key', tlsHint);
    const ca = part(this.ca, 'ca.crt', caHint);
    for (const p of [cert, key, ca]) if (p instanceof Error) return p;
    return { cert: cert as Buffer, key: key as Buffer, ca: ca as Buffer };
  }
}

function refOf(ref: string, flag: string): SecretRef {
  const [namespace, name, ...rest] = ref.split('/');
  if (!namespace || !name || rest.length > 0) throw new Error(`${flag}: "${ref}" is not NAMESPACE/NAME`);
  return { namespace, name, flag };
}

const keyOf = (ref: SecretRef) => `${ref.namespace}/${ref.name}`;

function dataOf(secret: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const data = secret['data'];
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
}

/** One Secret's data; a Secret missing or not readable is an error that says what to do. */
async function readSecret(client: KubeClient, ref: SecretRef): Promise<Readonly<Record<string, unknown>>> {
  const path = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}`;
  try {
    return dataOf(await client.call('GET', path));
  } catch (e) {
    const at = `${ref.flag}: Secret ${keyOf(ref)}`;
    if (e instanceof KubeApiError && e.status === 404)
      throw new Error(
        `${at} not found (create it first: a kubernetes.io/tls Secret, as cert-manager writes)`,
      );
    if (e instanceof KubeApiError && (e.status === 403 || e.status === 401))
      throw new Error(
        `${at} cannot be read: ${e.message}; the account needs get, list and watch on secrets in namespace ${ref.namespace} (a Role may name only this Secret with resourceNames: [${ref.name}]; docs/fleet.md)`,
      );
    throw new Error(`${at} cannot be read: ${(e as Error).message}`);
  }
}
