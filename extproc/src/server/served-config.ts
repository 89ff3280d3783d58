// The configuration `steadfast serve` answers from: a ConfigStore (watched, swapped
// atomically), its reloads counted in the metrics, and the lookup ext_proc calls per
// request. Readiness means a configuration without file-level errors has been loaded.
import type { ConfigView, EnvoyRejectionView, ListenerProblemView } from './admin/config-view.js';
import { formatDiagnostic, isFatal, isWarning } from '../gatewayapi/diagnostic.js';
import type { ProvidedConfig, Provider, StatusLeadership } from '../provider/provider.js';
import type { PolicyLookup, PolicyOutcome } from './grpc/ext-proc-service.js';
import type { RequestAttributes } from './grpc/request-attributes.js';
import type { Resolver } from '../resolve/compile.js';
import { ListenerReport } from './listener-report.js';
import { ConfigStore, type ReloadFailure, errorLines } from '../pipeline/config-store.js';
import type { LoadTimes } from '../pipeline/load-times.js';
import type { ServiceMetrics } from './metrics.js';
import { SnapshotCompiler } from '../pipeline/snapshot-compiler.js';
import type { Snapshot } from '../pipeline/snapshot.js';

/**
 * A resolver's answer as ext_proc hands it on, among the routes of the request's Gateway
 * port (a case where that cannot be told goes to `report`): rules that fail closed give no
 * policy. Matched and unmatched answers carry their scope, so the filter may reuse them.
 */
export function outcomeOf(
  resolver: Resolver,
  req: RequestAttributes,
  report?: ListenerReport,
): PolicyOutcome {
  const choice = resolver.listenerOf(req.listener);
  report?.observe(resolver, choice, req.listener);
  const r = resolver.resolve(req, choice);
  // Attach mode never answers for the operator's routes: a rule that fails closed
  // (status Accepted=False / ResolvedRefs=False) applies no policy rather than half of one.
  if (r?.invalid) return { result: 'invalid', listener: choice.by };
  const scope = resolver.scope(req.authority);
  const scoped = scope === undefined ? {} : { scope };
  if (!r) return { result: 'unmatched', listener: choice.by, ...scoped };
  return { result: 'matched', token: r.token, listener: choice.by, ...scoped };
}

export interface ServedConfigOptions {
  /** Where the Gateway API objects come from; its owner starts and closes it. */
  readonly provider: Provider;
  readonly metrics: ServiceMetrics;
  readonly debounceMs?: number;
  readonly log?: (line: string) => void;
  /**
   * Work for this thread while the first configuration compiles on its own thread (the
   * gRPC server's protos and reflection: ~0.1 s of CPU that would otherwise follow the compile).
   */
  readonly whileCompiling?: () => void;
}

export class ServedConfig implements ConfigView {
  private readonly store: ConfigStore;
  /** Off the ext_proc thread: a large reload must not stall answers past message_timeout. */
  private readonly compiler = new SnapshotCompiler();
  private at: Date | undefined;
  private resolver: Resolver | undefined;
  private warned = new Set<string>();
  /** The request headers the rules matched on at the last swap, as logged. */
  private headersLogged: string | undefined;
  private rejection: EnvoyRejectionView | undefined;
  private readonly listenerReport: ListenerReport;
  /** When the generation being served passed each stage up to its swap. */
  private times: LoadTimes | undefined;

  /** The compiler, calling `work` once, as soon as the first compile is under way on the thread. */
  private compileFirst(work: (() => void) | undefined): (provided: ProvidedConfig) => Promise<Snapshot> {
    let pending = work;
    return (provided) => {
      const compiled = this.compiler.compile(provided);
      const now = pending;
      pending = undefined;
      try {
        now?.();
      } catch {
        // Only a head start: what failed here fails again, and is reported, where it is needed.
      }
      return compiled;
    };
  }

  constructor(private readonly options: ServedConfigOptions) {
    this.listenerReport = new ListenerReport((p) => options.log?.(`listener: ${p.message}`));
    const { provider } = options;
    if (provider.leadership) options.metrics.followLeadership(() => provider.leadership?.());
    this.store = new ConfigStore({
      provider: options.provider,
      ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
      compile: this.compileFirst(options.whileCompiling),
    });
    this.store.on('swap', (snapshot, generation) => {
      const load = this.store.loadTimes;
      this.times = load && { ...load, ...this.compiler.lastTimes };
      this.listenerReport.configured(snapshot.resolver);
      this.resolver = snapshot.resolver;
      this.at = new Date();
      options.metrics.configReloads.inc();
      options.metrics.configGeneration.set(generation);
      options.metrics.configMatches.set(snapshot.resolver.size);
      const problems = snapshot.errors.filter((d) => !isWarning(d)).length;
      const warnings = [...snapshot.warnings, ...snapshot.errors.filter(isWarning)];
      options.log?.(
        `configuration generation ${generation}: ${snapshot.table.routes.length} route(s), ` +
          `${snapshot.resolver.size} match entr${snapshot.resolver.size === 1 ? 'y' : 'ies'}` +
          (problems > 0 ? `, ${problems} problem(s): see /v1/status` : '') +
          (warnings.length > 0 ? `, ${warnings.length} warning(s)` : ''),
      );
      // Attach mode's Envoy forwards only the headers the rules read when its snippet was made
      // (the IR's list: the resolver took it already, so the table is not walked again).
      const read = snapshot.ir.headersRead.join(', ');
      if (this.headersLogged !== undefined && read !== this.headersLogged) {
        options.log?.(
          `the rules now match on request headers [${read}] (before: [${this.headersLogged}]); ` +
            'if your Envoy has the snippet of `steadfast envoy-config --mode attach`, generate it again ' +
            'so that its ext_proc filter forwards them (forward_rules)',
        );
      }
      this.headersLogged = read;
      // Each warning once, when it first appears (a reload repeats the ones that stay).
      const now = new Set(warnings.map(formatDiagnostic));
      for (const w of now) if (!this.warned.has(w)) options.log?.(`warning: ${w}`);
      this.warned = now;
    });
    this.store.on('reload-failed', (failure) => {
      options.metrics.configReloadErrors.inc();
      // One line per error, file:line first; reported once until the files change again.
      const lines = errorLines(failure.errors);
      if (lines.length === 0) options.log?.(failure.message);
      for (const line of lines) {
        options.log?.(`${line} (kept configuration generation ${this.store.generation})`);
      }
    });
  }

  /** Starts the compiler's thread before the first load needs it (while the provider starts). */
  prepare(): void {
    this.compiler.prepare();
  }

  /** Loads once and starts watching. Resolves after the first load, good or bad. */
  async start(): Promise<void> {
    await this.store.load();
    const failure = this.store.lastFailure;
    if (failure) {
      // The first load installs even a broken snapshot; count it as a failed load too.
      this.options.metrics.configReloadErrors.inc();
      for (const line of errorLines(failure.errors)) this.options.log?.(line);
    }
    this.store.watch();
  }

  get snapshot(): Snapshot | undefined {
    return this.store.generation > 0 ? this.store.snapshot : undefined;
  }

  get generation(): number {
    return this.store.generation;
  }

  get lastFailure(): ReloadFailure | undefined {
    return this.store.lastFailure;
  }

  /** When the generation being served was changed, read, compiled and built (load-times.ts). */
  get loadTimes(): LoadTimes | undefined {
    return this.times;
  }

  get loadedAt(): Date | undefined {
    return this.at;
  }

  get lastEnvoyRejection(): EnvoyRejectionView | undefined {
    return this.rejection;
  }

  /** What Envoy did with a generation written for it (gateway mode): refused it, or took it. */
  envoyResult(generation: number, refusal: string | undefined): void {
    if (refusal !== undefined) this.rejection = { at: new Date(), generation, message: refusal };
    else if (this.rejection && generation > this.rejection.generation) this.rejection = undefined;
  }

  /** Calls `listener` after every swap (with --workers, to hand the table to each worker); returns what stops it. */
  onSwap(listener: (snapshot: Snapshot, generation: number) => void): () => void {
    this.store.on('swap', listener);
    return () => this.store.off('swap', listener);
  }

  /** Reloads now (the admin API and tests; file changes reload by themselves). */
  reload(): Promise<boolean> {
    return this.store.load();
  }

  readonly lookup: PolicyLookup = (req) =>
    this.resolver ? outcomeOf(this.resolver, req, this.listenerReport) : { result: 'unmatched' };

  /** Attach mode: requests whose Gateway port could not be told, by case. */
  get listenerProblems(): readonly ListenerProblemView[] {
    return this.listenerReport.problems;
  }

  /** A case a worker process saw (`--workers N`). */
  noteListenerProblem(problem: ListenerProblemView): void {
    this.listenerReport.add(problem);
  }

  /** The headers the resolver being served reads: ext_proc decodes no others. */
  readonly headersRead = (): ReadonlySet<string> | undefined => this.resolver?.headersRead;

  /** Which replica writes status, when the provider elects one (a cluster's Lease). */
  leadership(): StatusLeadership | undefined {
    return this.options.provider.leadership?.();
  }

  /** null once a configuration without file-level errors is being served. */
  notReadyReason(): string | null {
    if (this.store.generation === 0) return 'no configuration loaded yet';
    // Later swaps happen only when clean, and a failed reload keeps the last good snapshot:
    // only a first load with broken files leaves the service not ready.
    const broken = this.store.snapshot.diagnostics.filter(isFatal);
    if (broken.length > 0) {
      return `the configuration did not load: ${broken.map(formatDiagnostic).join('; ')}`;
    }
    return null;
  }

  close(): void {
    this.store.close();
    this.compiler.close();
  }
}
