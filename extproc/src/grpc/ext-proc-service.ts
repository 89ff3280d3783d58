// The ext_proc adapter: one stream per request (DESIGN.md fact 11). It answers the
// request-headers message with the policy token as dynamic metadata in the
// `steadfast` namespace, and every other phase with "continue". It never fails a
// stream because of a request it cannot match or a message it does not expect.
import type * as grpc from '@grpc/grpc-js';
import type { ServiceMetrics } from '../runtime/metrics.js';
import {
  continueResponse,
  phaseOf,
  type ProcessingRequest,
  type ProcessingResponse,
} from './ext-proc-messages.js';
import { type RequestAttributes, requestAttributes } from './request-attributes.js';

/** The dynamic-metadata namespace Envoy must list in `receiving_namespaces.untyped`. */
export const METADATA_NAMESPACE = 'steadfast';
export const METADATA_POLICY_KEY = 'policy';

/** Maps a request to its policy token, or undefined when no rule matches. */
export type PolicyLookup = (request: RequestAttributes) => string | undefined;

export interface ExtProcDeps {
  readonly lookup: PolicyLookup;
  readonly metrics: ServiceMetrics;
  readonly onError?: (error: unknown) => void;
}

export function policyResponse(token: string | undefined): ProcessingResponse {
  const response: ProcessingResponse = { request_headers: { response: {} } };
  if (token !== undefined) {
    response.dynamic_metadata = {
      fields: {
        [METADATA_NAMESPACE]: {
          structValue: { fields: { [METADATA_POLICY_KEY]: { stringValue: token } } },
        },
      },
    };
  }
  return response;
}

function answerRequestHeaders(req: ProcessingRequest, deps: ExtProcDeps): ProcessingResponse {
  const started = process.hrtime.bigint();
  let token: string | undefined;
  try {
    token = deps.lookup(requestAttributes(req.request_headers));
  } catch (e) {
    // A resolver bug must not fail the request: answer without policy, and count it.
    deps.metrics.extProcRequests.inc({ result: 'error' });
    deps.metrics.extProcErrors.inc({ kind: 'resolve' });
    deps.onError?.(e);
    return policyResponse(undefined);
  }
  deps.metrics.extProcResolveSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
  deps.metrics.extProcRequests.inc({ result: token === undefined ? 'unmatched' : 'matched' });
  return policyResponse(token);
}

export function extProcHandler(deps: ExtProcDeps) {
  return (call: grpc.ServerDuplexStream<ProcessingRequest, ProcessingResponse>): void => {
    deps.metrics.extProcStreams.inc();
    let open = true;
    const close = (): void => {
      if (!open) return;
      open = false;
      deps.metrics.extProcStreams.dec();
    };
    call.on('data', (req: ProcessingRequest) => {
      const phase = req ? phaseOf(req) : undefined;
      if (phase === undefined) {
        deps.metrics.extProcErrors.inc({ kind: 'unexpected_message' });
        return;
      }
      const response =
        phase === 'request_headers' ? answerRequestHeaders(req, deps) : continueResponse(phase);
      if (open && call.writable) call.write(response);
    });
    call.on('end', () => {
      close();
      call.end();
    });
    call.on('error', (e) => {
      // Envoy cancels the stream when the request ends early; that is not our error.
      if ((e as { code?: number }).code !== 1) {
        deps.metrics.extProcErrors.inc({ kind: 'stream' });
        deps.onError?.(e);
      }
      close();
    });
    call.on('close', close);
  };
}
