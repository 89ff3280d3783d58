// The ADS server: one control plane for any number of gateway-mode Envoys. Each Envoy opens
// one Aggregated Discovery Service stream, state of the world or incremental (delta: only
// what changed is sent, ads-delta.ts), and asks for clusters and listeners; its listeners ask
// for their route configurations and certificates by name. One generation at a time is in
// flight to each stream; newer ones coalesce (ads-stream.ts has the stall rule). On a delta
// stream from an Envoy that takes them (1.38 on), a route configuration's virtual hosts come
// apart from it (VHDS, ads-routes.ts), each its own resource, sent once the Envoy has answered
// for the route configurations (and asked for the hosts: a generation is delivered only with
// them, a bounded wait for an Envoy that never asks); other streams get route configurations whole.
//
// A generation reaches an Envoy in two steps: its clusters first; then, once the Envoy has
// answered for them (it answers only when the new clusters have warmed), its listeners,
// routes and certificates, so that no route names a cluster the Envoy is still warming.
// The clusters an Envoy's accepted routes name stay in its cluster set until it accepts
// routes that no longer name them: an Envoy that refuses a generation keeps serving the one
// before, with its clusters. Each answer is kept: the version an Envoy took (ACK), or what
// it refused and why (NACK: logged, and shown by status()).
//
// What the server hands out includes the session keys (in the filter's configuration) and
// HTTPS private keys (over SDS): with TLS, every client must present a certificate from
// the client CA (ads-tls.ts; an open stream whose certificate a changed CA no longer takes, or
// that expires, is ended: ads-peer-trust.ts); with a token, a stream must present it as well
// (`authorization: Bearer …`, which envoy-config --xds-token-file puts in the bootstrap).
import { isIP } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { TYPE_CLUSTER, TYPE_LISTENER, TYPE_ROUTE_CONFIGURATION, TYPE_SECRET } from '../envoy/envoy-names.js';
import {
  TYPE_CLUSTER_LOAD_ASSIGNMENT as TYPE_ENDPOINTS,
  TYPE_VIRTUAL_HOST,
  type XdsResources,
} from '../envoy/xds-resources.js';
import type { Json } from '../json.js';
import { type LoadTimes, epochMs } from '../pipeline/load-times.js';
import type { Resource } from './ads-resource.js';
import { type Whole, step } from './ads-delta-step.js';
import {
  type DiscoveryRequest,
  type Encoded,
  type Flight,
  LazyEncoded,
  type PushTimes,
  Stream,
} from './ads-stream.js';
import { PeerTrust } from './ads-peer-trust.js';
import { type AdsTlsFiles, AdsTlsProvider, type AdsTlsSource, adsTlsFileSource } from './ads-tls.js';
import { adsServiceDefinition } from './ads-service.js';
import { type EncodedRoutes, RouteResources, routeConfigurationOf } from './ads-routes.js';
import { KeptEncodings } from './kept-encodings.js';

/** What follows the clusters, in order. */
const AFTER_CLUSTERS = [TYPE_LISTENER, TYPE_ROUTE_CONFIGURATION, TYPE_SECRET] as const;
const SERVED: ReadonlySet<string> = new Set([
  TYPE_CLUSTER,
  TYPE_ENDPOINTS,
  ...AFTER_CLUSTERS,
  TYPE_VIRTUAL_HOST,
]);
/** Where an encoded generation keeps its route configurations without virtual hosts (VHDS streams). */
const ROUTE_HEADS = `${TYPE_ROUTE_CONFIGURATION}#vhds`;
/** Envoy takes `ads` as VHDS's source from this version on (on a delta ADS stream). */
const VHDS_SINCE = { major: 1, minor: 38 };
/** Types Envoy asks for by name (the others: everything there is). */
const NAMED_TYPES: ReadonlySet<string> = new Set([TYPE_ENDPOINTS, TYPE_ROUTE_CONFIGURATION, TYPE_SECRET]);
/** How long the rest of a generation waits for an Envoy's answer on its clusters. */
const CLUSTER_ANSWER_WAIT_MS = 30_000;
/** How long a VHDS stream is waited for, once, to ask for virtual hosts (waitsForHosts). */
const HOSTS_SUBSCRIPTION_WAIT_MS = 10_000;

/** What one connected Envoy has taken and refused. */
export interface XdsClientStatus {
  readonly node: string;
  /** The node's kind: the listener address its bootstrap names ("" for 0.0.0.0). */
  readonly kind: string;
  readonly connectedAt: string;
  /** Type URL → the version it last accepted. */
  readonly acked: Readonly<Record<string, string>>;
  /** What it refused, per type, while its last answer for that type is a refusal. */
  readonly nacked: readonly { readonly type: string; readonly version: string; readonly message: string }[];
  /** The generation on its way to it (sent, not every part answered yet), if any. */
  readonly inFlight?: string;
  /** The last generation every push of which it answered, and when that was (epoch ms). */
  readonly delivered?: { readonly version: string; readonly at: number };
  /**
   * A delta Envoy that takes virtual hosts apart (VHDS) took its route configurations but has
   * not asked for their virtual hosts: it serves no route. Its generations count as delivered
   * without them after one wait (AdsServerOptions.hostsWaitMs) so that they do not stall.
   */
  readonly withoutVirtualHosts?: true;
  /** Resources sent on this stream since it opened, and their encoded bytes. */
  readonly sent: { readonly resources: number; readonly bytes: number };
  /** Per type, its last push's generation and times (epoch ms). */
  readonly pushes: Readonly<Record<string, PushTimes>>;
}

/** When the current generation passed each stage, in epoch ms (pipeline/load-times.ts). */
export interface GenerationTimes {
  readonly version: string;
  /** Its load, from the change event to the snapshot built. */
  readonly load?: LoadTimes;
  /** Handed to the ADS server. */
  readonly updatedAt: number;
  /** Per kind of Envoy: its resources generated from the IR, then encoded (first asked for). */
  readonly kinds: Readonly<
    Record<string, { readonly startedAt: number; readonly generatedAt: number; readonly encodedAt: number }>
  >;
}

export interface XdsStatus {
  readonly envoys: readonly XdsClientStatus[];
  /** A generation that could not be encoded for some kind of Envoy (none was sent to it). */
  readonly generationError?: { readonly version: string; readonly kind: string; readonly message: string };
  /** The current generation's times. */
  readonly generation?: GenerationTimes;
}

export interface AdsServerOptions {
  /**
   * The resources of the current generation for one kind of Envoy. `kind` is the listener
   * address from the node's bootstrap metadata (`steadfast_node_kind`), "" when absent.
   */
  readonly resources: (kind: string) => XdsResources;
  readonly log: (line: string) => void;
  /** When set, every stream must carry `authorization: Bearer <token>`. */
  readonly token?: string;
  /**
   * When set, mutual TLS: the server's certificate and key, and the CA its clients' certificates
   * come from, as files or another source (a Kubernetes Secret).
   */
  readonly tls?: AdsTlsFiles | AdsTlsSource;
  /** How long the rest of a generation waits for an Envoy's answer on its clusters (default 30 s). */
  readonly clusterWaitMs?: number;
  /** How long a stream may leave what it was sent unread or unanswered before it is reset (default 60 s). */
  readonly stallMs?: number;
  /**
   * How long a VHDS stream is waited for, once per stream, to ask for the virtual hosts of the
   * route configurations it took or holds: by its generation before it counts as delivered, and
   * by a bridge, which goes out only once they are asked for (default 10 s).
   */
  readonly hostsWaitMs?: number;
}

/** A stream that does not read for this long is reset (Envoy opens a new one). */
const STALL_MS = 60_000;

/** For logs: a client-chosen string, quoted and cut short. */
function shown(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
}

export class AdsServer {
  private readonly streams = new Set<Stream>();
  private version = '';
  /** This generation, per kind of Envoy: encoded, or why it could not be. */
  private encoded = new Map<string, Encoded | { error: string }>();
  private generationError: XdsStatus['generationError'];
  private times: { version: string; load?: LoadTimes; updatedAt: number } | undefined;
  private kindTimes = new Map<string, GenerationTimes['kinds'][string]>();
  /**
   * Each route configuration's virtual hosts as last encoded, one for all kinds of Envoy (they
   * share the route list): a change to one route encodes its host alone (route-files.ts), not
   * the 10,000 others, whichever kind's stream asks first in a generation.
   */
  private readonly routeEncoder = new RouteResources();
  /**
   * This generation's encodings by the list they were made from: kinds of Envoy handed the same
   * list (every type but their listeners, ads-runner.ts) share its encoding, and with it the
   * steps of delta streams from one generation's map to the next (ads-delta-step.ts).
   */
  private lists = new WeakMap<
    readonly Json[],
    { readonly type: string; readonly map: ReadonlyMap<string, Resource> }
  >();
  private routeLists = new WeakMap<readonly Json[], EncodedRoutes>();
  /**
   * Each encoded generation's bridge form of the route configurations named (ads-routes.ts
   * explicitHosts), kept with it: a flight of an older generation bridges with its own.
   */
  private readonly bridges = new WeakMap<Encoded, NonNullable<EncodedRoutes['explicitHosts']>>();
  /** The clusters', endpoints', listeners' and certificates' encodings, kept for the next generation. */
  private readonly encodings = new KeptEncodings();
  private server: grpc.Server | undefined;
  private tls: AdsTlsProvider | undefined;
  /** With TLS: the open streams' client certificates, checked again on a CA change and at expiry. */
  private peers: PeerTrust<Stream> | undefined;
  /** Where it listens, once started. */
  address = '';

  private readonly clusterWaitMs: number;

  constructor(private readonly options: AdsServerOptions) {
    this.clusterWaitMs = options.clusterWaitMs ?? CLUSTER_ANSWER_WAIT_MS;
  }

  /**
   * A virtual host as the generator's memo keeps it (envoy/generation-memo.ts `keep`): encoded
   * once by the encoder that makes this server's route resources, its JSON let go.
   */
  keepVirtualHost(host: Json, configuration: string): Json {
    return this.routeEncoder.keepHost(host, configuration);
  }

  /** The gRPC service definition (for a server of the caller's, or start()). */
  definition(): grpc.ServiceDefinition<grpc.UntypedServiceImplementation> {
    return adsServiceDefinition();
  }

  /** Serves ADS on `address` (HOST:PORT; port 0 picks one); resolves to the bound address. */
  async start(address: string): Promise<string> {
    const server = new grpc.Server();
    server.addService(this.definition(), {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, Json>) =>
        this.serve(call, 'sotw'),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, Json>) =>
        this.serve(call, 'delta'),
    });
    const tls = this.options.tls;
    if (tls) {
      const source = 'follow' in tls ? tls : adsTlsFileSource(tls);
      this.tls = new AdsTlsProvider(source, this.options.log, (ca) => this.peers?.caChanged(ca));
      this.peers = new PeerTrust<Stream>(this.tls.ca, (s, why) => this.untrusted(s, why), this.options.log);
    }
    const credentials = this.tls?.credentials() ?? grpc.ServerCredentials.createInsecure();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, credentials, (e, p) => (e ? reject(e) : resolve(p))),
    ).catch((e: unknown) => {
      this.tls?.close();
      throw e;
    });
    this.server = server;
    this.address = address.replace(/:\d+$/, `:${port}`);
    return this.address;
  }

  /** How the port is protected, for the log: the certificate in use, or clear text. */
  get transport(): string {
    return this.tls ? `mutual TLS (${this.tls.summary})` : 'clear text';
  }

  /** Stops taking streams and ends the open ones (Envoys keep their configuration and reconnect). */
  async stop(): Promise<void> {
    this.tls?.close();
    this.peers?.stop();
    const server = this.server;
    if (!server) return;
    for (const s of this.streams) {
      // A stream with writes its peer has not read would hold the shutdown: reset it.
      if (s.unread) s.reset();
      else {
        s.dispose();
        s.call.end();
      }
    }
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }

  /**
   * A new generation, pushed to every stream that has nothing in flight; a stream still busy
   * with an older one gets the newest when it answered for that (generations coalesce).
   */
  update(version: string, load?: LoadTimes): void {
    this.times = { version, ...(load ? { load } : {}), updatedAt: epochMs() };
    this.kindTimes = new Map();
    this.lists = new WeakMap();
    this.routeLists = new WeakMap();
    this.encodings.rotate();
    this.version = version;
    this.encoded = new Map();
    this.generationError = undefined;
    for (const s of this.streams) {
      if (s.node !== '' && !s.flight) this.pushGeneration(s);
    }
  }

  status(): XdsStatus {
    return {
      envoys: [...this.streams]
        .filter((s) => s.node !== '')
        .map((s) => ({
          node: s.node,
          kind: s.kind,
          connectedAt: s.connectedAt,
          acked: Object.fromEntries(s.acked),
          nacked: [...s.nacked].map(([type, n]) => ({ type, ...n })),
          ...(s.flight ? { inFlight: s.flight.version } : {}),
          ...(s.delivered ? { delivered: s.delivered } : {}),
          ...(s.hostsWaitOver && !s.names.has(TYPE_VIRTUAL_HOST)
            ? { withoutVirtualHosts: true as const }
            : {}),
          sent: { resources: s.sentResources, bytes: s.sentBytes },
          pushes: Object.fromEntries(s.pushTimes),
        })),
      ...(this.generationError ? { generationError: this.generationError } : {}),
      ...(this.times ? { generation: { ...this.times, kinds: Object.fromEntries(this.kindTimes) } } : {}),
    };
  }

  private resourcesFor(kind: string): Encoded | undefined {
    const cached = this.encoded.get(kind);
    if (cached) return 'error' in cached ? undefined : (cached as Encoded);
    try {
      const encoded = this.encode(kind);
      this.encoded.set(kind, encoded);
      return encoded;
    } catch (e) {
      // Once per generation and kind: the Envoys of that kind keep the generation they have.
      const message = (e as Error).message;
      this.encoded.set(kind, { error: message });
      this.generationError = { version: this.version, kind, message };
      this.options.log(
        `xds: generation ${this.version} not sent to Envoys on ${kind || '0.0.0.0'}; they keep the one they have: ${message}`,
      );
      return undefined;
    }
  }

  private encode(kind: string): Encoded {
    const startedAt = epochMs();
    const generated = this.options.resources(kind);
    const generatedAt = epochMs();
    const byName = (type: string, list: readonly Json[], key = 'name') => this.byName(type, list, key);
    let routes = this.routeLists.get(generated.routeConfigurations);
    if (!routes) {
      routes = this.routeEncoder.encode(generated.routeConfigurations, generated.explicitRouteConfigurations);
      this.routeLists.set(generated.routeConfigurations, routes);
    }
    for (const w of generated.warnings) this.options.log(`warning: ${w}`);
    const encoded = new LazyEncoded(
      [
        [TYPE_CLUSTER, byName(TYPE_CLUSTER, generated.clusters)],
        [TYPE_ENDPOINTS, byName(TYPE_ENDPOINTS, generated.endpoints ?? [], 'cluster_name')],
        [TYPE_LISTENER, byName(TYPE_LISTENER, generated.listeners)],
        [ROUTE_HEADS, routes.heads],
        [TYPE_SECRET, byName(TYPE_SECRET, generated.secrets)],
      ],
      new Map([
        [TYPE_ROUTE_CONFIGURATION, routes.whole],
        [TYPE_VIRTUAL_HOST, routes.virtualHosts],
      ]),
    );
    if (routes.explicitHosts) this.bridges.set(encoded, routes.explicitHosts);
    this.kindTimes.set(kind, { startedAt, generatedAt, encodedAt: epochMs() });
    return encoded;
  }

  /** A list of resources of one type by name, encoded (once per generation for every kind handed the list). */
  private byName(type: string, list: readonly Json[], key: string): ReadonlyMap<string, Resource> {
    const shared = this.lists.get(list);
    if (shared?.type === type) return shared.map;
    const map = new Map(
      list.map((r) => {
        const name = r[key] as string;
        return [name, this.encodings.resource(type, name, r)];
      }),
    );
    this.lists.set(list, { type, map });
    return map;
  }

  /**
   * What a stream gets for one type: all of it, or the names it asked for. All of it is the
   * generation's own map (delta streams holding it share the work of a step: ads-delta-step.ts).
   */
  private selection(s: Stream, type: string, encoded: Encoded): readonly Resource[] | Whole {
    // A VHDS stream's route configurations are the heads: the whole ones (made when first read,
    // LazyEncoded) are not made for it.
    const vhdsRoutes = type === TYPE_ROUTE_CONFIGURATION && s.vhds;
    const all = encoded.get(vhdsRoutes ? ROUTE_HEADS : type) ?? new Map<string, Resource>();
    if (type === TYPE_CLUSTER) return withRouteClusters(s.routeClusters, all);
    if (type === TYPE_VIRTUAL_HOST) {
      // The hosts of the route configurations it asked for (a VHDS stream's only).
      const asked = new Set(s.vhds ? s.names.get(TYPE_ROUTE_CONFIGURATION) : []);
      // Every host belongs to one of the generation's route configurations (a head each).
      const heads = encoded.get(ROUTE_HEADS)?.keys() ?? [];
      if (asked.size > 0 && [...heads].every((n) => asked.has(n))) return all;
      return [...all.values()].filter((r) => asked.has(routeConfigurationOf(r.name)));
    }
    if (!NAMED_TYPES.has(type)) return all;
    // The endpoints of a cluster kept for the routes the Envoy accepted are kept with it.
    const kept = type === TYPE_ENDPOINTS ? s.routeEndpoints : undefined;
    return (s.names.get(type) ?? []).flatMap((n) => {
      const r = all.get(n) ?? kept?.get(n);
      return r ? [r] : [];
    });
  }

  /** What a stream is sent now: the generation on its way to it, else the current one. */
  private generationFor(s: Stream): { version: string; encoded: Encoded } | undefined {
    if (s.flight) return s.flight;
    const encoded = this.version === '' ? undefined : this.resourcesFor(s.kind);
    return encoded ? { version: this.version, encoded } : undefined;
  }

  /** Whether anything was sent (a delta stream is sent nothing when nothing changed). */
  private sendType(s: Stream, type: string, g: { version: string; encoded: Encoded } | undefined): boolean {
    if (g === undefined) return false;
    if (s.send(type, g.version, this.selection(s, type, g.encoded))) return true;
    // Delta, nothing changed: with its last push answered, the Envoy holds this generation of
    // the type (after a refusal, the one before it again, which is this one's content).
    if ((s.acked.has(type) || s.nacked.has(type)) && !s.unanswered.has(type)) {
      s.acked.set(type, g.version);
      s.nacked.delete(type);
    }
    return false;
  }

  /** The current generation to a stream: its clusters now, the rest once the Envoy answers for them. */
  private pushGeneration(s: Stream): void {
    const encoded = this.version === '' ? undefined : this.resourcesFor(s.kind);
    if (!encoded) return;
    const flight: Flight = { version: this.version, encoded, step: 'clusters', timer: undefined };
    s.flight = flight;
    const clustersSent = s.names.has(TYPE_CLUSTER) && this.sendType(s, TYPE_CLUSTER, flight);
    // The endpoints go with the clusters: Envoy warms a cluster with them.
    if (s.names.has(TYPE_ENDPOINTS)) this.sendType(s, TYPE_ENDPOINTS, flight);
    // No clusters asked for, or none changed (delta): nothing to warm, the rest goes now.
    if (!clustersSent) {
      this.pushRest(s);
      return;
    }
    flight.timer = setTimeout(() => {
      if (s.flight !== flight || flight.step !== 'clusters') return;
      this.options.log(
        `xds: ${shown(s.node)} has not answered for the clusters of generation ${flight.version} in ${this.clusterWaitMs / 1000} s; sending the rest`,
      );
      // The generation lands once the clusters are answered too; until then they count as unread.
      this.pushRest(s);
    }, this.clusterWaitMs);
    flight.timer.unref();
  }

  private pushRest(s: Stream): void {
    const flight = s.flight;
    if (!flight) return;
    if (flight.timer) clearTimeout(flight.timer);
    flight.timer = undefined;
    if (this.sendBridge(s, flight)) return;
    this.sendRest(s, flight);
  }

  private sendRest(s: Stream, flight: Flight): void {
    if (flight.timer) clearTimeout(flight.timer);
    flight.timer = undefined;
    flight.step = 'rest';
    for (const type of AFTER_CLUSTERS) if (s.names.has(type)) this.sendType(s, type, flight);
    this.sendVirtualHosts(s, flight);
    this.maybeLand(s);
  }

  /**
   * Before a VHDS stream takes a changed head of a route configuration it holds, that
   * configuration's hosts with every route saying its own `reset` switch, and those it no longer
   * has removed: Envoy applies a head over the hosts it has, and these are right under the head
   * before and the one after (docs/fleet.md). The heads follow their answer (pushRest again).
   * Whether the rest waits: for that answer; for the answer to the hosts sent before (a stream
   * that leaves it unanswered is reset, Stream's stall); or, on a new stream, for its asking for
   * virtual hosts, the one wait of waitsForHosts.
   */
  private sendBridge(s: Stream, flight: Flight): boolean {
    const changed = changedHeads(s, flight.encoded);
    // Made only now, for these configurations only: most generations change no head.
    const explicit = changed.size > 0 ? this.bridges.get(flight.encoded)?.(changed) : undefined;
    if (!explicit) return false;
    if (!s.names.has(TYPE_VIRTUAL_HOST)) {
      // Not asked for (yet): waited for once per stream, then the heads go without it.
      if (!this.waitsForHosts(s, flight, true, () => this.sendRest(s, flight))) return false;
    } else if (!s.unanswered.has(TYPE_VIRTUAL_HOST)) {
      const ofChanged = (name: string) => changed.has(routeConfigurationOf(name));
      const hosts = [...explicit.values()];
      // The hosts those configurations no longer have go too: under the new head they would run
      // with the wrong switch. Held already (their answer came): the heads may go.
      if (!s.send(TYPE_VIRTUAL_HOST, flight.version, hosts, ofChanged)) return false;
    }
    flight.step = 'bridge';
    return true;
  }

  /**
   * The answer to a bridge: taken, the heads follow; refused, the Envoy keeps the generation it
   * has (its heads over the other hosts would run routes with the wrong switch).
   */
  private bridgeAnswered(s: Stream, refused: boolean): void {
    const flight = s.flight;
    if (!flight) return;
    if (!refused) {
      this.pushRest(s);
      return;
    }
    if (flight.timer) clearTimeout(flight.timer);
    s.flight = undefined;
    this.options.log(
      `xds: ${shown(s.node)} refused the virtual hosts sent before generation ${flight.version}'s route configurations; it keeps the generation it has`,
    );
    if (flight.version !== this.version) this.pushGeneration(s);
  }

  /**
   * A VHDS stream's virtual hosts, once it has answered for their route configurations: Envoy
   * makes a route configuration's VHDS subscription when it takes it, and hosts that come before
   * are dropped (while counted as held).
   */
  private sendVirtualHosts(s: Stream, g: { version: string; encoded: Encoded } | undefined): void {
    if (!s.vhds || !s.names.has(TYPE_VIRTUAL_HOST) || s.unanswered.has(TYPE_ROUTE_CONFIGURATION)) return;
    if (s.flight?.step === 'clusters' || s.flight?.step === 'bridge') return;
    this.sendType(s, TYPE_VIRTUAL_HOST, g);
  }

  /** Every push of the generation in flight answered: it is delivered, and a newer one follows. */
  private maybeLand(s: Stream): void {
    const flight = s.flight;
    if (!flight || flight.step === 'clusters' || flight.step === 'bridge' || s.unanswered.size > 0) return;
    if (this.awaitsHostSubscription(s, flight)) return;
    // Asked for (or refused) while waited for: the wait is over.
    if (flight.timer) clearTimeout(flight.timer);
    flight.timer = undefined;
    // Delta: now that its routes name this generation's clusters only, the others are removed
    // (state of the world drops them with the next generation's clusters).
    if (flight.step === 'rest' && s.delta && s.names.has(TYPE_CLUSTER)) {
      flight.step = 'cleanup';
      if (this.sendType(s, TYPE_CLUSTER, flight)) return;
    }
    s.flight = undefined;
    s.delivered = { version: flight.version, at: epochMs() };
    if (flight.version !== this.version) this.pushGeneration(s);
  }

  /**
   * Whether the generation waits for its virtual hosts to be asked for: a VHDS stream's Envoy
   * asks once it took route configurations that name them (after answering for those), and
   * until it has them it serves no route.
   */
  private awaitsHostSubscription(s: Stream, flight: Flight): boolean {
    if (!s.vhds) return false;
    const routes = s.names.get(TYPE_ROUTE_CONFIGURATION) ?? [];
    // Route configurations refused (or none asked for): no virtual hosts are asked for.
    if (routes.length === 0 || s.nacked.has(TYPE_ROUTE_CONFIGURATION)) return false;
    return this.waitsForHosts(s, flight, false, () => this.maybeLand(s));
  }

  /**
   * Waits for a VHDS stream to ask for virtual hosts, `hostsWaitMs` at most and once per stream,
   * for its generation to count as delivered or (`bridge`) for a bridge to go out: a client that
   * never asks is not waited for again, whichever waited (hostsWaitOver; status says so), so it
   * holds neither its generations nor its heads back. Whether it waits; `then` when it gave up.
   */
  private waitsForHosts(s: Stream, flight: Flight, bridge: boolean, then: () => void): boolean {
    if (s.hostsWaitOver || s.names.has(TYPE_VIRTUAL_HOST)) return false;
    if (flight.timer) return true;
    const waitMs = this.options.hostsWaitMs ?? HOSTS_SUBSCRIPTION_WAIT_MS;
    flight.timer = setTimeout(() => {
      flight.timer = undefined;
      if (s.flight !== flight || s.names.has(TYPE_VIRTUAL_HOST)) return;
      s.hostsWaitOver = true;
      const what = bridge
        ? `holds route configurations whose heads generation ${flight.version} changes`
        : `took the route configurations of generation ${flight.version}`;
      this.options.log(
        `xds: ${shown(s.node)} ${what} but has not asked for their virtual hosts in ${waitMs / 1000} s; ${bridge ? 'the heads go without their bridge, and ' : ''}its generations count as delivered without them`,
      );
      then();
    }, waitMs);
    flight.timer.unref();
    return true;
  }

  private serve(call: grpc.ServerDuplexStream<DiscoveryRequest, Json>, protocol: 'sotw' | 'delta'): void {
    if (this.options.token !== undefined) {
      const presented = call.metadata.get('authorization')[0];
      if (presented !== `Bearer ${this.options.token}`) {
        this.options.log('xds: a stream without the token was refused');
        call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'an xDS token is required' });
        return;
      }
    }
    const s = new Stream(call, protocol, this.options.stallMs ?? STALL_MS, (stuck) => this.stalled(stuck));
    this.streams.add(s);
    if (this.peers && !this.peers.opened(s)) return;
    const gone = () => {
      this.peers?.closed(s);
      s.dispose();
      if (this.streams.delete(s) && s.node !== '') this.options.log(`xds: ${shown(s.node)} disconnected`);
    };
    call.on('data', (req: DiscoveryRequest) => this.onRequest(s, req));
    call.on('end', () => {
      gone();
      call.end();
    });
    call.on('error', gone);
    call.on('cancelled', gone);
  }

  /** A stream that left what it was sent unread or unanswered for too long: reset, and what it holds let go. */
  private stalled(s: Stream): void {
    this.streams.delete(s);
    this.options.log(
      `xds: ${shown(s.node)} has not read or answered what it was sent for ${(this.options.stallMs ?? STALL_MS) / 1000} s; its stream is reset (Envoy opens a new one)`,
    );
    s.reset();
  }

  /** A stream whose client certificate the port no longer takes: reset (its connection goes too). */
  private untrusted(s: Stream, why: string): void {
    this.streams.delete(s);
    this.options.log(
      `xds: ${s.node === '' ? 'a client not named yet' : shown(s.node)}: stream and connection ended, ${why} (a reconnect goes through the handshake again)`,
    );
    s.reset();
  }

  /** The node's first request, an answer and a subscription, in the order ADS defines. */
  private onRequest(s: Stream, req: DiscoveryRequest): void {
    if (s.closed) return;
    s.heard();
    if (s.node === '' && !this.identify(s, req)) return;
    const type = req.type_url ?? '';
    if (!SERVED.has(type)) {
      // Not something a gateway serves: one empty answer, never one to its ACK.
      if (!req.response_nonce) s.send(type, this.version, []);
      // Its answer is never waited for: a generation in flight does not hang on it.
      s.unanswered.delete(type);
      return;
    }
    const last = s.lastNonce.get(type);
    const answers = req.response_nonce !== undefined && req.response_nonce === last?.nonce;
    // An answer to something older than the last push of this type: superseded, ignored (on a
    // delta stream the request may still change what it asks for).
    if (req.response_nonce && !answers && s.protocol === 'sotw') return;
    if (answers && last) this.onAnswer(s, type, last.version, req);
    if (answers && type === TYPE_VIRTUAL_HOST && s.flight?.step === 'bridge')
      this.bridgeAnswered(s, req.error_detail !== undefined);
    // Its route configurations taken (not refused: Envoy drops hosts of one it does not hold,
    // while the stream's state would count them held): now their virtual hosts.
    if (answers && !req.error_detail && type === TYPE_ROUTE_CONFIGURATION)
      this.sendVirtualHosts(s, this.generationFor(s));
    const names = namesAsked(s, type, req);
    const before = s.names.get(type);
    s.names.set(type, names);
    // Answer a new subscription, or new names; an ACK or NACK of the last push needs none.
    if (before === undefined || before.join('\n') !== names.join('\n')) this.onSubscribe(s, type, last);
    // The Envoy answered for the clusters (taken, warmed, or refused): the rest may follow.
    const flight = s.flight;
    if (
      req.response_nonce &&
      type === TYPE_CLUSTER &&
      flight?.step === 'clusters' &&
      flight.version === last?.version
    ) {
      this.pushRest(s);
    } else {
      this.maybeLand(s);
    }
  }

  /** The first request names the node and its kind; a kind that is not an IP address ends the stream. */
  private identify(s: Stream, req: DiscoveryRequest): boolean {
    const kind =
      (req.node?.metadata?.fields?.['steadfast_node_kind'] as { stringValue?: string } | undefined)
        ?.stringValue ?? '';
    // The kind becomes the listeners' address: an IP address or nothing, never a name.
    if (kind !== '' && isIP(kind) === 0) {
      this.options.log(
        `xds: a node named ${shown(req.node?.id ?? '')} gave listener address ${shown(kind)}: refused`,
      );
      this.streams.delete(s);
      s.dispose();
      s.call.emit('error', {
        code: grpc.status.INVALID_ARGUMENT,
        details: 'steadfast_node_kind must be an IP address',
      });
      return false;
    }
    s.node = req.node?.id ?? 'unknown';
    s.kind = kind;
    s.vhds = s.delta !== undefined && takesVhdsOverAds(req.node);
    this.options.log(`xds: ${shown(s.node)} connected${s.kind ? ` (listeners on ${s.kind})` : ''}`);
    return true;
  }

  /** An ACK or a NACK of the last push of `type`, which carried `version`. */
  private onAnswer(s: Stream, type: string, version: string, req: DiscoveryRequest): void {
    s.answered(type);
    if (req.error_detail) {
      s.delta?.refused(type);
      const message = req.error_detail.message ?? '';
      s.nacked.set(type, { version, message });
      this.options.log(
        `xds: ${shown(s.node)} refused generation ${version} of ${shortType(type)}: ${message}`,
      );
      return;
    }
    s.acked.set(type, version);
    s.nacked.delete(type);
    // Its routes (on a VHDS stream, its virtual hosts) now name this generation's clusters only
    // (not yet after a bridge: the heads and the other configurations' hosts follow).
    if (type !== (s.vhds ? TYPE_VIRTUAL_HOST : TYPE_ROUTE_CONFIGURATION) || s.flight?.step === 'bridge')
      return;
    const g =
      s.flight?.version === version ? s.flight : version === this.version ? this.generationFor(s) : undefined;
    s.routeClusters = g?.encoded.get(TYPE_CLUSTER) ?? s.routeClusters;
    s.routeEndpoints = g?.encoded.get(TYPE_ENDPOINTS) ?? s.routeEndpoints;
  }

  /** Whether the generation the stream is on (or would get) changes a head it holds. */
  private headsWouldChange(s: Stream): boolean {
    const g = s.vhds ? this.generationFor(s) : undefined;
    return g !== undefined && changedHeads(s, g.encoded).size > 0;
  }

  /** A type asked for anew, or other names of it: sent what the stream is on now. */
  private onSubscribe(s: Stream, type: string, last: { nonce: string } | undefined): void {
    if (type === TYPE_CLUSTER) {
      if (last === undefined && !s.flight) this.pushGeneration(s);
      else this.sendType(s, type, this.generationFor(s));
    } else if (type === TYPE_VIRTUAL_HOST) {
      // A bridge waiting for the stream to ask for virtual hosts is sent now.
      if (s.flight?.step === 'bridge') this.pushRest(s);
      else this.sendVirtualHosts(s, this.generationFor(s));
    } else if (
      type === TYPE_ROUTE_CONFIGURATION &&
      s.flight?.step !== 'clusters' &&
      s.flight?.step !== 'bridge' &&
      this.headsWouldChange(s)
    ) {
      // Held heads that the generation it is on changes, asked for after that generation's
      // bridge was decided (a reconnecting Envoy's request after its clusters' answer) or with
      // none on its way (after a refused bridge): the bridge goes first.
      if (s.flight) this.pushRest(s);
      else this.pushGeneration(s);
    } else if (type === TYPE_ENDPOINTS || (s.flight?.step !== 'clusters' && s.flight?.step !== 'bridge')) {
      // Endpoints at once, as the clusters awaiting them do not warm without them; the rest
      // waits while the clusters (or a bridge) are awaited (sendRest sends these names then).
      this.sendType(s, type, this.generationFor(s));
    }
  }
}

/** The route configurations a VHDS stream holds whose head in `encoded` differs from the one it holds. */
function changedHeads(s: Stream, encoded: Encoded): Set<string> {
  const changed = new Set<string>();
  if (!s.vhds || !s.delta) return changed;
  const heads = encoded.get(ROUTE_HEADS);
  for (const name of s.names.get(TYPE_ROUTE_CONFIGURATION) ?? []) {
    const held = s.delta.holds(TYPE_ROUTE_CONFIGURATION, name);
    const head = heads?.get(name);
    if (held !== undefined && head && held !== head.hash) changed.add(name);
  }
  return changed;
}

/**
 * The names a request leaves the stream asking for, of a type asked for by name (none for the
 * others): state of the world lists them all; delta adds and takes away, and says on a new
 * stream what the Envoy holds already.
 */
function namesAsked(s: Stream, type: string, req: DiscoveryRequest): readonly string[] {
  if (!s.delta) return NAMED_TYPES.has(type) ? [...(req.resource_names ?? [])].sort() : [];
  s.delta.initial(type, Object.keys(req.initial_resource_versions ?? {}));
  const unsubscribe = req.resource_names_unsubscribe ?? [];
  s.delta.unsubscribed(type, unsubscribe);
  if (type === TYPE_ROUTE_CONFIGURATION && unsubscribe.length > 0) {
    // Envoy drops a route configuration's virtual hosts with it (they are not asked for by
    // name): asked for again, it gets them again.
    const gone = new Set(unsubscribe);
    s.delta.forget(TYPE_VIRTUAL_HOST, (n) => gone.has(routeConfigurationOf(n)));
  }
  if (!NAMED_TYPES.has(type)) return [];
  const names = new Set([...(s.names.get(type) ?? []), ...(req.resource_names_subscribe ?? [])]);
  for (const n of unsubscribe) names.delete(n);
  return [...names].sort();
}

/**
 * A generation's clusters with those the Envoy's accepted routes name (a generation's too): the
 * generation's own map when it has every one of them (the step between the two says so, once).
 */
function withRouteClusters(route: Whole, all: Whole): readonly Resource[] | Whole {
  if (route.size === 0 || route === all || step(route, all).removed_resources.length === 0) return all;
  return [...new Map([...route, ...all]).values()];
}

/** An Envoy that says it is 1.38 or later (VHDS over a delta ADS stream); any other client gets whole route configurations. */
function takesVhdsOverAds(node: DiscoveryRequest['node']): boolean {
  const v = node?.user_agent_build_version?.version;
  if (node?.user_agent_name !== 'envoy' || v === undefined) return false;
  const [major, minor] = [v.major_number ?? 0, v.minor_number ?? 0];
  return major > VHDS_SINCE.major || (major === VHDS_SINCE.major && minor >= VHDS_SINCE.minor);
}

function shortType(type: string): string {
  return type.slice(type.lastIndexOf('.') + 1);
}
