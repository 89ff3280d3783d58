// One keep-alive HTTPS agent for all of a client's requests and watches, so they reuse
// connections and TLS sessions; made again only when the TLS material the kubeconfig gives
// changes (a certificate file rotated on disk, a new certificate from an exec plugin). The
// material becomes one secure context held by the agent, and leaves each request's options:
// Node names an agent's connections by the TLS options of each request, which would turn the
// CA, certificate and key into one string per request (and make a context per connection).
import { Agent, type RequestOptions } from 'node:https';
import { type SecureContextOptions, createSecureContext } from 'node:tls';

/** What the kubeconfig gives for TLS, as @kubernetes/client-node puts it on a request's options. */
const CONTEXT_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase'] as const;
const CONNECT_KEYS = ['rejectUnauthorized', 'servername'] as const;
type Material = Partial<Record<(typeof CONTEXT_KEYS)[number] | (typeof CONNECT_KEYS)[number], unknown>>;

/**
 * An idle connection is closed after this long, before the API server closes it (kube-apiserver
 * after 90 s): a request sent on a connection the server is closing fails.
 */
const IDLE_MS = 30_000;

function same(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return a === b;
}

export class ConnectionPool {
  private agent: Agent | undefined;
  private material: Material | undefined;

  /** Moves the TLS material out of a request's options and gives it the agent made from that material. */
  use(options: RequestOptions): void {
    const material: Material = {};
    for (const k of [...CONTEXT_KEYS, ...CONNECT_KEYS]) {
      if (options[k] !== undefined) material[k] = options[k];
      delete options[k];
    }
    const held = this.material;
    const changed = !held || [...CONTEXT_KEYS, ...CONNECT_KEYS].some((k) => !same(held[k], material[k]));
    if (!this.agent || changed) this.replace(material);
    options.agent = this.agent;
  }

  /** Closes the idle connections: one of them was found closed by the other end, the others idle as long may be too. */
  dropIdle(): void {
    destroyIdle(this.agent);
  }

  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
    this.material = undefined;
  }

  private replace(material: Material): void {
    const context: SecureContextOptions = {};
    for (const k of CONTEXT_KEYS) if (material[k] !== undefined) Object.assign(context, { [k]: material[k] });
    const connect: Record<string, unknown> = {};
    for (const k of CONNECT_KEYS) if (material[k] !== undefined) connect[k] = material[k];
    // First: material that does not make a context (a key that is not the certificate's, half
    // rotated) fails this request and leaves the agent in use as it was.
    const secureContext = createSecureContext(context);
    if (this.agent) retire(this.agent);
    this.agent = new Agent({ keepAlive: true, timeout: IDLE_MS, secureContext, ...connect });
    this.material = material;
  }
}

/** An agent no longer used: its idle connections close now, the others once their request is done. */
function retire(agent: Agent): void {
  agent.on('free', (socket: { destroy(): void }) => socket.destroy());
  destroyIdle(agent);
}

function destroyIdle(agent: Agent | undefined): void {
  for (const sockets of Object.values(agent?.freeSockets ?? {})) for (const s of sockets ?? []) s.destroy();
}
