// The ext_proc gRPC server and the admin API: in this process, or with `--workers N` in N
// worker processes that share the port while this one keeps the admin API.
import type { PolicyLookup } from '../../server/grpc/ext-proc-service.js';
import { type ControlService, startControlService } from '../../server/control-service.js';
import { startExtProcWorkers } from '../../server/ext-proc-workers.js';
import type { ServiceMetrics } from '../../server/metrics.js';
import type { ServedConfig } from '../../server/served-config.js';
import type { AdsServer } from '../../xds/ads-server.js';
import type { Runner } from './runner.js';

export interface ExtProcSettings {
  readonly grpcAddress: string;
  readonly adminAddress: string;
  readonly adminPort: number;
  readonly workers: number;
}

/** What ext_proc answers from: the served configuration, or one fixed token (`--policy-token`). */
export type Answers = { readonly config: ServedConfig } | { readonly staticToken: string };

/** A fixed token reads no header at all. */
const NO_HEADERS: ReadonlySet<string> = new Set();

export function extProcRunner(
  settings: ExtProcSettings,
  answers: Answers,
  ads: AdsServer | undefined,
  metrics: ServiceMetrics,
  log: (line: string) => void,
): Runner<ControlService> {
  let service: ControlService | undefined;
  const config = 'config' in answers ? answers.config : undefined;
  const notReadyReason = config ? () => config.notReadyReason() : () => null;
  const xds = ads ? { xds: () => ads.status() } : {};
  return {
    async start() {
      if (settings.workers > 1) {
        service = await startExtProcWorkers({
          ...settings,
          metrics,
          notReadyReason,
          log,
          ...answers,
          ...xds,
        });
        log(`${settings.workers} ext_proc worker processes share ${service.grpcAddress}`);
        return service;
      }
      const staticToken = 'staticToken' in answers ? answers.staticToken : undefined;
      const lookup: PolicyLookup = config ? config.lookup : () => staticToken;
      service = await startControlService({
        grpcAddress: settings.grpcAddress,
        adminAddress: settings.adminAddress,
        adminPort: settings.adminPort,
        lookup,
        headersRead: config ? config.headersRead : () => NO_HEADERS,
        metrics,
        notReadyReason,
        ...(config ? { config } : {}),
        ...xds,
        onError: (e) => log(e instanceof Error ? e.message : String(e)),
      });
      return service;
    },
    stop: () => service?.stop(),
  };
}
