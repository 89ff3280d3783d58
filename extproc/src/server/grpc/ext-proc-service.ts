// The ext_proc adapter: one stream per request (docs/architecture.md, Envoy fact 10). It answers the
// request-headers message with the policy token as dynamic metadata in the
// `steadfast` namespace, and every other phase with "continue". It never fails a
// stream because of a request it cannot match or a message it does not expect.
import type * as grpc from '@grpc/grpc-js';
import {
  type ExtProcRequest,
  type HeaderFilter,
  decodeProcessingRequest,
  encodeMetadataAnswer,
  encodedContinue,
} from './ext-proc-codec.js';
import type { ExtProcTallies } from './ext-proc-tallies.js';
import type { RequestAttributes } from './request-attributes.js';
import type { ListenerBy } from '../../resolve/request.js';
import { METADATA_NAMESPACE, METADATA_POLICY_KEY } from '../../policy/policy-token.js';
import { METADATA_SCOPE_KEY } from '../../resolve/answer-scope.js';

/** How a request was resolved; `invalid`: it matched a rule that fails closed. */
export interface PolicyOutcome {
  readonly result: 'matched' | 'unmatched' | 'invalid';
  readonly token?: string;
  /** How the request's Gateway port was told (absent: a lookup without a resolver). */
  readonly listener?: ListenerBy;
  /**
   * For which requests this answer holds (resolve/answer-scope.ts), so the filter may reuse
   * it; absent: the answer is not reused.
   */
  readonly scope?: string;
}

/** Maps a request to its policy: an outcome, or just the token (undefined: no rule matches). */
export type PolicyLookup = (request: RequestAttributes) => PolicyOutcome | string | undefined;

function normalize(answer: PolicyOutcome | string | undefined): PolicyOutcome {
  if (answer === undefined) return { result: 'unmatched' };
  if (typeof answer === 'string') return { result: 'matched', token: answer };
  return answer;
}

export interface ExtProcDeps {
  readonly lookup: PolicyLookup;
  /**
   * The header names `lookup` reads (lower-case), so the others are never decoded;
   * pseudo-headers and `host` are always read. Absent or undefined: every header.
   */
  readonly headersRead?: () => HeaderFilter;
  /** Where ext_proc counts; the service's metrics registry reads it. */
  readonly metrics: ExtProcTallies;
  readonly onError?: (error: unknown) => void;
  /** Close each stream once request headers are answered (default true). */
  readonly closeAfterHeaders?: boolean;
}

/** Most distinct answers kept encoded; a configuration has one per rule, so this is ample. */
const MAX_CACHED_ANSWERS = 4096;

/**
 * Encoded answers by policy token and scope: each distinct answer is serialized once. Keyed
 * by what it says, so a reload needs no invalidation; answers of old configurations fall
 * out when the map is full and is started again.
 */
export class AnswerCache {
  private readonly byToken = new Map<string, Buffer>();

  answer(token: string | undefined, scope?: string): Buffer {
    if (token === undefined && scope === undefined) return encodedContinue('request_headers');
    const key = scope === undefined ? (token as string) : `${token ?? ''}\n${scope}`;
    let b = this.byToken.get(key);
    if (b === undefined) {
      if (this.byToken.size >= MAX_CACHED_ANSWERS) this.byToken.clear();
      const fields: Array<[string, string]> = [];
      if (token !== undefined) fields.push([METADATA_POLICY_KEY, token]);
      if (scope !== undefined) fields.push([METADATA_SCOPE_KEY, scope]);
      b = encodeMetadataAnswer(METADATA_NAMESPACE, fields);
      this.byToken.set(key, b);
    }
    return b;
  }
}

function answerRequestHeaders(req: ExtProcRequest, deps: ExtProcDeps, answers: AnswerCache): Buffer {
  const started = performance.now();
  let outcome: PolicyOutcome;
  try {
    // A reload between decoding and now may read other headers: read the message again.
    const keep = deps.headersRead?.();
    const attributes =
      keep === req.keep || req.bytes === undefined
        ? req.attributes
        : decodeProcessingRequest(req.bytes, keep).attributes;
    outcome = normalize(deps.lookup(attributes as RequestAttributes));
  } catch (e) {
    // A resolver bug must not fail the request: answer without policy, and count it.
    deps.metrics.requests.error++;
    deps.metrics.errors.resolve++;
    deps.onError?.(e);
    return answers.answer(undefined);
  }
  deps.metrics.observeResolve((performance.now() - started) / 1e3);
  deps.metrics.requests[outcome.result]++;
  if (outcome.listener !== undefined) deps.metrics.listeners[outcome.listener]++;
  return answers.answer(outcome.result === 'matched' ? outcome.token : undefined, outcome.scope);
}

/**
 * The Process handler; its messages come decoded by ext-proc-codec.ts and go out encoded.
 * Long on purpose: one stream's state (open, answered, ended, given up) is shared by the
 * handlers of its events, which must see each other's changes.
 */
export function extProcHandler(deps: ExtProcDeps) {
  const answers = new AnswerCache();
  return (call: grpc.ServerDuplexStream<ExtProcRequest, Buffer>): void => {
    deps.metrics.streams++;
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
      deps.metrics.errors.cancelled_unanswered++;
    };
    const close = (): void => {
      if (!open) return;
      open = false;
      deps.metrics.streams--;
    };
    call.on('data', (req: ExtProcRequest) => {
      try {
        const phase = req.phase;
        if (phase === undefined) {
          deps.metrics.errors.unexpected_message++;
          return;
        }
        if (call.cancelled) {
          countGaveUp();
          return;
        }
        const response =
          phase === 'request_headers' ? answerRequestHeaders(req, deps, answers) : encodedContinue(phase);
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
        deps.metrics.errors.internal++;
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
        deps.metrics.errors.stream++;
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
