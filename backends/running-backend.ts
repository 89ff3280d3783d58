// What every start function returns: where the backend listens and how to stop it.

export interface RunningBackend {
  /** The instance name the backend reports in its answers. */
  readonly name: string;
  readonly address: string;
  /** The bound port, also when port 0 was asked for. */
  readonly port: number;
  /** Stops listening and drops every open connection. Idempotent. */
  close(): Promise<void>;
}
