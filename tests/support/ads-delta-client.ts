// A gRPC client on the ADS server in an Envoy's place, for the tests of tests/xds/: it writes
// requests as the test says and keeps every response, to wait for the next of a type.
import * as grpc from '@grpc/grpc-js';
import type { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { waitUntil } from './wait-until.js';

type Json = Record<string, unknown>;

export interface DeltaResponse {
  type_url: string;
  nonce: string;
  resources?: { name: string; version: string; resource?: { type_url: string; value: Buffer } }[];
  removed_resources?: string[];
}

export class AdsClient {
  readonly received: DeltaResponse[] = [];
  readonly call: grpc.ClientDuplexStream<Json, DeltaResponse>;
  private readonly client: grpc.Client;

  constructor(
    address: string,
    server: AdsServer,
    method: 'DeltaAggregatedResources' | 'StreamAggregatedResources',
  ) {
    const Ctor = grpc.makeGenericClientConstructor(server.definition(), 'Ads');
    this.client = new Ctor(address, grpc.credentials.createInsecure());
    this.call = (
      this.client as unknown as Record<string, () => grpc.ClientDuplexStream<Json, DeltaResponse>>
    )[method]?.call(this.client) as grpc.ClientDuplexStream<Json, DeltaResponse>;
    this.call.on('data', (r: DeltaResponse) => this.received.push(r));
  }

  async next(type: string, after: number): Promise<DeltaResponse> {
    await waitUntil(`a ${type} push`, () => this.received.slice(after).some((r) => r.type_url === type));
    return this.received.slice(after).find((r) => r.type_url === type) as DeltaResponse;
  }

  close(): void {
    this.call.end();
    this.client.close();
  }
}
