// The provider's settle a `bench:scale --fleet` row was measured with, read from the provider's
// own fields (the code serve runs) and kept with the row, so that its stage table says the
// settle of that run: a table rendered again from an older run's JSON keeps its own.
import type { Provider as SourceProvider } from '../extproc/src/provider/provider.js';
import type { Provider } from './scale-config.js';

/** `files 15 ms of quiet, at most 1000 ms`: how long a change waits before it is read (or, read at once, swapped in). */
export async function providerSettle(provider: Provider, kubeconfig: string | undefined): Promise<string> {
  let source: SourceProvider;
  if (provider === 'files') {
    const { FileProvider } = await import('../extproc/src/provider/file.js');
    source = new FileProvider({ paths: [] });
  } else {
    const { KubeClient } = await import('../extproc/src/provider/kubernetes/client.js');
    const { KubernetesProvider } = await import('../extproc/src/provider/kubernetes/provider.js');
    // Made, never started: no request is sent.
    source = new KubernetesProvider({ client: await KubeClient.load(kubeconfig), writeStatus: false });
  }
  const quiet = source.settleMs === undefined ? 'the default quiet' : `${source.settleMs} ms of quiet`;
  const most = source.maxWaitMs === undefined ? '' : `, at most ${source.maxWaitMs} ms`;
  // Read at once: the settle holds only the swap (ConfigStore).
  const early = source.readsEarly === true ? 'none, read at once; the swap waits for ' : '';
  return `${provider === 'files' ? 'files' : 'API server'} ${early}${quiet}${most}`;
}
