// The smallest delta ADS server vhds-apply-cost needs: to each Envoy (by node id) its one route
// configuration without hosts (RDS, `vhds` naming ADS), then every virtual host in one push once
// it asks for them (VHDS), then one host per push on demand, each push's answer timed from the
// moment HTTP/2 took the write. Nothing else: clusters and the listener are in the bootstrap.
import * as grpc from '@grpc/grpc-js';
import { TYPE_ROUTE_CONFIGURATION } from '../extproc/src/envoy/envoy-names.js';
import { TYPE_VIRTUAL_HOST } from '../extproc/src/envoy/xds-resources.js';
import type { Any } from '../extproc/src/xds/ads-resource.js';
import { adsServiceDefinition } from '../extproc/src/xds/ads-service.js';
import type { DiscoveryRequest } from '../extproc/src/xds/ads-stream.js';

/** What one Envoy is fed: its route configuration's head and its virtual hosts by resource name. */
export interface VhdsState {
  readonly head: { readonly name: string; readonly any: Any };
  readonly hosts: ReadonlyMap<string, Any>;
}

/** One push's times (performance.now() ms): HTTP/2 took the write; the Envoy answered it. */
export interface PushTimes {
  readonly writtenAt: number;
  readonly answeredAt: number;
}

interface Pending {
  readonly nonce: string;
  writtenAt: number;
  readonly resolve: (t: PushTimes) => void;
  readonly reject: (e: Error) => void;
}

/** One Envoy's stream: what it was sent, and by type the push waiting for its answer. */
class Stream {
  private nonce = 0;
  private readonly pending = new Map<string, Pending>();
  private hostsSent = false;
  /** Resolved when the Envoy has taken all its virtual hosts. */
  readonly ready: Promise<PushTimes>;
  private markReady!: (t: PushTimes) => void;
  private failReady!: (e: Error) => void;

  constructor(
    private readonly call: grpc.ServerDuplexStream<unknown, unknown>,
    private readonly state: VhdsState,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.failReady = reject;
    });
    this.ready.catch(() => undefined); // awaited later; a refusal is reported there
  }

  onRequest(r: DiscoveryRequest): void {
    if (r.response_nonce) {
      this.answered(r);
      return;
    }
    if (r.type_url === TYPE_ROUTE_CONFIGURATION) {
      this.push(TYPE_ROUTE_CONFIGURATION, [[this.state.head.name, this.state.head.any]]).catch(
        this.failReady,
      );
    } else if (r.type_url === TYPE_VIRTUAL_HOST && !this.hostsSent) {
      this.hostsSent = true;
      this.push(TYPE_VIRTUAL_HOST, [...this.state.hosts]).then(this.markReady, this.failReady);
    }
  }

  /** Sends `resources` of `type` in one push; its times once the Envoy answers (a refusal rejects). */
  push(type: string, resources: readonly (readonly [string, Any])[]): Promise<PushTimes> {
    if (this.pending.has(type)) return Promise.reject(new Error(`a push of ${type} is still unanswered`));
    const nonce = String(++this.nonce);
    return new Promise((resolve, reject) => {
      const pending: Pending = { nonce, writtenAt: Number.NaN, resolve, reject };
      this.pending.set(type, pending);
      const message = {
        type_url: type,
        system_version_info: nonce,
        nonce,
        resources: resources.map(([name, any]) => ({ name, version: nonce, resource: any })),
      };
      this.call.write(message, () => (pending.writtenAt = performance.now()));
    });
  }

  private answered(r: DiscoveryRequest): void {
    const p = this.pending.get(r.type_url ?? '');
    if (!p || r.response_nonce !== p.nonce) return;
    this.pending.delete(r.type_url ?? '');
    if (r.error_detail?.message) p.reject(new Error(`refused: ${r.error_detail.message}`));
    else p.resolve({ writtenAt: p.writtenAt, answeredAt: performance.now() });
  }
}

/** The server: Envoys connect, each is fed the state registered for its node id. */
export class VhdsFeed {
  private readonly server = new grpc.Server();
  private readonly states = new Map<string, VhdsState>();
  private readonly streams = new Map<string, Stream>();
  private readonly waiting = new Map<string, (s: Stream) => void>();

  async listen(): Promise<number> {
    this.server.addService(adsServiceDefinition(), {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<unknown, unknown>) => call.end(),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<unknown, unknown>) => this.accept(call),
    });
    return new Promise((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, port) =>
        e ? reject(e) : resolve(port),
      ),
    );
  }

  /** What the Envoy of node `id` is fed when it connects. */
  register(id: string, state: VhdsState): void {
    this.states.set(id, state);
  }

  /** The stream of node `id`, once it connected. */
  stream(id: string): Promise<Stream> {
    const s = this.streams.get(id);
    return s ? Promise.resolve(s) : new Promise((resolve) => this.waiting.set(id, resolve));
  }

  /** One virtual host pushed to node `id`; its times once taken. */
  async pushHost(id: string, name: string, any: Any): Promise<PushTimes> {
    return (await this.stream(id)).push(TYPE_VIRTUAL_HOST, [[name, any]]);
  }

  close(): void {
    this.server.forceShutdown();
  }

  private accept(call: grpc.ServerDuplexStream<unknown, unknown>): void {
    let stream: Stream | undefined;
    call.on('data', (r: DiscoveryRequest) => {
      if (!stream) {
        const id = r.node?.id ?? '';
        const state = this.states.get(id);
        if (!state) {
          call.end();
          return;
        }
        stream = new Stream(call, state);
        this.streams.set(id, stream);
        this.waiting.get(id)?.(stream);
        this.waiting.delete(id);
      }
      stream.onRequest(r);
    });
    call.on('error', () => undefined);
  }
}
