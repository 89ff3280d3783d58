// Session keys from a Kubernetes Secret (`--session-key-secret NAMESPACE/NAME`): its
// data.keys holds the lines of a key file. Read once at start, then that Secret alone is
// watched (any type; secret-watch.ts: a watch that cannot start is tried again), so a new ring
// reaches the fleet without a restart. A Secret deleted, or left without data.keys, is not a
// change: the keys in use stay.
import type { KeySource, SessionKeyRing, WatchedSecret } from '../key-source.js';
import { keyRingOf } from '../key-files.js';
import type { KubeClient } from './client.js';
import type { KubeObject } from './reflector.js';
import { SecretWatch } from './secret-watch.js';

export class SecretKeySource implements KeySource {
  readonly description: string;
  private readonly namespace: string;
  private readonly name: string;
  private secretWatch: SecretWatch | undefined;
  /** The text of data.keys last taken or refused: a repeat is no change. */
  private last: string | undefined;

  constructor(
    private readonly client: KubeClient,
    ref: string,
    private readonly log: (line: string) => void = () => {},
  ) {
    const [namespace, name, ...rest] = ref.split('/');
    if (!namespace || !name || rest.length > 0) {
      throw new Error(`--session-key-secret: "${ref}" is not NAMESPACE/NAME`);
    }
    this.namespace = namespace;
    this.name = name;
    this.description = `Secret ${ref}`;
  }

  async start(): Promise<SessionKeyRing> {
    const secret = await this.client.call<{ data?: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/secrets/${encodeURIComponent(this.name)}`,
    );
    const text = keysText(secret);
    if (text === undefined) {
      throw new Error(
        `--session-key-secret: Secret ${this.namespace}/${this.name} has no data.keys (one base64 32-byte key per line)`,
      );
    }
    this.last = text;
    return keyRingOf(text, this.description);
  }

  watch(changed: (ring: SessionKeyRing) => void, refused: (why: string) => void): Promise<void> {
    const seen = (o: KubeObject) => {
      const text = keysText(o);
      if (text === undefined || text === this.last) return;
      this.last = text;
      let ring: SessionKeyRing;
      try {
        ring = keyRingOf(text, this.description);
      } catch (e) {
        refused((e as Error).message);
        return;
      }
      changed(ring);
    };
    this.secretWatch?.stop();
    const flag = '--session-key-secret';
    const what = `session keys: Secret ${this.namespace}/${this.name} (${flag})`;
    const hooks = { seen, deleted: () => {} };
    this.secretWatch = new SecretWatch(this.client, this.namespace, this.name, flag, hooks, this.log, what);
    this.secretWatch.start();
    return Promise.resolve();
  }

  /** Whether the Secret is watched now, for /metrics. */
  watchStates(): WatchedSecret[] {
    return this.secretWatch ? [this.secretWatch.state()] : [];
  }

  close(): void {
    this.secretWatch?.stop();
    this.secretWatch = undefined;
  }
}

/** The text of a Secret's data.keys, or undefined without one. */
function keysText(secret: KubeObject | { data?: unknown }): string | undefined {
  const encoded = ((secret as { data?: unknown }).data as Record<string, unknown> | undefined)?.keys;
  return typeof encoded === 'string' ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
}
