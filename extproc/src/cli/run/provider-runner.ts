// The source of Gateway API objects: connected (a cluster listed once) before anything
// reads it, closed last.
import type { Provider } from '../../provider/provider.js';
import type { Runner } from './runner.js';

export function providerRunner(provider: Provider): Runner<Provider> {
  return {
    async start() {
      try {
        await provider.start();
      } catch (e) {
        await provider.close();
        throw e;
      }
      return provider;
    },
    stop: () => provider.close(),
  };
}
