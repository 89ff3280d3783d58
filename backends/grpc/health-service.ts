// grpc.health.v1.Health: the server ("") and the Echo service are SERVING while the backend runs.
// Unknown services get NOT_FOUND from Check and SERVICE_UNKNOWN from Watch, as the health protocol says.
import {
  status,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';

interface HealthCheckRequest {
  readonly service: string;
}

type ServingStatus = 'SERVING' | 'SERVICE_UNKNOWN';

interface HealthCheckResponse {
  readonly status: ServingStatus;
}

export function healthService(servedServices: readonly string[]): UntypedServiceImplementation {
  const known = new Set(['', ...servedServices]);
  return {
    Check(
      call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
      callback: sendUnaryData<HealthCheckResponse>,
    ) {
      if (!known.has(call.request.service)) {
        callback({
          code: status.NOT_FOUND,
          details: `unknown service ${JSON.stringify(call.request.service)}`,
        });
        return;
      }
      callback(null, { status: 'SERVING' });
    },
    Watch(call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) {
      // The status never changes while the backend runs: send it once and keep the stream open.
      call.write({ status: known.has(call.request.service) ? 'SERVING' : 'SERVICE_UNKNOWN' });
    },
  };
}
