// Gateway mode with live reload: Envoy reads its listeners, routes and clusters from files
// (`path_config_source` with `watched_directory`) and reloads them whenever a file is moved
// into the directory. Pure: this builds the bootstrap and the files' text; the runtime
// writes them (runtime/envoy-resource-files.ts). Routes come over RDS, one file per
// listener, so a route change never touches a listener and never drains a connection; HTTPS
// certificates come over SDS, one file per certificate, so a renewed Secret does not either.
import type { PolicyTable } from '../table/policy-table.js';
import { NO_TLS_MATERIAL, type TlsMaterial } from '../table/tls-material.js';
import { edgeOverloadManager } from './edge-defaults.js';
import { TYPE_CLUSTER, TYPE_LISTENER, TYPE_ROUTE_CONFIGURATION, TYPE_SECRET } from './envoy-names.js';
import { envoyYaml } from './envoy-yaml.js';
import { type GatewayConfigOptions, adminConfig, generateGatewayResources } from './gateway-config.js';
import type { Json } from '../json.js';

export const LDS_FILE = 'lds.yaml';
export const CDS_FILE = 'cds.yaml';

/** The SDS file of one certificate: its id with every character but `A-Za-z0-9._-` replaced. */
export function sdsFileName(secretName: string): string {
  return `sds-${secretName.replace(/[^A-Za-z0-9._-]/g, '_')}.yaml`;
}

/** The RDS file of one listener: its name with every character but `A-Za-z0-9._-` replaced. */
export function rdsFileName(routeConfigName: string): string {
  return `rds-${routeConfigName.replace(/[^A-Za-z0-9._-]/g, '_')}.yaml`;
}

function pathSource(directory: string, file: string): Json {
  return {
    path_config_source: { path: `${directory}/${file}`, watched_directory: { path: directory } },
    resource_api_version: 'V3',
  };
}

/** The Envoy bootstrap that reads every resource from files in `directory`. */
export function fileBootstrap(directory: string, options: GatewayConfigOptions): Record<string, unknown> {
  return {
    node: { id: 'steadfast-gateway', cluster: 'steadfast' },
    admin: adminConfig(options),
    overload_manager: edgeOverloadManager(options.edge),
    dynamic_resources: {
      lds_config: pathSource(directory, LDS_FILE),
      cds_config: pathSource(directory, CDS_FILE),
    },
  };
}

/** One discovery-response file's text. */
export function discoveryFile(type: string, resources: readonly Json[], version: string): string {
  return envoyYaml({
    version_info: version,
    resources: resources.map((r) => ({ '@type': type, ...r })),
  });
}

export interface ResourceFiles {
  /** Cluster resources, by name (the writer merges old and new while routes move). */
  readonly clusters: ReadonlyMap<string, Json>;
  /** RDS file name → its text. */
  readonly routes: ReadonlyMap<string, string>;
  readonly listeners: string;
  /** SDS file name → its text (certificates and private keys: written readable by the owner only). */
  readonly secrets: ReadonlyMap<string, string>;
  /** What could not be given to Envoy as written. */
  readonly warnings: readonly string[];
}

export function resourceFiles(
  table: PolicyTable,
  options: GatewayConfigOptions,
  directory: string,
  version: string,
  tls: TlsMaterial = NO_TLS_MATERIAL,
): ResourceFiles {
  const resources = generateGatewayResources(
    table,
    options,
    { kind: 'rds', source: (name) => pathSource(directory, rdsFileName(name)) },
    { material: tls, source: { kind: 'files', source: (name) => pathSource(directory, sdsFileName(name)) } },
  );
  const secrets = new Map<string, string>();
  for (const secret of resources.secrets) {
    secrets.set(sdsFileName(secret['name'] as string), discoveryFile(TYPE_SECRET, [secret], version));
  }
  const routes = new Map<string, string>();
  for (const rc of resources.routeConfigurations) {
    routes.set(rdsFileName(rc['name'] as string), discoveryFile(TYPE_ROUTE_CONFIGURATION, [rc], version));
  }
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
