// The ADS server: one control plane for any number of gateway-mode Envoys. Each Envoy opens
// one Aggregated Discovery Service stream (state of the world) and asks for clusters and
// listeners; its listeners ask for their route configurations and certificates by name.
// Every configuration generation is pushed to every stream, clusters first, then listeners,
// then routes and secrets, so that nothing names a cluster Envoy does not have yet; clusters
// of the previous generation stay one generation longer, so routes still naming them keep
// working until the new routes land. An Envoy's answer to each push is kept: the version it
// took (ACK), or what it refused and why (NACK: logged, and shown by status()).
import * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { TYPE_CLUSTER, TYPE_LISTENER, TYPE_ROUTE_CONFIGURATION, TYPE_SECRET } from '../envoy/envoy-names.js';
import type { GatewayResources } from '../envoy/gateway-config.js';
import type { Json } from '../json.js';
import { encodeAny, envoyProtoRoot } from './envoy-protos.js';

export const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
const ADS_METHOD = `/${ADS_SERVICE}/StreamAggregatedResources`;

/** The order a generation is pushed in: what is named before what names it. */
const PUSH_ORDER = [TYPE_CLUSTER, TYPE_LISTENER, TYPE_ROUTE_CONFIGURATION, TYPE_SECRET] as const;
/** Types Envoy asks for by name (the others: everything there is). */
const NAMED_TYPES: ReadonlySet<string> = new Set([TYPE_ROUTE_CONFIGURATION, TYPE_SECRET]);

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
  /** The node's kind (its bootstrap's `steadfast_node_kind` metadata, e.g. its listener address). */
  readonly kind: string;
  readonly connectedAt: string;
  /** Type URL → the version it last accepted. */
  readonly acked: Readonly<Record<string, string>>;
  /** The last push it refused, if its last answer for that type was a refusal. */
  readonly nacked: readonly { readonly type: string; readonly version: string; readonly message: string }[];
}

export interface AdsServerOptions {
  /**
   * The resources of one generation for one kind of Envoy. `kind` comes from the node's
   * bootstrap metadata (`steadfast_node_kind`, "" when absent), so Envoys on different
   * addresses can be given listeners of their own.
   */
  readonly resources: (kind: string) => GatewayResources;
  readonly log: (line: string) => void;
}

class Stream {
  readonly acked = new Map<string, string>();
  readonly nacked = new Map<string, { version: string; message: string }>();
  /** Type → names asked for (RDS, SDS); the others are wildcard. */
  readonly names = new Map<string, readonly string[]>();
  /** Type → the version last sent. */
  readonly sent = new Map<string, string>();
  node = '';
  kind = '';
  private nonce = 0;
  readonly connectedAt = new Date().toISOString();

  constructor(readonly call: grpc.ServerDuplexStream<DiscoveryRequest, Json>) {}

  send(type: string, version: string, resources: readonly Any[]): void {
    this.nonce++;
    this.sent.set(type, version);
    this.call.write({ version_info: version, resources, type_url: type, nonce: String(this.nonce) });
  }
}

export class AdsServer {
  private readonly streams = new Set<Stream>();
  private version = '';
  /** This generation, per kind of Envoy. */
  private encoded = new Map<string, Encoded>();
  /** Cluster resources of the previous generation, per kind, kept while routes move. */
  private previousClusters = new Map<string, ReadonlyMap<string, Any>>();
  private server: grpc.Server | undefined;
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
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    this.server = server;
    this.address = address.replace(/:\d+$/, `:${port}`);
    return this.address;
  }

  /** Stops taking streams and ends the open ones (Envoys keep their configuration and reconnect). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    for (const s of this.streams) s.call.end();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }

  /** A new generation: encoded per kind of connected Envoy, then pushed to every stream. */
  update(version: string): void {
    const previous = this.encoded;
    this.version = version;
    this.encoded = new Map();
    this.previousClusters = new Map(
      [...previous].map(([kind, e]) => [kind, e.get(TYPE_CLUSTER) ?? new Map<string, Any>()]),
    );
    for (const s of this.streams) {
      if (s.node !== '') this.push(s);
    }
  }

  status(): XdsClientStatus[] {
    return [...this.streams]
      .filter((s) => s.node !== '')
      .map((s) => ({
        node: s.node,
        kind: s.kind,
        connectedAt: s.connectedAt,
        acked: Object.fromEntries(s.acked),
        nacked: [...s.nacked].map(([type, n]) => ({ type, ...n })),
      }));
  }

  private resourcesFor(kind: string): Encoded {
    const cached = this.encoded.get(kind);
    if (cached) return cached;
    const generated = this.options.resources(kind);
    const byName = (type: string, list: readonly Json[]) =>
      new Map(
        list.map((r) => [
          r['name'] as string,
          encodeAny({ '@type': type, ...r }, `${type}/${String(r['name'])}`),
        ]),
      );
    const encoded: Encoded = new Map([
      [TYPE_CLUSTER, byName(TYPE_CLUSTER, generated.clusters)],
      [TYPE_LISTENER, byName(TYPE_LISTENER, generated.listeners)],
      [TYPE_ROUTE_CONFIGURATION, byName(TYPE_ROUTE_CONFIGURATION, generated.routeConfigurations)],
      [TYPE_SECRET, byName(TYPE_SECRET, generated.secrets)],
    ]);
    for (const w of generated.warnings) this.options.log(`warning: ${w}`);
    this.encoded.set(kind, encoded);
    return encoded;
  }

  /** What a stream gets for one type: all of it, or the names it asked for. */
  private selection(s: Stream, type: string): Any[] {
    const all = this.resourcesFor(s.kind).get(type) ?? new Map<string, Any>();
    if (type === TYPE_CLUSTER) {
      const kept = this.previousClusters.get(s.kind) ?? new Map<string, Any>();
      return [...new Map([...kept, ...all]).values()];
    }
    if (!NAMED_TYPES.has(type)) return [...all.values()];
    return (s.names.get(type) ?? []).flatMap((n) => {
      const r = all.get(n);
      return r ? [r] : [];
    });
  }

  private push(s: Stream, only?: string): void {
    if (this.version === '') return;
    for (const type of PUSH_ORDER) {
      if (only !== undefined && type !== only) continue;
      // Only what the Envoy subscribed to (a listener asks for its routes by name).
      if (!s.names.has(type) && !(only === type)) continue;
      try {
        s.send(type, this.version, this.selection(s, type));
      } catch (e) {
        this.options.log(`xds: generation ${this.version} not sent to ${s.node}: ${(e as Error).message}`);
      }
    }
  }

  private serve(call: grpc.ServerDuplexStream<DiscoveryRequest, Json>): void {
    const s = new Stream(call);
    this.streams.add(s);
    const gone = () => {
      if (this.streams.delete(s) && s.node !== '') this.options.log(`xds: ${s.node} disconnected`);
    };
    call.on('data', (req: DiscoveryRequest) => this.onRequest(s, req));
    call.on('end', () => {
      gone();
      call.end();
    });
    call.on('error', gone);
    call.on('cancelled', gone);
  }

  private onRequest(s: Stream, req: DiscoveryRequest): void {
    const type = req.type_url ?? '';
    if (s.node === '') {
      s.node = req.node?.id ?? 'unknown';
      const kind = (
        req.node?.metadata?.fields?.['steadfast_node_kind'] as { stringValue?: string } | undefined
      )?.stringValue;
      s.kind = kind ?? '';
      this.options.log(`xds: ${s.node} connected${s.kind ? ` (${s.kind})` : ''}`);
    }
    if (!(PUSH_ORDER as readonly string[]).includes(type)) {
      // Not something a gateway serves (e.g. endpoints: the clusters carry their own).
      s.call.write({ version_info: this.version, resources: [], type_url: type, nonce: 'unserved' });
      return;
    }
    if (req.error_detail) {
      const message = req.error_detail.message ?? '';
      const refused = s.sent.get(type) ?? '';
      s.nacked.set(type, { version: refused, message });
      this.options.log(`xds: ${s.node} refused generation ${refused} of ${shortType(type)}: ${message}`);
    } else if (req.response_nonce && req.version_info) {
      s.acked.set(type, req.version_info);
      s.nacked.delete(type);
    }
    const names = [...(req.resource_names ?? [])];
    const before = s.names.get(type);
    s.names.set(type, NAMED_TYPES.has(type) ? names : []);
    // A new subscription, or new names: answer now. An ACK or NACK of what was sent: nothing.
    const changed = before === undefined || before.join('\n') !== names.join('\n');
    if (changed || s.sent.get(type) !== this.version) this.push(s, type);
  }
}

function shortType(type: string): string {
  return type.slice(type.lastIndexOf('.') + 1);
}
