// grpc.health.v1.Health: SERVING while the service is up, NOT_SERVING while it drains.
import * as grpc from '@grpc/grpc-js';
import { EXT_PROC_SERVICE } from './protos.js';

export type ServingStatus = 'SERVING' | 'NOT_SERVING';

interface HealthRequest {
  service?: string;
}
interface HealthResponse {
  status: ServingStatus | 'SERVICE_UNKNOWN';
}

const KNOWN = new Set(['', EXT_PROC_SERVICE]);

export class HealthState {
  private status: ServingStatus = 'SERVING';
  private readonly watchers = new Set<grpc.ServerWritableStream<HealthRequest, HealthResponse>>();

  get current(): ServingStatus {
    return this.status;
  }

  set(status: ServingStatus): void {
    this.status = status;
    for (const w of this.watchers) w.write({ status });
  }

  /** Ends open Watch streams (on shutdown, so the server can close). */
  endWatches(): void {
    for (const w of this.watchers) w.end();
    this.watchers.clear();
  }

  handlers(): grpc.UntypedServiceImplementation {
    return {
      Check: (
        call: grpc.ServerUnaryCall<HealthRequest, HealthResponse>,
        callback: grpc.sendUnaryData<HealthResponse>,
      ) => {
        const service = call.request?.service ?? '';
        if (!KNOWN.has(service)) {
          callback({ code: grpc.status.NOT_FOUND, details: `unknown service "${service}"` });
          return;
        }
        callback(null, { status: this.status });
      },
      Watch: (call: grpc.ServerWritableStream<HealthRequest, HealthResponse>) => {
        const service = call.request?.service ?? '';
        if (!KNOWN.has(service)) {
          call.write({ status: 'SERVICE_UNKNOWN' });
        } else {
          call.write({ status: this.status });
        }
        this.watchers.add(call);
        call.on('cancelled', () => this.watchers.delete(call));
        call.on('close', () => this.watchers.delete(call));
      },
    };
  }
}
