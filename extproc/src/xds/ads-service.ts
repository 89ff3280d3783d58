// The Aggregated Discovery Service's two methods as grpc-js definitions, encoded with Envoy's
// own protos: StreamAggregatedResources (state of the world) and DeltaAggregatedResources
// (incremental). Requests decode to plain objects with the protos' field names.
import type * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import type { Json } from '../json.js';
import type { DiscoveryRequest } from './ads-stream.js';
import { envoyProtoRoot } from './envoy-protos.js';

const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
const DISCOVERY = 'envoy.service.discovery.v3';

function method(name: string, request: string, response: string): grpc.MethodDefinition<unknown, unknown> {
  const root = envoyProtoRoot();
  const req = root.lookupType(`${DISCOVERY}.${request}`);
  const res = root.lookupType(`${DISCOVERY}.${response}`);
  // The encoding as a Buffer over the same memory: a copy of a 5 MB response (10,000 routes) per
  // stream is garbage the size of what the stream was sent, beside grpc-js's own framed copy.
  const encode = (type: protobuf.Type) => (m: object) => {
    const bytes = type.encode(type.fromObject(m)).finish();
    return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
  const decode = (type: protobuf.Type) => (b: Buffer) =>
    type.toObject(type.decode(b), { longs: String, enums: String, defaults: false });
  const definition: grpc.MethodDefinition<DiscoveryRequest, Json> = {
    path: `/${ADS_SERVICE}/${name}`,
    requestStream: true,
    responseStream: true,
    requestSerialize: encode(req),
    requestDeserialize: decode(req) as (b: Buffer) => DiscoveryRequest,
    responseSerialize: encode(res),
    responseDeserialize: decode(res) as (b: Buffer) => Json,
  };
  return definition as grpc.MethodDefinition<unknown, unknown>;
}

/** Both methods of the service (for a server, or a client in a test). */
export function adsServiceDefinition(): grpc.ServiceDefinition<grpc.UntypedServiceImplementation> {
  return {
    StreamAggregatedResources: method('StreamAggregatedResources', 'DiscoveryRequest', 'DiscoveryResponse'),
    DeltaAggregatedResources: method(
      'DeltaAggregatedResources',
      'DeltaDiscoveryRequest',
      'DeltaDiscoveryResponse',
    ),
  };
}
