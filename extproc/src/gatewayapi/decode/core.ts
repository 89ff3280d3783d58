// Kubernetes core kinds steadfast reads: Service, EndpointSlice (discovery.k8s.io/v1), Namespace.
import { Fields, isRec, exact } from '../fields.js';
import type { EndpointSlice, Namespace, Service, ServicePort } from '../model.js';
import type { SourceObject } from '../parse.js';
import { decodeMetadata, spec as specOf } from './metadata.js';

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

export function decodeService(src: SourceObject): Service {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const spec = specOf(src, f, false);
  const type =
    f.str(spec, 'type', ['spec'], { enum: ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] }) ??
    'ClusterIP';
  const externalName = f.str(spec, 'externalName', ['spec'], { maxLength: 253 });
  if (type === 'ExternalName' && externalName === undefined)
    f.add(['spec', 'externalName'], 'missing-field', 'Required value for type ExternalName');
  const ports: ServicePort[] = [];
  for (const [p, i] of f.recs(spec, 'ports', ['spec'])) {
    const at = ['spec', 'ports', i];
    const name = f.str(p, 'name', at, { maxLength: 63 });
    const port = f.int(p, 'port', at, { required: true, min: 1, max: 65535 });
    const protocol = f.str(p, 'protocol', at, { enum: PROTOCOLS }) ?? 'TCP';
    const appProtocol = f.str(p, 'appProtocol', at, { minLength: 1 });
    let targetPort: number | string | undefined;
    if (typeof p.targetPort === 'string') targetPort = p.targetPort;
    else targetPort = f.int(p, 'targetPort', at, { min: 1, max: 65535 });
    if (port === undefined) continue;
    ports.push({
      ...(name !== undefined ? { name } : {}),
      port,
      protocol,
      ...(targetPort !== undefined ? { targetPort } : {}),
      ...(appProtocol !== undefined ? { appProtocol } : {}),
    });
  }
  if (ports.length > 1) {
    ports.forEach((p, i) => {
      if (!p.name)
        f.add(
          ['spec', 'ports', i, 'name'],
          'missing-field',
          'Required value when a Service has more than one port',
        );
    });
  }
  return {
    ...meta,
    kind: 'Service',
    type,
    ...(externalName !== undefined ? { externalName } : {}),
    ports,
    errors: f.errors,
  };
}

export function decodeEndpointSlice(src: SourceObject): EndpointSlice {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const body = src.body;
  const addressType = (f.str(body, 'addressType', [], { required: true, enum: ['IPv4', 'IPv6', 'FQDN'] }) ??
    'IPv4') as EndpointSlice['addressType'];
  const ports: EndpointSlice['ports'][number][] = [];
  for (const [p, i] of f.recs(body, 'ports', [])) {
    const at = ['ports', i];
    const name = f.str(p, 'name', at);
    const port = f.int(p, 'port', at, { min: 1, max: 65535 });
    const protocol = f.str(p, 'protocol', at, { enum: PROTOCOLS }) ?? 'TCP';
    const appProtocol = f.str(p, 'appProtocol', at, { minLength: 1 });
    ports.push({
      ...(name !== undefined ? { name } : {}),
      ...(port !== undefined ? { port } : {}),
      protocol,
      ...(appProtocol !== undefined ? { appProtocol } : {}),
    });
  }
  const endpoints: EndpointSlice['endpoints'][number][] = [];
  for (const [e, i] of f.recs(body, 'endpoints', [], { max: 1000 })) {
    const at = ['endpoints', i];
    const addresses: string[] = [];
    f.list(e, 'addresses', at, { required: true, min: 1, max: 100 }).forEach((a, j) => {
      const v = f.checkStr(a, [...at, 'addresses', j], { required: true, minLength: 1 });
      if (v === undefined) return;
      if (!addressOk(addressType, v)) {
        f.add(
          [...at, 'addresses', j],
          'bad-format',
          `${JSON.stringify(v)} is not a valid ${addressType} address`,
        );
        return;
      }
      addresses.push(v);
    });
    const cond = isRec(e.conditions) ? e.conditions : {};
    // "ready" unset means ready (discovery.k8s.io/v1: nil should be interpreted as true).
    const ready = cond.ready !== false;
    endpoints.push({ addresses: exact(addresses), ready });
  }
  const serviceName = meta.labels['kubernetes.io/service-name'];
  return {
    ...meta,
    kind: 'EndpointSlice',
    addressType,
    ...(serviceName !== undefined ? { serviceName } : {}),
    ports: exact(ports),
    endpoints: exact(endpoints),
    errors: f.errors,
  };
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const FQDN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.?$/;

function addressOk(type: EndpointSlice['addressType'], v: string): boolean {
  if (type === 'IPv4') return IPV4.test(v);
  if (type === 'IPv6') return v.includes(':') && /^[0-9a-fA-F:.]+$/.test(v);
  return FQDN.test(v) && v.length <= 253;
}

export function decodeNamespace(src: SourceObject): Namespace {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  return { ...meta, namespace: '', kind: 'Namespace', errors: f.errors };
}
