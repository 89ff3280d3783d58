// GRPCRoute header modifiers through the gateway, called with grpcurl: a rule's
// RequestHeaderModifier changes the metadata the backend receives, its
// ResponseHeaderModifier the response headers the client gets. Upstream's conformance
// suite has a GRPCRoute test for the request side only (the conformance table ports it);
// this is the response side, with the request side beside it, and the route's other rule
// (no filters) left as the backend answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcExchange } from './conformance/grpc-exchange.js';
import { type GrpcGateway, startGrpcGateway } from './support/grpc-gateway.js';

describe('gateway mode: GRPCRoute RequestHeaderModifier and ResponseHeaderModifier (grpcurl)', () => {
  let grpc: GrpcGateway;

  beforeAll(async () => {
    grpc = await startGrpcGateway(`filters:
        - type: RequestHeaderModifier
          requestHeaderModifier:
            set: [{ name: X-Request-Set, value: set-by-gateway }]
            add: [{ name: X-Request-Add, value: added-by-gateway }]
            remove: [X-Request-Remove]
        - type: ResponseHeaderModifier
          responseHeaderModifier:
            set: [{ name: X-Response-Set, value: set-by-gateway }]
            add: [{ name: X-Response-Add, value: added-by-gateway }]
            remove: [X-Backend-Instance]`);
  });

  afterAll(async () => {
    await grpc?.stop();
  });

  function call(method: string, metadata: Record<string, string>) {
    return grpcExchange({ address: grpc.address, method, authority: 'grpc.test', metadata });
  }

  it('sets, adds and removes the metadata the backend receives', async () => {
    const answer = await call('Echo', {
      'X-Request-Set': 'from-client',
      'X-Request-Add': 'from-client',
      'X-Request-Remove': 'from-client',
    });
    expect(answer.code, answer.output).toBe('OK');
    const received = new Map<string, string[]>();
    for (const { key, value } of answer.replies[0]?.metadata ?? []) {
      received.set(key, [...(received.get(key) ?? []), ...value.split(',').map((v) => v.trim())]);
    }
    expect(received.get('x-request-set')).toEqual(['set-by-gateway']);
    expect(received.get('x-request-add')).toEqual(['from-client', 'added-by-gateway']);
    expect(received.get('x-request-remove')).toBeUndefined();
  });

  it('sets, adds and removes the response headers the client gets', async () => {
    const answer = await call('Echo', {});
    expect(answer.code, answer.output).toBe('OK');
    expect(answer.headers.get('x-response-set')).toEqual(['set-by-gateway']);
    expect(answer.headers.get('x-response-add')).toEqual(['added-by-gateway']);
    // The backend names itself in x-backend-instance (backends/grpc/echo-service.ts).
    expect(answer.headers.get('x-backend-instance')).toBeUndefined();
  });

  it("leaves the other rule's calls (EchoStream) as the backend answers them", async () => {
    const answer = await call('EchoStream', { 'X-Request-Remove': 'from-client' });
    expect(answer.code, answer.output).toBe('OK');
    expect(answer.headers.get('x-backend-instance')).toEqual(['grpc-backend']);
    expect(answer.headers.get('x-response-set')).toBeUndefined();
    const keys = (answer.replies[0]?.metadata ?? []).map((m) => m.key);
    expect(keys).toContain('x-request-remove');
    expect(keys).not.toContain('x-request-set');
  });
});
