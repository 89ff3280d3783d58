// A lightweight Envoy for bench:scale --fleet: one DeltaAggregatedResources stream that asks as
// Envoy does — clusters and listeners by wildcard, the ClusterLoadAssignments of its EDS
// clusters, the route configurations and secrets its listeners (and clusters) name, and the
// virtual hosts (VHDS, by wildcard, as Envoy does over ADS) once a route configuration says
// `vhds` — and ACKs every response. Its node says it is the Envoy release the real ones are, so
// the control plane treats it as one of them. It keeps names only, never the configuration, so
// the benchmark's own process can hold many of them beside two real Envoys.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import {
  TYPE_CLUSTER,
  TYPE_LISTENER,
  TYPE_ROUTE_CONFIGURATION,
  TYPE_SECRET,
} from '../extproc/src/envoy/envoy-names.js';
import {
  TYPE_CLUSTER_LOAD_ASSIGNMENT as TYPE_ENDPOINTS,
  TYPE_VIRTUAL_HOST,
} from '../extproc/src/envoy/xds-resources.js';
import { adsServiceDefinition } from '../extproc/src/xds/ads-service.js';
import { decodeAny, envoyProtoRoot } from '../extproc/src/xds/envoy-protos.js';

interface AnyMessage {
  readonly type_url: string;
  readonly value: Uint8Array;
}

interface DeltaResponse {
  readonly type_url: string;
  readonly nonce: string;
  readonly resources?: readonly { readonly name: string; readonly resource?: AnyMessage }[];
  readonly removed_resources?: readonly string[];
}

type Request = Record<string, unknown>;

/** What one resource makes its Envoy ask for, by type. */
type Wants = Map<string, Set<string>>;

function want(wants: Wants, type: string, name: string): void {
  const names = wants.get(type);
  if (names) names.add(name);
  else wants.set(type, new Set([name]));
}

const isAny = (v: Record<string, unknown>): boolean =>
  typeof v['type_url'] === 'string' && v['value'] instanceof Uint8Array;

/** The names a decoded resource asks for: RDS by route_config_name, SDS by each secret config's name. */
function collectWants(v: unknown, wants: Wants): void {
  if (Array.isArray(v)) {
    for (const x of v) collectWants(x, wants);
    return;
  }
  if (typeof v !== 'object' || v === null || v instanceof Uint8Array) return;
  const o = v as Record<string, unknown>;
  if (isAny(o)) {
    let inner: unknown;
    try {
      inner = decodeAny(o as unknown as AnyMessage);
    } catch {
      return; // a type the protos do not hold names nothing the fleet serves
    }
    collectWants(inner, wants);
    return;
  }
  const add = (type: string, name: unknown): void => {
    if (typeof name === 'string' && name !== '') want(wants, type, name);
  };
  if ('route_config_name' in o && 'config_source' in o) add(TYPE_ROUTE_CONFIGURATION, o['route_config_name']);
  if ('sds_config' in o) add(TYPE_SECRET, o['name']);
  for (const x of Object.values(o)) collectWants(x, wants);
}

/** What a cluster or listener asks for: its names of other types (EDS: the cluster's own load assignment). */
function wantsOf(type: string, any: AnyMessage): Wants {
  const decoded = decodeAny(any);
  const wants: Wants = new Map();
  collectWants(decoded, wants);
  if (type === TYPE_CLUSTER && decoded['type'] === 'EDS') {
    const eds = decoded['eds_cluster_config'] as { service_name?: string } | undefined;
    wants.set(TYPE_ENDPOINTS, new Set([eds?.service_name ?? (decoded['name'] as string)]));
  }
  return wants;
}

/**
 * Whether an encoded RouteConfiguration has `vhds`, read from its top-level fields alone: a whole
 * route configuration of 10,000 routes is not decoded 18 times per change for one field.
 */
function hasVhds(value: Uint8Array): boolean {
  const field = envoyProtoRoot().lookupType('envoy.config.route.v3.RouteConfiguration').fields['vhds'];
  const reader = protobuf.Reader.create(value);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === field?.id) return true;
    reader.skipType(tag & 7);
  }
  return false;
}

/** The node's build version as Envoy sends it, from "1.40.0". */
function buildVersion(release: string): Request {
  const [major, minor, patch] = release.split('.').map((x) => Number.parseInt(x, 10) || 0);
  return { version: { major_number: major ?? 0, minor_number: minor ?? 0, patch: patch ?? 0 } };
}

export class LightEnvoy {
  private readonly client: grpc.Client;
  private readonly call: grpc.ClientDuplexStream<Request, DeltaResponse>;
  /** Per cluster and listener held: what it asks for. */
  private readonly held = new Map<string, Map<string, Wants>>([
    [TYPE_CLUSTER, new Map()],
    [TYPE_LISTENER, new Map()],
  ]);
  /** Per type asked for by name: the names asked for now. */
  private readonly asked = new Map<string, Set<string>>();
  private listenersAsked = false;
  private virtualHostsAsked = false;
  /** Why the stream ended, if it did (a real Envoy would open another; the benchmark stops). */
  ended: string | undefined;

  /** `release`: the Envoy version it says it is ("1.40.0"). */
  constructor(address: string, node: string, kind: string, release: string) {
    const Client = grpc.makeGenericClientConstructor(adsServiceDefinition(), 'Ads');
    // A route configuration of 10,000 routes is one message of ~5 MB, over grpc-js's 4 MB default.
    this.client = new Client(address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': -1,
    });
    const open = (this.client as unknown as Record<string, () => typeof this.call>)[
      'DeltaAggregatedResources'
    ];
    this.call = (open as () => typeof this.call).call(this.client);
    this.call.on('data', (r: DeltaResponse) => this.onResponse(r));
    this.call.on('error', (e: Error) => (this.ended = e.message));
    this.call.on('end', () => (this.ended ??= 'ended by the server'));
    // Envoy's first request: the node (its kind as envoy-config --address writes it, its
    // release as Envoy says it), and clusters.
    this.call.write({
      node: {
        id: node,
        metadata: { fields: { steadfast_node_kind: { stringValue: kind } } },
        user_agent_name: 'envoy',
        user_agent_build_version: buildVersion(release),
      },
      type_url: TYPE_CLUSTER,
    });
  }

  close(): void {
    this.call.end();
    this.client.close();
  }

  private onResponse(r: DeltaResponse): void {
    const held = this.held.get(r.type_url);
    if (held) {
      for (const name of r.removed_resources ?? []) held.delete(name);
      for (const x of r.resources ?? []) if (x.resource) held.set(x.name, wantsOf(r.type_url, x.resource));
    }
    // The ACK, then what the new clusters or listeners ask for (as Envoy's paused ADS sends them).
    this.call.write({ type_url: r.type_url, response_nonce: r.nonce });
    if (held) this.askForWhatIsNamed();
    if (r.type_url === TYPE_CLUSTER && !this.listenersAsked) {
      // Envoy asks for listeners once its first clusters are in.
      this.listenersAsked = true;
      this.call.write({ type_url: TYPE_LISTENER });
    }
    const vhds = (r.resources ?? []).some((x) => x.resource && hasVhds(x.resource.value));
    if (r.type_url === TYPE_ROUTE_CONFIGURATION && !this.virtualHostsAsked && vhds) {
      // Envoy subscribes to virtual hosts when it takes a route configuration that says vhds.
      this.virtualHostsAsked = true;
      this.call.write({ type_url: TYPE_VIRTUAL_HOST });
    }
  }

  /** Subscribes to names the held clusters and listeners now name, and unsubscribes the rest. */
  private askForWhatIsNamed(): void {
    const wanted: Wants = new Map();
    for (const byName of this.held.values())
      for (const wants of byName.values())
        for (const [type, names] of wants) for (const n of names) want(wanted, type, n);
    for (const type of new Set([...wanted.keys(), ...this.asked.keys()])) {
      const now = wanted.get(type) ?? new Set<string>();
      const before = this.asked.get(type) ?? new Set<string>();
      const subscribe = [...now].filter((n) => !before.has(n));
      const unsubscribe = [...before].filter((n) => !now.has(n));
      if (subscribe.length === 0 && unsubscribe.length === 0) continue;
      this.asked.set(type, now);
      this.call.write({
        type_url: type,
        resource_names_subscribe: subscribe,
        resource_names_unsubscribe: unsubscribe,
      });
    }
  }
}
