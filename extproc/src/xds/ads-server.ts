// The ADS server: one control plane for any number of gateway-mode Envoys. Each Envoy opens
// one Aggregated Discovery Service stream (state of the world) and asks for clusters and
// listeners; its listeners ask for their route configurations and certificates by name.
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
// HTTPS private keys (over SDS): with TLS files, every client must present a certificate from
// the client CA (ads-tls.ts); with a token, a stream must present it as well (`authorization:
// Bearer …`, which envoy-config --xds-token-file puts in the bootstrap).
import { isIP } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { TYPE_CLUSTER, TYPE_LISTENER, TYPE_ROUTE_CONFIGURATION, TYPE_SECRET } from '../envoy/envoy-names.js';
import type { GatewayResources } from '../envoy/gateway-config.js';
import type { Json } from '../json.js';
import { type AdsTlsFiles, AdsTlsFilesProvider } from './ads-tls.js';
import { encodeAny, envoyProtoRoot } from './envoy-protos.js';
import { RouteFileEncoder } from './route-files.js';

const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
const ADS_METHOD = `/${ADS_SERVICE}/StreamAggregatedResources`;

/** What follows the clusters, in order. */
const AFTER_CLUSTERS = [TYPE_LISTENER, TYPE_ROUTE_CONFIGURATION, TYPE_SECRET] as const;
const SERVED: ReadonlySet<string> = new Set([TYPE_CLUSTER, ...AFTER_CLUSTERS]);
/** Types Envoy asks for by name (the others: everything there is). */
const NAMED_TYPES: ReadonlySet<string> = new Set([TYPE_ROUTE_CONFIGURATION, TYPE_SECRET]);
/** How long the rest of a generation waits for an Envoy's answer on its clusters. */
const CLUSTER_ANSWER_WAIT_MS = 30_000;

interface Any {
  readonly type_url: string;
  readonly value: Buffer;
}

/** One generation for one kind of Envoy, encoded once: type → resource name → Any. */
type Encoded = ReadonlyMap<string, ReadonlyMap<string, Any>>;

interface DiscoveryRequest {
  readonly version_info?: string;
  readonly node?: { readonly id?: string; readonly metadata?: { readonly fields?: Record<string, unknown> } };
  readonly resource_names?: readonly string[];
  readonly type_url?: string;
  readonly response_nonce?: string;
  readonly error_detail?: { readonly code?: number; readonly message?: string };
}

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
}

export interface XdsStatus {
  readonly envoys: readonly XdsClientStatus[];
  /** A generation that could not be encoded for some kind of Envoy (none was sent to it). */
  readonly generationError?: { readonly version: string; readonly kind: string; readonly message: string };
}

export interface AdsServerOptions {
  /**
   * The resources of the current generation for one kind of Envoy. `kind` is the listener
   * address from the node's bootstrap metadata (`steadfast_node_kind`), "" when absent.
   */
  readonly resources: (kind: string) => GatewayResources;
  readonly log: (line: string) => void;
  /** When set, every stream must carry `authorization: Bearer <token>`. */
  readonly token?: string;
  /** When set, mutual TLS: the server's certificate and key, and the CA its clients' certificates come from. */
  readonly tls?: AdsTlsFiles;
}

class Stream {
  readonly acked = new Map<string, string>();
  readonly nacked = new Map<string, { version: string; message: string }>();
  /** Type → names asked for (RDS, SDS; sorted); the other types are wildcard. */
  readonly names = new Map<string, readonly string[]>();
  /** Type → the last nonce sent, and the version it carried. */
  readonly lastNonce = new Map<string, { nonce: string; version: string }>();
  /** The clusters the routes this Envoy accepted name (kept until it accepts newer routes). */
  routeClusters: ReadonlyMap<string, Any> = new Map();
  /** A generation whose clusters were sent and whose answer the rest waits for. */
  waiting: { version: string; timer: NodeJS.Timeout } | undefined;
  node = '';
  kind = '';
  private nonce = 0;
  readonly connectedAt = new Date().toISOString();

  constructor(readonly call: grpc.ServerDuplexStream<DiscoveryRequest, Json>) {}

  send(type: string, version: string, resources: readonly Any[]): void {
    this.nonce++;
    const nonce = String(this.nonce);
    this.lastNonce.set(type, { nonce, version });
    this.call.write({ version_info: version, resources, type_url: type, nonce });
  }
}

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
  /**
   * Per kind of Envoy, each route configuration's virtual hosts as last encoded: a change to one
   * route encodes its host alone (route-files.ts), not the 10,000 others on the event loop.
   */
  private readonly routeEncoders = new Map<string, RouteFileEncoder>();
  private server: grpc.Server | undefined;
  private tls: AdsTlsFilesProvider | undefined;
  /** Where it listens, once started. */
  address = '';

  constructor(private readonly options: AdsServerOptions) {}

  /** The gRPC service definition (for a server of the caller's, or start()). */
  definition(): grpc.ServiceDefinition<grpc.UntypedServiceImplementation> {
    const root = envoyProtoRoot();
    const request = root.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
    const response = root.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
    const encode = (type: protobuf.Type) => (m: object) =>
      Buffer.from(type.encode(type.fromObject(m)).finish());
    const decode = (type: protobuf.Type) => (b: Buffer) =>
      type.toObject(type.decode(b), { longs: String, enums: String, defaults: false });
    const method: grpc.MethodDefinition<DiscoveryRequest, Json> = {
      path: ADS_METHOD,
      requestStream: true,
      responseStream: true,
      requestSerialize: encode(request),
      requestDeserialize: decode(request) as (b: Buffer) => DiscoveryRequest,
      responseSerialize: encode(response),
      responseDeserialize: decode(response) as (b: Buffer) => Json,
    };
    return { StreamAggregatedResources: method as grpc.MethodDefinition<unknown, unknown> };
  }

  /** Serves ADS on `address` (HOST:PORT; port 0 picks one); resolves to the bound address. */
  async start(address: string): Promise<string> {
    const server = new grpc.Server();
    server.addService(this.definition(), {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, Json>) => this.serve(call),
    });
    if (this.options.tls) this.tls = new AdsTlsFilesProvider(this.options.tls, this.options.log);
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
    const server = this.server;
    if (!server) return;
    for (const s of this.streams) {
      if (s.waiting) clearTimeout(s.waiting.timer);
      s.call.end();
    }
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }

  /** A new generation: encoded per kind of connected Envoy when first needed, pushed to every stream. */
  update(version: string): void {
    this.version = version;
    this.encoded = new Map();
    this.generationError = undefined;
    for (const s of this.streams) {
      if (s.node !== '') this.pushGeneration(s);
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
        })),
      ...(this.generationError ? { generationError: this.generationError } : {}),
    };
  }

  private resourcesFor(kind: string): Encoded | undefined {
    const cached = this.encoded.get(kind);
    if (cached) return 'error' in cached ? undefined : (cached as Encoded);
    try {
      const generated = this.options.resources(kind);
      const byName = (type: string, list: readonly Json[]) =>
        new Map(
          list.map((r) => [
            r['name'] as string,
            encodeAny({ '@type': type, ...r }, `${type}/${String(r['name'])}`),
          ]),
        );
      let routes = this.routeEncoders.get(kind);
      if (!routes) this.routeEncoders.set(kind, (routes = new RouteFileEncoder()));
      routes.begin();
      const routeConfigurations = new Map(
        generated.routeConfigurations.map((rc) => [
          rc['name'] as string,
          { type_url: TYPE_ROUTE_CONFIGURATION, value: (routes as RouteFileEncoder).configuration(rc) },
        ]),
      );
      routes.end();
      const encoded: Encoded = new Map([
        [TYPE_CLUSTER, byName(TYPE_CLUSTER, generated.clusters)],
        [TYPE_LISTENER, byName(TYPE_LISTENER, generated.listeners)],
        [TYPE_ROUTE_CONFIGURATION, routeConfigurations],
        [TYPE_SECRET, byName(TYPE_SECRET, generated.secrets)],
      ]);
      for (const w of generated.warnings) this.options.log(`warning: ${w}`);
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

  /** What a stream gets for one type: all of it, or the names it asked for. */
  private selection(s: Stream, type: string, encoded: Encoded): Any[] {
    const all = encoded.get(type) ?? new Map<string, Any>();
    if (type === TYPE_CLUSTER) return [...new Map([...s.routeClusters, ...all]).values()];
    if (!NAMED_TYPES.has(type)) return [...all.values()];
    return (s.names.get(type) ?? []).flatMap((n) => {
      const r = all.get(n);
      return r ? [r] : [];
    });
  }

  private sendType(s: Stream, type: string): void {
    const encoded = this.version === '' ? undefined : this.resourcesFor(s.kind);
    if (!encoded) return;
    s.send(type, this.version, this.selection(s, type, encoded));
  }

  /** The current generation to a stream: its clusters now, the rest once the Envoy answers for them. */
  private pushGeneration(s: Stream): void {
    if (this.version === '' || !this.resourcesFor(s.kind)) return;
    if (s.waiting) clearTimeout(s.waiting.timer);
    s.waiting = undefined;
    if (!s.names.has(TYPE_CLUSTER)) {
      this.pushRest(s);
      return;
    }
    this.sendType(s, TYPE_CLUSTER);
    const version = this.version;
    const timer = setTimeout(() => {
      if (s.waiting?.version !== version) return;
      this.options.log(
        `xds: ${shown(s.node)} has not answered for the clusters of generation ${version} in ${CLUSTER_ANSWER_WAIT_MS / 1000} s; sending the rest`,
      );
      s.waiting = undefined;
      this.pushRest(s);
    }, CLUSTER_ANSWER_WAIT_MS);
    timer.unref();
    s.waiting = { version, timer };
  }

  private pushRest(s: Stream): void {
    for (const type of AFTER_CLUSTERS) if (s.names.has(type)) this.sendType(s, type);
  }

  private serve(call: grpc.ServerDuplexStream<DiscoveryRequest, Json>): void {
    if (this.options.token !== undefined) {
      const presented = call.metadata.get('authorization')[0];
      if (presented !== `Bearer ${this.options.token}`) {
        this.options.log('xds: a stream without the token was refused');
        call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'an xDS token is required' });
        return;
      }
    }
    const s = new Stream(call);
    this.streams.add(s);
    const gone = () => {
      if (s.waiting) clearTimeout(s.waiting.timer);
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

  /** Long on purpose: the node's first request, an ACK, a NACK and a subscription, in the order ADS defines. */
  private onRequest(s: Stream, req: DiscoveryRequest): void {
    const type = req.type_url ?? '';
    if (s.node === '') {
      const kind =
        (req.node?.metadata?.fields?.['steadfast_node_kind'] as { stringValue?: string } | undefined)
          ?.stringValue ?? '';
      // The kind becomes the listeners' address: an IP address or nothing, never a name.
      if (kind !== '' && isIP(kind) === 0) {
        this.options.log(
          `xds: a node named ${shown(req.node?.id ?? '')} gave listener address ${shown(kind)}: refused`,
        );
        this.streams.delete(s);
        s.call.emit('error', {
          code: grpc.status.INVALID_ARGUMENT,
          details: 'steadfast_node_kind must be an IP address',
        });
        return;
      }
      s.node = req.node?.id ?? 'unknown';
      s.kind = kind;
      this.options.log(`xds: ${shown(s.node)} connected${s.kind ? ` (listeners on ${s.kind})` : ''}`);
    }
    if (!SERVED.has(type)) {
      // Not something a gateway serves: one empty answer, never one to its ACK.
      if (!req.response_nonce) s.send(type, this.version, []);
      return;
    }
    const last = s.lastNonce.get(type);
    if (req.response_nonce) {
      // An answer to something older than the last push of this type: superseded, ignored.
      if (req.response_nonce !== last?.nonce) return;
      if (req.error_detail) {
        const message = req.error_detail.message ?? '';
        s.nacked.set(type, { version: last.version, message });
        this.options.log(
          `xds: ${shown(s.node)} refused generation ${last.version} of ${shortType(type)}: ${message}`,
        );
      } else {
        s.acked.set(type, last.version);
        s.nacked.delete(type);
        // Its routes now name this generation's clusters only.
        if (type === TYPE_ROUTE_CONFIGURATION && last.version === this.version) {
          s.routeClusters = this.resourcesFor(s.kind)?.get(TYPE_CLUSTER) ?? s.routeClusters;
        }
      }
      // The Envoy answered for the clusters (taken, warmed, or refused): the rest may follow.
      if (type === TYPE_CLUSTER && s.waiting?.version === last.version) {
        clearTimeout(s.waiting.timer);
        s.waiting = undefined;
        this.pushRest(s);
      }
    }
    const names = NAMED_TYPES.has(type) ? [...(req.resource_names ?? [])].sort() : [];
    const before = s.names.get(type);
    s.names.set(type, names);
    const subscribed = before === undefined || before.join('\n') !== names.join('\n');
    // Answer a new subscription, or new names; an ACK or NACK of the last push needs none.
    if (!subscribed) return;
    if (type === TYPE_CLUSTER) {
      if (last === undefined) this.pushGeneration(s);
      else this.sendType(s, type);
    } else if (!s.waiting) {
      this.sendType(s, type);
    }
  }
}

function shortType(type: string): string {
  return type.slice(type.lastIndexOf('.') + 1);
}
