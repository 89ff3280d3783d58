// Writes gateway-mode resources where a running Envoy watches for them, so a new
// configuration takes effect without a restart and without failing requests in flight.
// Each file is written under a temporary name and renamed into place: Envoy only reacts
// to moves, so it never reads half a file. The order keeps every route's cluster present:
// clusters (old and new together), then routes, then certificates, then listeners; clusters
// no route uses any more are removed only after a settling delay, and only once Envoy took
// the new routes (when it refuses them it keeps serving the old ones, which need theirs).
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  CDS_FILE,
  LDS_FILE,
  type ResourceFiles,
  clustersFile,
  resourcePath,
} from '../envoy/file-resources.js';
import type { Json } from '../json.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface ResourceWriterOptions {
  /** Time for Envoy to warm new clusters before routes point at them, and to move routes off old ones. */
  readonly settleMs?: number;
  /**
   * Resolves once Envoy serves these new clusters (a DNS cluster warms only after its first
   * resolution); without it, the writer waits `settleMs`.
   */
  readonly untilClustersActive?: (names: readonly string[]) => Promise<void>;
  /**
   * Called before the route files are written; what it returns is called after, with how
   * many were written, and resolves true when Envoy refused any of them. Envoy then keeps
   * serving its previous routes, so the clusters they use are kept until routes it takes.
   * Without it, the writer assumes Envoy took them.
   */
  readonly watchRoutes?: () => Promise<(written: number) => Promise<boolean>>;
}

/** What the writer puts in place: route files already encoded (xds/route-files.ts). */
export interface WrittenFiles extends Omit<ResourceFiles, 'routes'> {
  /** RDS file name → its content. */
  readonly routes: ReadonlyMap<string, string | Uint8Array>;
}

export class EnvoyResourceFiles {
  private clusters: ReadonlyMap<string, Json> = new Map();
  private routeFiles = new Set<string>();
  private secretFiles = new Set<string>();
  private writing: Promise<void> = Promise.resolve();
  private serial = 0;

  constructor(
    readonly directory: string,
    private readonly options: ResourceWriterOptions = {},
  ) {}

  /** Writes one configuration; calls are serialized, so the last one written wins. */
  write(files: WrittenFiles, version: string): Promise<void> {
    const next = this.writing.then(() => this.apply(files, version));
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** Writes one resource file into its own folder (resourcePath), by rename within that folder. */
  private async put(name: string, text: string | Uint8Array, mode = 0o644): Promise<void> {
    const path = join(this.directory, resourcePath(name));
    const folder = dirname(path);
    await mkdir(folder, { recursive: true });
    const tmp = join(folder, `.${name}.${process.pid}.${++this.serial}.tmp`);
    await writeFile(tmp, text, { mode });
    await rename(tmp, path);
  }

  private async remove(name: string): Promise<void> {
    await rm(dirname(join(this.directory, resourcePath(name))), { recursive: true, force: true });
  }

  private async apply(files: WrittenFiles, version: string): Promise<void> {
    await mkdir(this.directory, { recursive: true });
    const settle = this.options.settleMs ?? 300;
    const first = this.routeFiles.size === 0 && this.clusters.size === 0;
    const merged = new Map(this.clusters);
    for (const [name, c] of files.clusters) merged.set(name, c);
    const added = [...files.clusters.keys()].filter((n) => !this.clusters.has(n));
    await this.put(CDS_FILE, clustersFile(merged.values(), `${version}-merge`));
    if (!first && added.length > 0) {
      const until = this.options.untilClustersActive;
      await (until ? until(added) : sleep(settle));
    }
    const refused = first ? undefined : await this.options.watchRoutes?.();
    for (const [name, text] of files.routes) await this.put(name, text);
    // Private keys: readable by this user only. Before the listeners that name them.
    for (const [name, text] of files.secrets) await this.put(name, text, 0o600);
    await this.put(LDS_FILE, files.listeners);
    const staleSecrets = [...this.secretFiles].filter((f) => !files.secrets.has(f));
    this.secretFiles = new Set(files.secrets.keys());
    for (const f of staleSecrets) await this.remove(f);
    if (refused && (await refused(files.routes.size))) {
      // Envoy serves the previous routes: keep their clusters (and route files) until it takes new ones.
      this.clusters = merged;
      for (const f of files.routes.keys()) this.routeFiles.add(f);
      return;
    }
    const staleRoutes = [...this.routeFiles].filter((f) => !files.routes.has(f));
    this.routeFiles = new Set(files.routes.keys());
    this.clusters = files.clusters;
    if (merged.size !== files.clusters.size || staleRoutes.length > 0) {
      if (!first) await sleep(settle);
      await this.put(CDS_FILE, clustersFile(files.clusters.values(), version));
      for (const f of staleRoutes) await this.remove(f);
    }
  }
}
