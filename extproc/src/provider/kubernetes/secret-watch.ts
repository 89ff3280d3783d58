// One Secret watched by name (its own list and watch, reflector.ts), and kept watched: a first
// list that fails — an account that may get the Secret but not list or watch it, an API server
// away or shedding load — is tried again after a bounded back-off, while what was read last
// stays in use. Each change of state (watched; not watched, and why) is logged once, and
// state() says it for /metrics.
import type { WatchedSecret } from '../key-source.js';
import type { KubeClient } from './client.js';
import { WATCHED_KINDS, type WatchedKind, listPath } from './kinds.js';
import { type KubeObject, Reflector } from './reflector.js';

const SECRET_KIND = WATCHED_KINDS.find((k) => k.kind === 'Secret') as WatchedKind;
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;

export interface SecretWatchHooks {
  /** The Secret as the API server has it now (listed, added or changed). */
  seen(secret: KubeObject): void;
  /** The Secret was deleted. */
  deleted(): void;
}

export class SecretWatch {
  private reflector: Reflector | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;
  /** Why it is not watched ('' while it is, or before the first try ends). */
  private problem = '';
  private watched = false;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly name: string,
    private readonly flag: string,
    private readonly hooks: SecretWatchHooks,
    /** Lines for the log; each is about this Secret (`what` says which). */
    private readonly log: (line: string) => void,
    /** How a line names the Secret: "xds: TLS Secret ns/name (--xds-tls-secret)". */
    private readonly what: string,
  ) {}

  /** Lists and watches now, and again after each failed first list; never rejects. */
  start(): void {
    this.attempt();
  }

  state(): WatchedSecret {
    // Watched once started, while its list and watch keep working (the reflector retries them).
    const watched = this.watched && this.reflector?.problem === undefined;
    return { secret: `${this.namespace}/${this.name}`, flag: this.flag, watched };
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.reflector?.stop();
  }

  private attempt(): void {
    if (this.stopped) return;
    const reflector = new Reflector(
      this.client,
      SECRET_KIND,
      listPath(SECRET_KIND, this.namespace, `metadata.name=${this.name}`),
      {
        changed: () => {},
        touched: (_k, o) => this.hooks.seen(o),
        deleted: () => this.hooks.deleted(),
        // The reflector's own lines (a watch restarted) say which Secret they are about.
        log: (line) => this.log(`${this.what}: ${line}`),
      },
    );
    this.reflector = reflector;
    // No patience for an API server that is starting: this one is up (the Secret was read).
    reflector.start(0).then(
      () => {
        if (this.stopped) return reflector.stop();
        this.failures = 0;
        this.watched = true;
        if (this.problem !== '') this.log(`${this.what}: watched now; its changes are followed again`);
        this.problem = '';
      },
      (e: unknown) => {
        if (this.stopped) return;
        this.failures++;
        const why = (e as Error).message;
        if (why !== this.problem)
          this.log(
            `${this.what}: not watched, so its changes are not seen; what it held stays in use; trying again (up to every ${RETRY_MAX_MS / 1000} s): ${why}`,
          );
        this.problem = why;
        const ms = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(this.failures - 1, 10));
        this.timer = setTimeout(() => this.attempt(), ms);
        this.timer.unref();
      },
    );
  }
}
