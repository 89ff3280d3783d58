// The ext_proc adapter: one stream per request (DESIGN.md fact 11). It answers the
// request-headers message with the policy token as dynamic metadata in the
// `steadfast` namespace, and every other phase with "continue". It never fails a
// stream because of a request it cannot match or a message it does not expect.
import type * as grpc from '@grpc/grpc-js';
import type { Counter, Gauge, Histogram } from 'prom-client';
import {
  continueResponse,
  phaseOf,
  type ProcessingRequest,
  type ProcessingResponse,
} from './ext-proc-messages.js';
import { type RequestAttributes, requestAttributes } from './request-attributes.js';
import { METADATA_NAMESPACE, METADATA_POLICY_KEY } from '../table/policy-token.js';

/** How a request was resolved; `invalid`: it matched a rule that fails closed. */
export interface PolicyOutcome {
  readonly result: 'matched' | 'unmatched' | 'invalid';
  readonly token?: string;
}

/** Maps a request to its policy: an outcome, or just the token (undefined: no rule matches). */
export type PolicyLookup = (request: RequestAttributes) => PolicyOutcome | string | undefined;

function normalize(answer: PolicyOutcome | string | undefined): PolicyOutcome {
  if (answer === undefined) return { result: 'unmatched' };
  if (typeof answer === 'string') return { result: 'matched', token: answer };
  return answer;
}

/** The counters ext_proc updates; the service's metrics registry provides them. */
export interface ExtProcMetrics {
  readonly extProcRequests: Counter<'result'>;
  readonly extProcResolveSeconds: Histogram;
  readonly extProcStreams: Gauge;
  readonly extProcErrors: Counter<'kind'>;
}

export interface ExtProcDeps {
  readonly lookup: PolicyLookup;
  readonly metrics: ExtProcMetrics;
  readonly onError?: (error: unknown) => void;
  /** Close each stream once request headers are answered (default true). */
  readonly closeAfterHeaders?: boolean;
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
  let outcome: PolicyOutcome;
  try {
    outcome = normalize(deps.lookup(requestAttributes(req.request_headers)));
  } catch (e) {
    // A resolver bug must not fail the request: answer without policy, and count it.
    deps.metrics.extProcRequests.inc({ result: 'error' });
    deps.metrics.extProcErrors.inc({ kind: 'resolve' });
    deps.onError?.(e);
    return policyResponse(undefined);
  }
  deps.metrics.extProcResolveSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
  deps.metrics.extProcRequests.inc({ result: outcome.result });
  return policyResponse(outcome.result === 'matched' ? outcome.token : undefined);
}

export function extProcHandler(deps: ExtProcDeps) {
  return (call: grpc.ServerDuplexStream<ProcessingRequest, ProcessingResponse>): void => {
    deps.metrics.extProcStreams.inc();
    let open = true;
    let answered = false;
    let ended = false;
    const finish = (): void => {
      if (ended) return;
      ended = true;
      call.end();
    };
    let gaveUp = false;
    // Envoy gave up before the answer (message_timeout, or the client left): the request
    // went on without policy. Counted once, as it is how a slow service shows in our metrics.
    const countGaveUp = (): void => {
      if (answered || gaveUp) return;
      gaveUp = true;
      deps.metrics.extProcErrors.inc({ kind: 'cancelled_unanswered' });
    };
    const close = (): void => {
      if (!open) return;
      open = false;
      deps.metrics.extProcStreams.dec();
    };
    call.on('data', (req: ProcessingRequest) => {
      try {
        const phase = req ? phaseOf(req) : undefined;
        if (phase === undefined) {
          deps.metrics.extProcErrors.inc({ kind: 'unexpected_message' });
          return;
        }
        if (call.cancelled) {
          countGaveUp();
          return;
        }
        const response =
          phase === 'request_headers' ? answerRequestHeaders(req, deps) : continueResponse(phase);
        if (open && call.writable) {
          call.write(response);
          if (phase === 'request_headers') {
            answered = true;
            // Nothing more to say about this request: closing cleanly lets Envoy "proceed
            // without consulting the server" (external_processor.proto) instead of holding
            // the stream open for the life of the request and resetting it at the end.
            if (deps.closeAfterHeaders !== false) finish();
          }
        }
      } catch (e) {
        // Nothing a peer sends may take the service down: count it, leave the stream to Envoy.
        deps.metrics.extProcErrors.inc({ kind: 'internal' });
        deps.onError?.(e);
      }
    });
    call.on('end', () => {
      close();
      finish();
    });
    call.on('error', (e) => {
      // Envoy cancels the stream when the request ends early; that is not our error.
      if ((e as { code?: number }).code !== 1) {
        deps.metrics.extProcErrors.inc({ kind: 'stream' });
        deps.onError?.(e);
      }
      close();
    });
    call.on('cancelled', () => {
      countGaveUp();
      close();
    });
    call.on('close', close);
  };
}
