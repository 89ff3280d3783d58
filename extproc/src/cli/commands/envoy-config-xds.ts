// `envoy-config --xds HOST:PORT`: the bootstrap of one Envoy of a fleet fed by `serve --xds`
// (docs/fleet.md), with the token and the mutual TLS the control plane asks for.
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { envoyYaml } from '../../envoy/envoy-yaml.js';
import { xdsBootstrap } from '../../envoy/xds-resources.js';
import { splitHostPort } from '../../local/port-check.js';
import { checkValidity, readAdsTls } from '../../xds/ads-tls.js';
import { type FlagSpecs, type ParsedArgs, flag, intFlag } from '../args.js';
import { type CommandIO, UsageError } from '../command.js';
import { XDS_TOKEN_FILE, readXdsToken } from '../flags.js';

export const ENVOY_CONFIG_XDS_FLAGS: FlagSpecs = {
  xds: {
    type: 'string',
    value: 'HOST:PORT',
    description:
      'gateway mode: print the bootstrap of an Envoy fed by `serve --xds HOST:PORT` instead (no --config needed; docs/fleet.md)',
  },
  'xds-token-file': {
    ...XDS_TOKEN_FILE,
    description:
      'with --xds: the token `serve --xds-token-file` asks for, written into the bootstrap (keep it private)',
  },
  'xds-tls-cert': {
    type: 'string',
    value: 'FILE',
    description:
      "with --xds: mutual TLS to the control plane, this Envoy's PEM client certificate (from serve's --xds-client-ca); needs --xds-tls-key and --xds-tls-ca",
  },
  'xds-tls-key': {
    type: 'string',
    value: 'FILE',
    description: "with --xds-tls-cert: the client certificate's PEM private key",
  },
  'xds-tls-ca': {
    type: 'string',
    value: 'FILE',
    description:
      "with --xds-tls-cert: the PEM CA of the control plane's certificate (serve's --xds-tls-cert), which must name the --xds host",
  },
  'xds-protocol': {
    type: 'string',
    value: 'sotw|delta',
    description:
      'with --xds: delta asks the control plane for incremental xDS (a change sends only the resources it changed); sotw for state of the world, every resource of a type at each change',
    default: 'delta',
  },
  'node-id': {
    type: 'string',
    value: 'NAME',
    description: "with --xds: this Envoy's name in the control plane's /v1/xds and logs",
    default: 'steadfast-<host name>',
  },
};

/** The Envoy's side of mutual TLS: all three files or none, checked, as absolute paths. */
function envoyTlsOf(parsed: ParsedArgs): { cert: string; key: string; ca: string } | undefined {
  const cert = flag(parsed, 'xds-tls-cert');
  const key = flag(parsed, 'xds-tls-key');
  const ca = flag(parsed, 'xds-tls-ca');
  if (cert === undefined && key === undefined && ca === undefined) return undefined;
  if (cert === undefined || key === undefined || ca === undefined) {
    throw new UsageError('--xds-tls-cert, --xds-tls-key and --xds-tls-ca go together');
  }
  try {
    const material = readAdsTls(
      { cert, key, clientCa: ca },
      { cert: '--xds-tls-cert', key: '--xds-tls-key', clientCa: '--xds-tls-ca' },
    );
    // The control plane refuses an expired client certificate in the handshake: say it now,
    // with serve's own rule for one that starts a little ahead of this clock.
    checkValidity(material.cert, `--xds-tls-cert ${cert}`, true);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  // Envoy reads them when it starts, wherever it was started from.
  return { cert: resolve(cert), key: resolve(key), ca: resolve(ca) };
}

/**
 * The bootstrap of one Envoy of a fleet: its listeners bind --address (0.0.0.0 when not
 * given), its admin --envoy-admin-port; everything else comes from the control plane.
 */
export async function printXdsBootstrap(parsed: ParsedArgs, xds: string, io: CommandIO): Promise<number> {
  if ((flag(parsed, 'mode') ?? 'gateway') !== 'gateway') {
    throw new UsageError('--xds is for gateway mode: attach mode keeps your own Envoy configuration');
  }
  const target = splitHostPort(xds);
  if (!target || target.port < 1 || target.port > 65535)
    throw new UsageError(`--xds: "${xds}" is not HOST:PORT`);
  const address = flag(parsed, 'address');
  if (address !== undefined && isIP(address) === 0) {
    throw new UsageError(
      `--address: "${address}" is not an IP address (the control plane binds this Envoy's listeners there)`,
    );
  }
  const tokenFile = flag(parsed, 'xds-token-file');
  const token = tokenFile !== undefined ? await readXdsToken(tokenFile) : undefined;
  const tls = envoyTlsOf(parsed);
  const protocol = flag(parsed, 'xds-protocol') ?? 'delta';
  if (protocol !== 'sotw' && protocol !== 'delta')
    throw new UsageError(`--xds-protocol must be sotw or delta, not ${protocol}`);
  const bootstrap = xdsBootstrap({
    xds: { host: target.address, port: target.port },
    nodeId: flag(parsed, 'node-id') ?? `steadfast-${hostname()}`,
    nodeKind: address ?? '',
    ...(token !== undefined ? { token } : {}),
    ...(tls ? { tls } : {}),
    ...(protocol === 'delta' ? { delta: true } : {}),
    // The filter's path and keys come from the control plane with the listeners.
    admin: { address: '127.0.0.1', port: intFlag(parsed, 'envoy-admin-port', 9901) },
  });
  io.out(envoyYaml(bootstrap));
  return 0;
}
