// Gateway mode with live reload: Envoy reads its listeners, routes and clusters from files
// (`path_config_source` with `watched_directory`) and reloads each whenever a file is moved
// into its folder (one folder per file: resourcePath). Pure: this builds the bootstrap and
// the files' content; the runtime writes them (xds/envoy-resource-files.ts). Routes come over
// RDS, one file per listener, so a route change never touches a listener and never drains a
// connection; HTTPS certificates come over SDS, one file per certificate, so a renewed Secret
// does not either. Listeners, clusters and certificates are JSON, not YAML: at 10,000 routes
// Envoy read the resources as 50 MB of YAML in 34 s and 1.7 GB, as 33 MB of JSON in 13 s and
// 0.77 GB; the yaml package wrote them in 19 s, JSON.stringify in 0.4 s. Route files are
// protobuf, which Envoy reads three to four times faster again (xds/route-files.ts encodes
// them). The admin's /config_dump and `steadfast envoy-config` are the readable views.
import type { GatewayIr } from '../ir/gateway-ir.js';
import { NO_TLS_MATERIAL, type TlsMaterial } from '../policy/tls-material.js';
import { TYPE_CLUSTER, TYPE_LISTENER, TYPE_SECRET } from './envoy-names.js';
import { type GatewayConfigOptions, bootstrapHead, generateGatewayResources } from './gateway-config.js';
import type { Json } from '../json.js';
import type { GenerationMemo } from './generation-memo.js';

export const LDS_FILE = 'lds.json';
export const CDS_FILE = 'cds.json';

/** The SDS file of one certificate: its id with every character but `A-Za-z0-9._-` replaced. */
function sdsFileName(secretName: string): string {
  return `sds-${secretName.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;
}

/** The RDS file of one listener (protobuf): its name with every character but `A-Za-z0-9._-` replaced. */
function rdsFileName(routeConfigName: string): string {
  return `rds-${routeConfigName.replace(/[^A-Za-z0-9._-]/g, '_')}.pb`;
}

/**
 * Where a resource file lives under the directory: in a folder of its own (`cds/cds.json`).
 * Envoy re-reads every file whose `watched_directory` saw a move, so files sharing one
 * folder would make a cluster change re-read the route files too: at 10,000 routes each
 * re-read of the route configuration (17 MB of JSON) costs Envoy over a second.
 */
export function resourcePath(file: string): string {
  return `${file.replace(/\.(?:json|pb)$/, '')}/${file}`;
}

function pathSource(directory: string, file: string): Json {
  const path = `${directory}/${resourcePath(file)}`;
  return {
    path_config_source: { path, watched_directory: { path: path.slice(0, path.lastIndexOf('/')) } },
    resource_api_version: 'V3',
  };
}

/** The Envoy bootstrap that reads every resource from files in `directory`. */
export function fileBootstrap(directory: string, options: GatewayConfigOptions): Record<string, unknown> {
  return {
    ...bootstrapHead(options),
    dynamic_resources: {
      lds_config: pathSource(directory, LDS_FILE),
      cds_config: pathSource(directory, CDS_FILE),
    },
  };
}

/** One discovery-response file's text (JSON, one line). */
function discoveryFile(type: string, resources: readonly Json[], version: string): string {
  return JSON.stringify({
    version_info: version,
    resources: resources.map((r) => ({ '@type': type, ...r })),
  });
}

export interface ResourceFiles {
  /** Cluster resources, by name (the writer merges old and new while routes move). */
  readonly clusters: ReadonlyMap<string, Json>;
  /** RDS file name → the listener's RouteConfiguration (the writer encodes it: xds/route-files.ts). */
  readonly routes: ReadonlyMap<string, Json>;
  readonly listeners: string;
  /** SDS file name → its text (certificates and private keys: written readable by the owner only). */
  readonly secrets: ReadonlyMap<string, string>;
  /** What could not be given to Envoy as written. */
  readonly warnings: readonly string[];
}

export function resourceFiles(
  ir: GatewayIr,
  options: GatewayConfigOptions,
  directory: string,
  version: string,
  tls: TlsMaterial = NO_TLS_MATERIAL,
  memo?: GenerationMemo,
): ResourceFiles {
  const resources = generateGatewayResources(
    ir,
    options,
    { kind: 'rds', source: (name) => pathSource(directory, rdsFileName(name)) },
    { material: tls, source: { kind: 'sds', source: (name) => pathSource(directory, sdsFileName(name)) } },
    memo,
  );
  const secrets = new Map<string, string>();
  for (const secret of resources.secrets) {
    secrets.set(sdsFileName(secret['name'] as string), discoveryFile(TYPE_SECRET, [secret], version));
  }
  const routes = new Map<string, Json>();
  for (const rc of resources.routeConfigurations) routes.set(rdsFileName(rc['name'] as string), rc);
  return {
    clusters: new Map(resources.clusters.map((c) => [c['name'] as string, c])),
    routes,
    listeners: discoveryFile(TYPE_LISTENER, resources.listeners, version),
    secrets,
    warnings: resources.warnings,
  };
}

export function clustersFile(clusters: Iterable<Json>, version: string): string {
  return discoveryFile(TYPE_CLUSTER, [...clusters], version);
}
