// The Kubernetes provider: Gateway API objects, Services, EndpointSlices and the rest from
// an API server, listed and watched (reflector.ts), handed to the same compiler the files
// feed, and their status written back (status-writer.ts). Only what steadfast owns is
// served: a Gateway whose GatewayClass is missing or names another controller is left out
// (the file provider serves it, as a file has no GatewayClass to say otherwise).
import { CONTROLLER_NAME } from '../../translate/status.js';
import type { ObjectInput } from '../../gatewayapi/parse.js';
import type { ProvidedConfig, Provider, StatusLeadership, StatusReport } from '../provider.js';
import { caConfigMapNamed } from './ca-config-maps.js';
import type { KubeClient } from './client.js';
import { WATCHED_KINDS, type WatchedKind, listPath } from './kinds.js';
import { LeaseElector, type LeaseSettings } from './lease.js';
import { NamedSecretTypes, listenerSecretRefs } from './named-secrets.js';
import { type KubeObject, Reflector, objectKey } from './reflector.js';
import { ALWAYS_WRITES, StatusWriter } from './status-writer.js';

export interface KubernetesProviderOptions {
  readonly client: KubeClient;
  /** Write status back (default true); off for a second control plane that only serves. */
  readonly writeStatus?: boolean;
  /** Of several replicas only the holder of this Lease writes status; absent: this one always does. */
  readonly lease?: LeaseSettings;
  readonly log?: (line: string) => void;
}

export class KubernetesProvider implements Provider {
  readonly description: string;
  /**
   * A watch event is a whole object, never half of one, so the settle only has to gather the
   * objects one `kubectl apply` (or Helm, Argo CD) sends one after another, each answered before
   * the next: their events came 5-8 ms apart here (creates; load 24), so a change is swapped in
   * once 15 ms pass without another, and those objects are compiled (and their status written)
   * together rather than one by one, their in-between states served. A run of changes that
   * never pauses is read 50 ms after its first, so a busy cluster's events hold no change back
   * longer; changes that come while a reload runs go together into the next (ConfigStore).
   * A change that finds the store idle after a quiet settle is read and compiled at once
   * (readsEarly): the settle runs alongside the compile and holds only the swap, and another
   * change within it discards that compile for the settle's own reload, so a burst still makes
   * one generation.
   */
  readonly settleMs = 15;
  readonly readsEarly = true;
  readonly maxWaitMs = 50;
  private readonly reflectors: Reflector[];
  private readonly byKind = new Map<string, Reflector>();
  private readonly status: StatusWriter | undefined;
  private readonly elector: LeaseElector | undefined;
  private leaseClient: KubeClient | undefined;
  /** Secrets listeners name that are not kubernetes.io/tls: their type, so status says so. */
  private readonly namedSecrets: NamedSecretTypes;
  private started: Promise<void> | undefined;
  private changed: ((what: string) => void) | undefined;
  /** A report not handed to the status writer yet (report()), and whether close() was called. */
  private reported: StatusReport | undefined;
  private closed = false;
  /** A change seen before watch() was called (between the first read and the watch). */
  private missed: string | undefined;
  /** Each object's input for the compiler (inputOf). */
  private readonly inputs = new WeakMap<KubeObject, ObjectInput>();

  constructor(private readonly options: KubernetesProviderOptions) {
    this.description = `the Kubernetes API server ${options.client.server}`;
    const log = options.log ?? (() => {});
    const owns = { ownsGateway: (ns: string, name: string) => this.ownsGateway(ns, name) };
    const writes = options.writeStatus !== false;
    this.elector =
      writes && options.lease
        ? new LeaseElector(
            // Not counted against the rate limit: status writes must never make the holder lose it.
            (this.leaseClient = options.client.unlimited()),
            options.lease,
            (leading) => (leading ? this.status?.lead(this.statusObjects()) : this.status?.follow()),
            log,
          )
        : undefined;
    this.status = writes
      ? new StatusWriter(
          options.client,
          (kind, ns, name) =>
            this.byKind.get(kind.kind)?.objects.get(kind.namespaced ? `${ns}/${name}` : name),
          owns,
          log,
          this.elector ?? ALWAYS_WRITES,
        )
      : undefined;
    this.reflectors = WATCHED_KINDS.map(
      (kind) =>
        new Reflector(options.client, kind, listPath(kind), {
          changed: (what) => this.notify(what),
          touched: (k, o) => this.status?.touched(k, o),
          deleted: (k, o) => this.status?.forget(k, o),
          ownStatusWrite: (k, o) => this.status?.wrote(k, o) ?? false,
          // A ConfigMap matters only while something names it among its CA certificates.
          ...(kind.kind === 'ConfigMap' ? { relevant: (o: KubeObject) => this.configMapNamed(o) } : {}),
          log,
        }),
    );
    for (const r of this.reflectors) this.byKind.set(r.kind.kind, r);
    this.namedSecrets = new NamedSecretTypes(options.client, (what) => this.notify(what), log);
  }

  /** Something the compiler reads changed; said once watch() is called if it is not yet. */
  private notify(what: string): void {
    if (this.changed) this.changed(what);
    else this.missed = what;
  }

  /**
   * Lists every kind once and starts the watches; rejects with the first kind that cannot be
   * listed, so a cluster that cannot be reached or an account that may not list a kind stops
   * the command with the reason.
   */
  start(): Promise<void> {
    // Each kind the API server does not serve is logged by its reflector.
    this.started ??= Promise.all(this.reflectors.map((r) => r.start())).then(
      async () => {
        // Before the first compile, so that a restart writes no status that only says "not found".
        await this.namedSecrets.prefetch(...this.certificateRefs());
        this.options.log?.(
          `reading Gateway API objects from ${this.options.client.server}; status is written back for controller ${CONTROLLER_NAME}` +
            (this.elector ? ` by the replica that holds the ${this.elector.description}` : ''),
        );
        this.elector?.start();
      },
      (e: unknown) => {
        throw new Error(`cannot read from ${this.options.client.server}: ${(e as Error).message}`);
      },
    );
    return this.started;
  }

  async read(): Promise<ProvidedConfig> {
    await this.start();
    const objects: ObjectInput[] = [];
    for (const r of this.reflectors) {
      for (const o of r.objects.values()) {
        if (
          r.kind.kind === 'Gateway' &&
          !this.ownsGateway(o.metadata?.namespace ?? '', o.metadata?.name ?? '')
        ) {
          continue;
        }
        if (r.kind.kind === 'ConfigMap' && !this.configMapNamed(o)) continue;
        objects.push(this.inputOf(r, o));
      }
    }
    objects.push(...this.namedSecrets.stubs(...this.certificateRefs()));
    return { documents: [], objects, diagnostics: [] };
  }

  /**
   * The object as the compiler's input, made once per object the reflector holds (a change is a
   * new object), not once per read: a read at 10,000 routes made 10,000 of them. Its version
   * moves only when what the compiler reads moves: a status write (which changes resourceVersion)
   * leaves the compiler's work on the object reusable. Its status is left out: the compiler reads
   * none, and a route's is about half of it, to copy to the compiler's thread and keep there.
   */
  private inputOf(r: Reflector, o: KubeObject): ObjectInput {
    let input = this.inputs.get(o);
    if (input) return input;
    const uid = o.metadata?.uid;
    const read = r.readVersion(objectKey(o));
    const { status: _status, ...body } = o;
    input =
      typeof uid === 'string' && read !== undefined
        ? { body, version: `${r.kind.kind}/${uid}@${read}` }
        : { body };
    this.inputs.set(o, input);
    return input;
  }

  watch(changed: (what: string) => void): () => void {
    this.changed = changed;
    if (this.missed !== undefined) changed(this.missed);
    this.missed = undefined;
    return () => {
      this.changed = undefined;
    };
  }

  /**
   * Hands a generation's statuses to the writer on the event loop's next turn: the report comes
   * right after the generation was handed to the ADS server, and its work (the statuses read,
   * the first writes started) would hold the pushes' bytes back until it ends.
   */
  report(status: StatusReport): void {
    const first = this.reported === undefined;
    this.reported = status;
    if (!first) return;
    setImmediate(() => {
      const latest = this.reported;
      this.reported = undefined;
      if (latest && !this.closed) this.status?.report(latest.objects, this.statusObjects());
    });
  }

  leadership(): StatusLeadership {
    const counts = { statusWrites: this.status?.writes ?? 0, statusPending: this.status?.backlog ?? 0 };
    if (this.elector) return { ...this.elector.view(), ...counts };
    const alone = this.status !== undefined;
    return { lease: '', identity: '', leading: alone, holder: null, leadingSince: null, ...counts };
  }

  /** Stops writing, waits for the writes in flight, then gives the Lease back. */
  async close(): Promise<void> {
    this.closed = true;
    this.changed = undefined;
    for (const r of this.reflectors) r.stop();
    await this.status?.close();
    await this.elector?.stop();
    this.leaseClient?.close();
    this.options.client.close();
  }

  /** Every object of a kind whose status steadfast writes, listed only if the writer reads it (its first generation, a new Lease). */
  private *statusObjects(): Generator<[WatchedKind, KubeObject]> {
    for (const r of this.reflectors) {
      if (!r.kind.status) continue;
      for (const o of r.objects.values()) yield [r.kind, o];
    }
  }

  /** The Secrets the owned Gateways' listeners name, and which of them the TLS Secrets list holds. */
  private certificateRefs(): [string[], (key: string) => boolean] {
    const tls = this.byKind.get('Secret')?.objects;
    return [listenerSecretRefs(this.ownedGateways()), (key) => tls?.has(key) ?? false];
  }

  /** A BackendTLSPolicy or an owned Gateway's client-certificate validation names it (ca-config-maps.ts). */
  private configMapNamed(cm: KubeObject): boolean {
    const policies = this.byKind.get('BackendTLSPolicy')?.objects.values() ?? [];
    return caConfigMapNamed(cm, policies, this.ownedGateways());
  }

  /** The Gateways whose GatewayClass names steadfast's controller. */
  private ownedGateways(): KubeObject[] {
    return [...(this.byKind.get('Gateway')?.objects.values() ?? [])].filter((gw) =>
      this.ownsGateway(gw.metadata?.namespace ?? '', gw.metadata?.name ?? ''),
    );
  }

  private ownsGateway(namespace: string, name: string): boolean {
    const gw = this.byKind.get('Gateway')?.objects.get(`${namespace}/${name}`);
    const className = (gw?.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
    if (typeof className !== 'string') return false;
    const gc = this.byKind.get('GatewayClass')?.objects.get(className);
    return (gc?.spec as { controllerName?: unknown } | undefined)?.controllerName === CONTROLLER_NAME;
  }
}
