// A gateway-mode Envoy fed from files: every configuration generation that compiles becomes
// Envoy's listeners, routes and clusters, written where Envoy watches (EnvoyResourceFiles keeps
// the order safe). `steadfast dev` runs that Envoy itself; `steadfast serve --envoy-files`
// feeds one that runs elsewhere (docker compose's Envoy container, through a shared volume).
import { envoyYaml } from '../envoy/envoy-yaml.js';
import { fileBootstrap, resourceFiles } from '../envoy/file-resources.js';
import type { GatewayConfigOptions } from '../envoy/gateway-config.js';
import { GenerationMemo } from '../envoy/generation-memo.js';
import { EnvoyResourceFiles, type ResourceWriterOptions } from './envoy-resource-files.js';
import { RouteFileEncoder } from './route-files.js';
import type { Snapshot } from '../pipeline/snapshot.js';

export interface GatewayFilesOptions {
  readonly envoy: GatewayConfigOptions;
  readonly log: (line: string) => void;
  /** Resolves once Envoy serves these new clusters; without it the writer waits a settling delay. */
  readonly untilClustersActive?: (names: readonly string[]) => Promise<void>;
  /** Whether Envoy refused the route files just written (envoy-resource-files.ts). */
  readonly watchRoutes?: ResourceWriterOptions['watchRoutes'];
}

export class GatewayFiles {
  private readonly files: EnvoyResourceFiles;
  /** Keeps what each generation made from the table, so a change generates only what it touched. */
  private memo: GenerationMemo;
  /** Keeps each virtual host's encoding, so a change encodes only the hosts it touched. */
  private readonly routeFiles = new RouteFileEncoder();
  private applied = 0;

  constructor(
    readonly directory: string,
    private options: GatewayFilesOptions,
  ) {
    const { untilClustersActive, watchRoutes } = options;
    this.memo = this.newMemo(options.envoy);
    this.files = new EnvoyResourceFiles(directory, {
      ...(untilClustersActive ? { untilClustersActive } : {}),
      ...(watchRoutes ? { watchRoutes } : {}),
    });
  }

  /** The last generation written for Envoy (0 before the first). */
  get appliedGeneration(): number {
    return this.applied;
  }

  /** The bootstrap that points Envoy at this directory. */
  bootstrap(): string {
    return envoyYaml(fileBootstrap(this.directory, this.options.envoy));
  }

  /**
   * A new key ring (a session-key Secret changed): the filter's configuration carries the keys,
   * so what is written next is made anew with them.
   */
  useSessionKeys(sessionKeys: readonly string[]): void {
    const envoy = { ...this.options.envoy, sessionKeys };
    this.options = { ...this.options, envoy };
    this.memo = this.newMemo(envoy);
  }

  /** A memo for these options that keeps each virtual host as its encoding, not its JSON. */
  private newMemo(envoy: GatewayConfigOptions): GenerationMemo {
    return new GenerationMemo(envoy, (host, configuration) => this.routeFiles.keepHost(host, configuration));
  }

  /**
   * Writes one generation (as `version`, when the same generation is written again with new
   * keys); false (logged) when it could not be, and Envoy keeps the last good one.
   */
  async apply(snapshot: Snapshot, generation: number, version = String(generation)): Promise<boolean> {
    try {
      const next = resourceFiles(
        snapshot.ir,
        this.options.envoy,
        this.directory,
        version,
        snapshot.tls,
        this.memo,
      );
      for (const w of next.warnings) this.options.log(`warning: ${w}`);
      // The hosts the memo made were encoded as it made them (keepHost): the counts run on.
      this.routeFiles.begin();
      const routes = new Map<string, Uint8Array>();
      for (const [file, rc] of next.routes) routes.set(file, this.routeFiles.encode(rc, version));
      this.routeFiles.end();
      await this.files.write({ ...next, routes }, version);
      this.applied = generation;
      return true;
    } catch (e) {
      this.options.log(
        `configuration generation ${generation} not applied; Envoy keeps the last good one: ${(e as Error).message}`,
      );
      return false;
    }
  }
}
