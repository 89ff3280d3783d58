// `dev` and `quickstart`: the local gateway (the served configuration, Envoy fed from files,
// the control service), on a provider another runner started.
import { type LocalGateway, type LocalGatewayOptions, startLocalGateway } from '../../local/local-gateway.js';
import type { Runner } from './runner.js';

export interface RunningGateway {
  readonly gateway: LocalGateway;
  /** The gateway's listeners as URLs, for the ready line. */
  readonly listenerUrls: readonly string[];
}

export function localGatewayRunner(options: LocalGatewayOptions): Runner<RunningGateway> {
  let gateway: LocalGateway | undefined;
  return {
    async start() {
      gateway = await startLocalGateway(options);
      // HTTPS listeners bind their Gateway port (dev maps no ports): the scheme follows the protocol.
      const httpsPorts = new Set(
        (gateway.config.snapshot?.table.listeners ?? [])
          .filter((l) => l.protocol === 'HTTPS')
          .map((l) => l.port),
      );
      const listenerUrls = [...gateway.envoy.listeners.values()].map(
        (a) => `${httpsPorts.has(Number(a.slice(a.lastIndexOf(':') + 1))) ? 'https' : 'http'}://${a}`,
      );
      return { gateway, listenerUrls };
    },
    stop: () => gateway?.stop(),
  };
}
