// Shared set-up for filter tests: a started emulator host with the release filter.
import { LogLevel, propertyKey, ProxyWasmHost, type HostOptions } from '../emulator/proxy-wasm-host.js';
import { filterWasm } from '../support/paths.js';

export const METADATA_POLICY = propertyKey('metadata', 'filter_metadata', 'steadfast', 'policy');
export const ROUTE_POLICY = propertyKey('xds', 'route_metadata', 'filter_metadata', 'steadfast', 'policy');

export async function startedHost(options: HostOptions = {}): Promise<ProxyWasmHost> {
  const host = await ProxyWasmHost.load(filterWasm(), { logLevel: LogLevel.Info, ...options });
  if (!host.start())
    throw new Error(`the filter refused its configuration: ${host.logs.map((l) => l.message).join('; ')}`);
  return host;
}
