// `serve --xds HOST:PORT`: gateway mode for a fleet of Envoys over ADS (docs/fleet.md); every
// generation the configuration swaps in, and every new key ring, is pushed to each of them.
import type { GatewayConfigOptions } from '../../envoy/gateway-config.js';
import { GenerationMemo } from '../../envoy/generation-memo.js';
import { type XdsResources, onAddress, xdsResources } from '../../envoy/xds-resources.js';
import type { Json } from '../../json.js';
import type { Snapshot } from '../../pipeline/snapshot.js';
import type { ServedConfig } from '../../server/served-config.js';
import { AdsServer } from '../../xds/ads-server.js';
import type { AdsTlsFiles, AdsTlsSource } from '../../xds/ads-tls.js';
import type { Runner } from './runner.js';

export interface AdsSettings {
  readonly address: string;
  /** A secret every Envoy presents on the stream; none on loopback. */
  readonly token: string | undefined;
  /** Mutual TLS on the port, from files or a Secret; undefined for clear text. */
  readonly tls: AdsTlsFiles | AdsTlsSource | undefined;
  /** Clear text beyond loopback, asked for by --xds-insecure. */
  readonly insecure: boolean;
  /** Where the Envoys find steadfast.wasm on their own machines. */
  readonly wasmPath: string;
}

/** Where the listeners of an Envoy whose bootstrap names no address bind. */
const ANY_ADDRESS = '0.0.0.0';

/** The filter options every push reads: a new key ring goes out with the next one. */
export interface FleetFilter {
  readonly wasmPath: string;
  sessionKeys: readonly string[];
  /** The backend clusters' idle timeout (serve --upstream-idle-timeout); absent: the generator's default. */
  readonly upstreamIdleTimeout?: string;
}

/**
 * The ADS server. An Envoy's listeners bind the address its bootstrap names as its kind
 * (envoy-config --xds --address), 0.0.0.0 when it names none.
 */
export function adsRunner(
  settings: AdsSettings,
  config: ServedConfig,
  filter: FleetFilter,
  log: (line: string) => void,
): Runner<AdsServer> {
  let snapshot = config.snapshot;
  // The memo keeps each virtual host as the server's encoding of it, not its JSON.
  const generate = sharedGeneration(filter, (host, configuration) =>
    ads.keepVirtualHost(host, configuration),
  );
  const ads = new AdsServer({
    resources: (kind) => {
      if (!snapshot) throw new Error('no configuration loaded yet');
      return generate(snapshot, kind);
    },
    log,
    ...(settings.token !== undefined ? { token: settings.token } : {}),
    ...(settings.tls ? { tls: settings.tls } : {}),
  });
  let unsubscribe: (() => void) | undefined;
  return {
    async start() {
      // Before listening, so that no generation swapped in meanwhile is missed.
      unsubscribe = config.onSwap((next, generation) => {
        snapshot = next;
        ads.update(String(generation), config.loadTimes);
      });
      let bound: string;
      try {
        bound = await ads.start(settings.address);
      } catch (e) {
        unsubscribe();
        throw new Error(`cannot serve ADS on ${settings.address}: ${(e as Error).message}`);
      }
      snapshot = config.snapshot;
      if (snapshot) ads.update(String(config.generation), config.loadTimes);
      log(
        `ADS on ${bound}: gateway mode for any number of Envoys (their bootstrap: envoy-config --xds ${bound})`,
      );
      log(`ADS on ${bound}: ${transportLine(ads, settings)}`);
      return ads;
    },
    async stop() {
      unsubscribe?.();
      await ads.stop();
    },
  };
}

/**
 * A snapshot's resources for a kind of Envoy. What the last generation made is kept for options
 * that stay the same (a new key ring makes new ones): a one-route change generates that route
 * alone. Made once per generation for every kind of Envoy: only the listeners name the address a
 * kind binds (onAddress), so the kinds share every other resource and the ADS server encodes
 * those once.
 */
function sharedGeneration(
  filter: FleetFilter,
  keepHost: (host: Json, configuration: string) => Json,
): (snapshot: Snapshot, kind: string) => XdsResources {
  let kept:
    | { readonly key: string; readonly options: GatewayConfigOptions; readonly memo: GenerationMemo }
    | undefined;
  let made:
    { readonly snapshot: Snapshot; readonly key: string; readonly resources: XdsResources } | undefined;
  return (snapshot, kind) => {
    const idle = filter.upstreamIdleTimeout;
    const options = {
      wasmPath: filter.wasmPath,
      sessionKeys: filter.sessionKeys,
      address: ANY_ADDRESS,
      ...(idle !== undefined ? { upstreamIdleTimeout: idle } : {}),
    };
    const key = JSON.stringify(options);
    if (kept?.key !== key) kept = { key, options, memo: new GenerationMemo(options, keepHost) };
    if (made?.snapshot !== snapshot || made.key !== key) {
      // The options the memo was made for, as the same object: it serves only those.
      made = { snapshot, key, resources: xdsResources(snapshot.ir, kept.options, snapshot.tls, kept.memo) };
    }
    return onAddress(made.resources, kind === '' ? ANY_ADDRESS : kind);
  };
}

/** What protects the port, said at every start: clear text beyond loopback above all. */
function transportLine(ads: AdsServer, settings: AdsSettings): string {
  const token = settings.token !== undefined ? ', streams present the token' : '';
  if (settings.tls) return `${ads.transport}; clients need a certificate from the client CA${token}`;
  if (settings.insecure)
    return `warning: clear text (--xds-insecure): the session keys and private keys cross the network readable${token}`;
  return `clear text, loopback only${token}`;
}
