// One row of bench:scale: one mode at one number of routes.
export interface ScaleRow {
  readonly mode: 'gateway' | 'attach';
  /** Where the objects came from: files (absent in older results) or a Kubernetes API server. */
  readonly provider?: 'files' | 'kubernetes';
  /** Kubernetes: from the last route served to its status written (all routes' status). */
  readonly statusSeconds?: number;
  readonly routes: number;
  /** From the command's start to the last route served (gateway: answered through Envoy). */
  readonly readySeconds: number;
  /** Peak resident memory of the control service, and of Envoy (gateway mode), in MiB. */
  readonly controlPeakMiB: number;
  readonly envoyPeakMiB?: number;
  /**
   * The control service's resident memory REST_SECONDS after the last change (absent in
   * older results): what it holds between changes, once V8 has returned what the rebuilds left.
   */
  readonly controlRestMiB?: number;
  /** A new route in a new file, an edit of one route in its file of 10,000, that route's file removed. */
  readonly addSeconds: number;
  readonly editSeconds: number;
  readonly deleteSeconds: number;
  /** Envoy resource bytes (the JSON the local gateway writes) per route. */
  readonly envoyBytesPerRoute: number;
}
