// A runner starts one thing (the provider, the served configuration, ADS, ext_proc...) and
// stops it. A command starts its runners in order through one RunGroup, which stops what
// started in reverse order: on the way out, and when a later runner fails to start.

export interface Runner<T> {
  /** Starts the thing; on failure, leaves nothing of it behind and rejects. */
  start(): Promise<T>;
  stop(): Promise<void> | void;
}

export class RunGroup {
  private readonly started: Runner<unknown>[] = [];
  private stopping: Promise<void> | undefined;

  /** Starts `runner`; when it fails, stops every runner started before it and rethrows. */
  async start<T>(runner: Runner<T>): Promise<T> {
    let value: T;
    try {
      value = await runner.start();
    } catch (e) {
      await this.stop();
      throw e;
    }
    this.started.push(runner);
    return value;
  }

  /** Stops every started runner, the last started first; once. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (let r = this.started.pop(); r; r = this.started.pop()) await r.stop();
    })();
    return this.stopping;
  }
}
