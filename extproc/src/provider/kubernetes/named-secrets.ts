// Secrets a listener names that are not among the kubernetes.io/tls Secrets the provider lists
// (kinds.ts reads no other type). Each is looked up by name, and when it exists with another
// type the compiler gets it without its data, so the listener says "Secret is of type Opaque"
// (InvalidCertificateRef) rather than "not found". Nothing of its content is held.
import type { ObjectInput } from '../../gatewayapi/parse.js';
import { KubeApiError, type KubeClient } from './client.js';
import type { KubeObject } from './reflector.js';

/** How long an answer stands before the next read asks again (a Secret deleted or retyped). */
const RECHECK_MS = 30_000;

interface Answer {
  readonly type: string | undefined;
  readonly at: number;
  /**
   * The compiler's input for it, one object while its type holds: a read hands over the same
   * inputs as the last, so the crossing to the compiler thread keeps its unchanged end.
   */
  readonly input: ObjectInput | undefined;
}

/** A Secret of another type, as the compiler sees it: its type, no data. */
function typeOnly(key: string, type: string): ObjectInput {
  const [namespace, name] = key.split('/');
  return { body: { apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name }, type, data: {} } };
}

export class NamedSecretTypes {
  private readonly answers = new Map<string, Answer>();
  private readonly asking = new Map<string, Promise<void>>();

  constructor(
    private readonly client: KubeClient,
    /** An answer changed what the compiler should see. */
    private readonly changed: (what: string) => void,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * The Secrets (`namespace/name`) listeners name and the listed ones lack, as type-only
   * objects where one exists with another type; asks about the rest in the background.
   */
  stubs(named: Iterable<string>, listed: (key: string) => boolean): ObjectInput[] {
    const out: ObjectInput[] = [];
    const now = Date.now();
    for (const key of new Set(named)) {
      if (listed(key)) continue;
      const answer = this.answers.get(key);
      if (!answer || now - answer.at > RECHECK_MS) void this.ask(key, answer?.type);
      if (answer?.input) out.push(answer.input);
    }
    return out;
  }

  /** Asks about every named Secret the listed ones lack, and waits: the first compile then knows their types. */
  async prefetch(named: Iterable<string>, listed: (key: string) => boolean): Promise<void> {
    const keys = [...new Set(named)].filter((key) => !listed(key));
    await Promise.all(keys.map((key) => this.ask(key, undefined)));
  }

  private ask(key: string, before: string | undefined): Promise<void> {
    const under = this.asking.get(key);
    if (under) return under;
    const [namespace = '', name = ''] = key.split('/');
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`;
    const asked = this.client
      .call<{ type?: string }>('GET', path)
      .then(
        (secret) => secret.type ?? 'Opaque',
        (e: unknown) => {
          if (e instanceof KubeApiError && e.status === 404) return undefined;
          this.log(`cannot look up Secret ${key} a listener names: ${(e as Error).message}`);
          return before;
        },
      )
      .then((type) => {
        this.asking.delete(key);
        const was = this.answers.get(key);
        const input = type === undefined ? undefined : type === was?.type ? was.input : typeOnly(key, type);
        this.answers.set(key, { type, at: Date.now(), input });
        if (type !== before) this.changed(`Secret ${key}`);
      });
    this.asking.set(key, asked);
    return asked;
  }
}

/** The Secrets (`namespace/name`) the listeners of these Gateways name as certificates. */
export function listenerSecretRefs(gateways: Iterable<KubeObject>): string[] {
  const refs: string[] = [];
  for (const gw of gateways) {
    const namespace = String(gw.metadata?.namespace ?? '');
    const listeners = (gw.spec as { listeners?: unknown } | undefined)?.listeners;
    if (!Array.isArray(listeners)) continue;
    for (const l of listeners as { tls?: { certificateRefs?: unknown } }[]) {
      const certificateRefs = l?.tls?.certificateRefs;
      if (!Array.isArray(certificateRefs)) continue;
      for (const r of certificateRefs as {
        group?: unknown;
        kind?: unknown;
        name?: unknown;
        namespace?: unknown;
      }[]) {
        if ((r?.group ?? '') !== '' || (r?.kind ?? 'Secret') !== 'Secret' || typeof r?.name !== 'string')
          continue;
        refs.push(`${typeof r.namespace === 'string' ? r.namespace : namespace}/${r.name}`);
      }
    }
  }
  return refs;
}
