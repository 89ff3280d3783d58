// The configuration a long-running command serves: loaded once (good or bad) and watched.
import { ServedConfig, type ServedConfigOptions } from '../../server/served-config.js';
import type { Runner } from './runner.js';

export function servedConfigRunner(options: ServedConfigOptions): Runner<ServedConfig> {
  const config = new ServedConfig(options);
  return {
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
