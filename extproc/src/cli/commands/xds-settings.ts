// `serve --xds` and the flags that go with it, checked before anything starts: the address,
// what protects the port (mutual TLS, a token, or clear text said out loud), and the filter
// build the Envoys load (docs/fleet.md).
import { BlockList, isIP } from 'node:net';
import { envoyVersion } from '../../local/envoy-binary.js';
import { chooseFilterBuild, wasmFilterPath } from '../../local/filter-build.js';
// Types only: the Kubernetes client is loaded when a command reads from a cluster.
import type { KubeClient } from '../../provider/kubernetes/client.js';
import { type AdsTlsSource, checkAdsTls, checkValidity, readAdsTls } from '../../xds/ads-tls.js';
import { type FlagSpecs, type ParsedArgs, boolFlag, flag } from '../args.js';
import { UsageError } from '../command.js';
import { XDS_TOKEN_FILE, filterChoiceOf, filterFlag, readXdsToken } from '../flags.js';
import type { AdsSettings } from '../run/ads-runner.js';

export const SERVE_XDS_FLAGS: FlagSpecs = {
  xds: {
    type: 'string',
    value: 'HOST:PORT',
    description:
      'also serve gateway mode over ADS to any number of Envoys (their bootstrap: envoy-config --xds HOST:PORT; docs/fleet.md)',
  },
  'xds-tls-cert': {
    type: 'string',
    value: 'FILE',
    description:
      'with --xds: mutual TLS on the ADS port, this PEM certificate the Envoys check (read again when it changes); needs --xds-tls-key and --xds-client-ca',
  },
  'xds-tls-key': {
    type: 'string',
    value: 'FILE',
    description: "with --xds-tls-cert: the certificate's PEM private key (read again when it changes)",
  },
  'xds-client-ca': {
    type: 'string',
    value: 'FILE',
    description:
      "with --xds-tls-cert: the PEM CA every Envoy's client certificate must come from; a client without one is refused in the handshake",
  },
  'xds-tls-secret': {
    type: 'string',
    value: 'NAMESPACE/NAME',
    description:
      "with --xds and --kubeconfig: mutual TLS on the ADS port from this kubernetes.io/tls Secret (tls.crt, tls.key, and ca.crt: the CA of the Envoys' client certificates), followed live; instead of --xds-tls-cert/--xds-tls-key/--xds-client-ca",
  },
  'xds-client-ca-secret': {
    type: 'string',
    value: 'NAMESPACE/NAME',
    description:
      "with --xds-tls-secret: take the Envoys' client CA from this Secret's ca.crt instead (their certificates come from another CA than the control plane's)",
  },
  'xds-insecure': {
    type: 'boolean',
    description:
      'serve ADS beyond loopback without TLS (the session keys and private keys cross the network in clear text); said in the log at every start',
  },
  'xds-token-file': XDS_TOKEN_FILE,
  'xds-filter': filterFlag('auto', 'the filter build the Envoys fed over ADS load'),
  'xds-wasm-path': {
    type: 'string',
    value: 'PATH',
    description:
      'where the Envoys fed over ADS find the filter on their own machines (steadfast.wasm, or libsteadfast.so for the native build); given, it decides over --xds-filter',
    default: "the build --xds-filter picks in this checkout's filter/build/",
  },
};

/** --xds and what goes with it; undefined without --xds. */
export async function adsSettingsOf(
  parsed: ParsedArgs,
  loadsConfig: boolean,
  kube: KubeClient | undefined,
  log: (line: string) => void,
): Promise<AdsSettings | undefined> {
  const address = flag(parsed, 'xds');
  if (address === undefined) return undefined;
  if (!loadsConfig) {
    throw new UsageError(
      '--xds needs --config or --kubeconfig: it serves the gateway configuration of those objects',
    );
  }
  if (!/^\S+:\d{1,5}$/.test(address)) throw new UsageError(`--xds: "${address}" is not HOST:PORT`);
  const tls = tlsFilesOf(parsed) ?? (await tlsSecretOf(parsed, kube, log));
  const insecure = boolFlag(parsed, 'xds-insecure');
  if (tls && insecure)
    throw new UsageError(
      `--xds-insecure and ${'follow' in tls ? '--xds-tls-secret' : '--xds-tls-cert'} exclude each other`,
    );
  const tokenFile = flag(parsed, 'xds-token-file');
  if (!isLoopbackHostPort(address)) checkBeyondLoopback(address, tls !== undefined, insecure, tokenFile);
  return {
    address,
    token: tokenFile !== undefined ? await readXdsToken(tokenFile) : undefined,
    tls,
    insecure,
    wasmPath: flag(parsed, 'xds-wasm-path') ?? xdsFilterPath(parsed),
  };
}

/** The three TLS files, all or none, checked now (and the certificate valid now) so a bad set stops serve before it starts. */
function tlsFilesOf(parsed: ParsedArgs): AdsSettings['tls'] {
  const cert = flag(parsed, 'xds-tls-cert');
  const key = flag(parsed, 'xds-tls-key');
  const clientCa = flag(parsed, 'xds-client-ca');
  if (cert === undefined && key === undefined && clientCa === undefined) return undefined;
  if (cert === undefined || key === undefined || clientCa === undefined) {
    throw new UsageError(
      '--xds-tls-cert, --xds-tls-key and --xds-client-ca go together: the ADS port is mutual TLS or not TLS',
    );
  }
  const secretFlag = ['xds-tls-secret', 'xds-client-ca-secret'].find((f) => parsed.flags.has(f));
  if (secretFlag)
    throw new UsageError(
      `--${secretFlag} and --xds-tls-cert exclude each other: the ADS TLS comes from one place`,
    );
  const files = { cert, key, clientCa };
  try {
    // Expired or not valid yet, every Envoy would refuse the port: stop here instead.
    checkValidity(readAdsTls(files).cert, `--xds-tls-cert ${cert}`, true);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return files;
}

/** The Secret(s) of --xds-tls-secret, read and checked now: missing, unreadable, unfit or out of its dates stops serve. */
async function tlsSecretOf(
  parsed: ParsedArgs,
  kube: KubeClient | undefined,
  log: (line: string) => void,
): Promise<AdsTlsSource | undefined> {
  const secret = flag(parsed, 'xds-tls-secret');
  const caSecret = flag(parsed, 'xds-client-ca-secret');
  if (secret === undefined) {
    if (caSecret !== undefined) throw new UsageError('--xds-client-ca-secret goes with --xds-tls-secret');
    return undefined;
  }
  if (!kube) throw new UsageError('--xds-tls-secret needs --kubeconfig FILE or --in-cluster');
  const { AdsTlsSecretSource } = await import('../../provider/kubernetes/ads-tls-secret.js');
  try {
    const source = await AdsTlsSecretSource.load(kube, secret, caSecret, log);
    checkAdsTls(source.initial, source.parts);
    checkValidity(source.initial.cert, `--xds-tls-secret: ${source.parts.cert}`, true);
    return source;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/**
 * Beyond loopback the stream carries the session keys and HTTPS private keys to whoever
 * connects: mutual TLS, or a token and an explicit --xds-insecure.
 */
function checkBeyondLoopback(
  address: string,
  tls: boolean,
  insecure: boolean,
  tokenFile: string | undefined,
): void {
  if (tls) return;
  if (tokenFile === undefined) {
    throw new UsageError(
      `--xds ${address} is reachable from other machines: give --xds-token-file FILE, as the ADS stream carries the session keys and HTTPS private keys, and --xds-tls-cert/--xds-tls-key/--xds-client-ca (or --xds-tls-secret from a cluster) for mutual TLS (or --xds-insecure for clear text) (docs/fleet.md)`,
    );
  }
  if (!insecure) {
    throw new UsageError(
      `--xds ${address} is reachable from other machines and not encrypted: give --xds-tls-cert, --xds-tls-key and --xds-client-ca (or --xds-tls-secret from a cluster) for mutual TLS, or --xds-insecure to send the session keys and HTTPS private keys in clear text (docs/fleet.md)`,
    );
  }
}

/**
 * The filter build the Envoys fed over ADS load: `--xds-filter` (auto: native where it was
 * built for this checkout's Envoy, the version a fleet started from `envoy-config --xds` runs).
 */
function xdsFilterPath(parsed: ParsedArgs): string {
  const choice = filterChoiceOf(parsed, 'xds-filter', 'auto');
  let version: string | undefined;
  try {
    version = envoyVersion();
  } catch {
    if (choice === 'auto') return wasmFilterPath();
  }
  try {
    return chooseFilterBuild(choice, choice === 'native' ? undefined : version).path;
  } catch (e) {
    throw new UsageError(`--xds-filter ${choice}: ${(e as Error).message}`);
  }
}

/** Loopback as an address: 127.0.0.0/8 and ::1 (a name other than localhost may resolve anywhere). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The host of HOST:PORT is an IP literal in 127.0.0.0/8, ::1, or exactly localhost. */
export function isLoopbackHostPort(hostPort: string): boolean {
  const host = hostPort.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}
