// The configuration a long-running command serves: loaded once (good or bad) and watched.
import { ServedConfig, type ServedConfigOptions } from '../../server/served-config.js';
import type { Runner } from './runner.js';

/** The runner, and `prepare`: the compiler's thread started before the runner is (ServedConfig.prepare). */
export function servedConfigRunner(options: ServedConfigOptions): Runner<ServedConfig> & { prepare(): void } {
  const config = new ServedConfig(options);
  return {
    prepare: () => config.prepare(),
    async start() {
      try {
        await config.start();
      } catch (e) {
        config.close();
        throw e;
      }
      return config;
    },
    stop: () => config.close(),
  };
}
