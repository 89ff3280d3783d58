// Types for scripts/kube-local.mjs, which tests import.
export declare const KUBECTL: string;
export declare const HELM: string;
export declare const CRD_DIR: string;
export declare const RBAC_FILE: string;

export interface LocalKube {
  /** Where its state and logs are. */
  readonly dir: string;
  /** https://127.0.0.1:PORT */
  readonly server: string;
  /** The API server's certificate (its kubeconfigs name it). */
  readonly ca: string;
  readonly adminToken: string;
  /** A kubeconfig for user admin (system:masters). */
  readonly adminConfig: string;
  /** A kubeconfig for user steadfast, bound to the ClusterRole of deploy/kubernetes/rbac.yaml only. */
  readonly steadfastConfig: string;
  readonly etcd: string;
  stop(): Promise<void>;
  /** Stops the API server, waits `downMs`, and starts it again on the same port; etcd keeps the objects. */
  restartApiServer(downMs?: number): Promise<void>;
}

export declare function ensureKubeTools(log?: (line: string) => void): void;
export declare function startLocalKube(options?: {
  readonly dir?: string;
  readonly apiPort?: number;
  readonly log?: (line: string) => void;
  /** Serve /debug/pprof (a CPU profile of the API server); off by default. */
  readonly profiling?: boolean;
}): Promise<LocalKube>;
