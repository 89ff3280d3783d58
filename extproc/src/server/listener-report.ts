// Attach mode: the requests whose Gateway port the control service could not tell, or was
// told wrongly, each kind of case reported once (the log and /v1/status) with what to do.
// The per-request cost when nothing is wrong is a few comparisons.
import type { ListenerProblemView } from './admin/config-view.js';
import type { Resolver } from '../resolve/compile.js';
import type { ListenerChoice, RequestListener } from '../resolve/request.js';
import { ATTRIBUTE_GATEWAY_PORT, GATEWAY_PORT_METADATA_KEY } from '../ir/listener-ports.js';
import { METADATA_NAMESPACE } from '../policy/policy-token.js';

const METADATA_NAME = `${METADATA_NAMESPACE}.${GATEWAY_PORT_METADATA_KEY}`;

/** Distinct cases kept; more are counted in the metrics only. */
const MAX_LISTENER_PROBLEMS = 32;

function portsText(resolver: Resolver): string {
  return resolver.ports.length > 0 ? resolver.ports.join(', ') : 'none';
}

/** The problem a request shows, if any; its `key` names the case. */
function listenerProblem(
  resolver: Resolver,
  choice: ListenerChoice,
  listener: RequestListener | undefined,
): Omit<ListenerProblemView, 'firstAt'> | undefined {
  if (listener?.invalidGatewayPort !== undefined) {
    const value = listener.invalidGatewayPort;
    return {
      key: `invalid-metadata:${value}`,
      kind: 'invalid-metadata',
      message: `an Envoy listener's metadata ${METADATA_NAME} is "${value}", not a port number: it is ignored`,
    };
  }
  if (choice.by === 'metadata' && !resolver.ports.includes(choice.port as number)) {
    return {
      key: `metadata-port:${choice.port}`,
      kind: 'metadata-port-without-routes',
      port: choice.port as number,
      message:
        `an Envoy listener declares Gateway port ${choice.port} (${METADATA_NAME}), which no Gateway ` +
        `HTTP or HTTPS listener has (ports: ${portsText(resolver)}): its requests get no policy`,
    };
  }
  if (choice.by !== 'unknown') return undefined;
  const local = listener?.destinationPort;
  const consequence =
    'so they get a policy only where the routes of every Gateway port agree; give that Envoy listener ' +
    `the metadata ${METADATA_NAME} (the snippet lists it under listener_metadata)`;
  if (local !== undefined) {
    return {
      key: `unknown-port:${local}`,
      kind: 'unknown-port',
      port: local,
      message:
        `requests arrive on Envoy port ${local}, which is no Gateway listener's port (ports: ` +
        `${portsText(resolver)}), from a listener without ${METADATA_NAME} metadata, ${consequence}`,
    };
  }
  return {
    key: 'no-attributes',
    kind: 'no-attributes',
    message:
      `Envoy sends no listener attributes (the ext_proc filter's request_attributes of the snippet: ` +
      `destination.port, ${ATTRIBUTE_GATEWAY_PORT}), ${consequence}; or generate the snippet again`,
  };
}

/** The cases seen since the Gateway ports last changed. */
export class ListenerReport {
  private readonly seen = new Map<string, ListenerProblemView>();
  private ports = '';

  /** @param onNew called once per new case (the log; a worker tells the primary). */
  constructor(private readonly onNew?: (problem: ListenerProblemView) => void) {}

  observe(resolver: Resolver, choice: ListenerChoice, listener: RequestListener | undefined): void {
    // The common cases, told without a problem, return here.
    if (choice.by !== 'unknown' && choice.by !== 'metadata' && listener?.invalidGatewayPort === undefined)
      return;
    const problem = listenerProblem(resolver, choice, listener);
    if (problem === undefined || this.seen.has(problem.key)) return;
    this.add({ ...problem, firstAt: new Date().toISOString() });
  }

  /** Records a case (from a worker process); a known one is kept as first seen. */
  add(problem: ListenerProblemView): void {
    if (this.seen.has(problem.key) || this.seen.size >= MAX_LISTENER_PROBLEMS) return;
    this.seen.set(problem.key, problem);
    this.onNew?.(problem);
  }

  /** A new configuration: cases seen under other Gateway ports no longer hold. */
  configured(resolver: Resolver): void {
    const ports = resolver.ports.join(',');
    if (ports !== this.ports) this.seen.clear();
    this.ports = ports;
  }

  get problems(): readonly ListenerProblemView[] {
    return [...this.seen.values()];
  }
}
