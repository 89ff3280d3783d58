// Follows the session key source (a Secret can change while serve runs): a new ring reaches
// every Envoy of an ADS fleet with the next push; without ADS, serve only checks and names it.
import type { KeySource } from '../../provider/key-source.js';
import type { AdsServer } from '../../xds/ads-server.js';
import type { FleetFilter } from './ads-runner.js';
import type { Runner } from './runner.js';

export function keyWatchRunner(
  keys: KeySource,
  filter: FleetFilter,
  fleet: { readonly ads: AdsServer | undefined; readonly generation: () => number },
  log: (line: string) => void,
): Runner<void> {
  let epoch = 0;
  return {
    start: () =>
      keys.watch(
        (next) => {
          if (next.keys.join() === filter.sessionKeys.join()) return;
          filter.sessionKeys = next.keys;
          if (fleet.ads) {
            fleet.ads.update(`${fleet.generation()}.keys${++epoch}`);
            log(
              `session keys from ${keys.description} changed: ${next.ids.join(', ')} (the first seals); sent to every Envoy`,
            );
          } else {
            log(
              `session keys in ${keys.description} changed: ${next.ids.join(', ')}; ` +
                "serve only checks them: the Envoys' filter configuration holds the keys (docs/attach.md)",
            );
          }
        },
        (why) => log(`${why}; the session keys in use stay`),
      ),
    stop: () => keys.close(),
  };
}
