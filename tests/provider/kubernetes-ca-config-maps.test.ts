// The Kubernetes provider hands the compiler only the ConfigMaps something names among its CA
// certificates: a BackendTLSPolicy (backends) or an owned Gateway's spec.tls.frontend (clients,
// the default's and every port's, in the ref's namespace or the Gateway's).
import { describe, expect, it } from 'vitest';
import { caConfigMapNamed } from '../../extproc/src/provider/kubernetes/ca-config-maps.js';
import { KubeApiError, type KubeClient } from '../../extproc/src/provider/kubernetes/client.js';
import { WATCHED_KINDS } from '../../extproc/src/provider/kubernetes/kinds.js';
import { KubernetesProvider } from '../../extproc/src/provider/kubernetes/provider.js';
import type { KubeObject } from '../../extproc/src/provider/kubernetes/reflector.js';

const configMap = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace, name, uid: `${namespace}-${name}`, resourceVersion: '1' },
  data: { 'ca.crt': 'not read here' },
});
const caRef = (name: string, namespace?: string) => ({
  group: '',
  kind: 'ConfigMap',
  name,
  ...(namespace !== undefined ? { namespace } : {}),
});
const gateway = (name: string, className: string, frontend: unknown): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { namespace: 'apps', name, uid: name, resourceVersion: '1', generation: 1 },
  spec: {
    gatewayClassName: className,
    listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
    tls: { frontend },
  },
});

describe('caConfigMapNamed', () => {
  const gw = gateway('gw', 'steadfast', {
    default: { validation: { caCertificateRefs: [caRef('client-ca')] } },
    perPort: [
      { port: 8443, tls: { validation: { caCertificateRefs: [caRef('port-ca', 'certs')] } } },
      { port: 9443, tls: {} },
    ],
  });

  it("names the default's CA in the Gateway's namespace and a port's in the ref's namespace", () => {
    expect(caConfigMapNamed(configMap('apps', 'client-ca'), [], [gw])).toBe(true);
    expect(caConfigMapNamed(configMap('certs', 'port-ca'), [], [gw])).toBe(true);
    expect(caConfigMapNamed(configMap('certs', 'client-ca'), [], [gw])).toBe(false);
    expect(caConfigMapNamed(configMap('apps', 'port-ca'), [], [gw])).toBe(false);
    expect(caConfigMapNamed(configMap('apps', 'kube-root-ca.crt'), [], [gw])).toBe(false);
  });

  it("still names a BackendTLSPolicy's CA in the policy's namespace", () => {
    const policy: KubeObject = {
      metadata: { namespace: 'apps', name: 'p' },
      spec: { validation: { caCertificateRefs: [caRef('backend-ca')] } },
    };
    expect(caConfigMapNamed(configMap('apps', 'backend-ca'), [policy], [])).toBe(true);
    expect(caConfigMapNamed(configMap('other', 'backend-ca'), [policy], [])).toBe(false);
  });

  it('takes malformed frontends for naming nothing', () => {
    for (const frontend of [
      null,
      'x',
      { default: { validation: { caCertificateRefs: 'x' } } },
      { perPort: [null, 3] },
    ]) {
      expect(
        caConfigMapNamed(configMap('apps', 'client-ca'), [], [gateway('g', 'steadfast', frontend)]),
      ).toBe(false);
    }
  });
});

/** An API server that lists `objects` by kind and watches nothing more. */
function fakeClient(objects: readonly KubeObject[]): KubeClient {
  const client = {
    server: 'https://fake',
    async call(method: string, path: string) {
      const url = new URL(path, 'https://fake');
      const kind = WATCHED_KINDS.find((k) => url.pathname.endsWith(`/${k.plural}`));
      if (method !== 'GET' || !kind) throw new KubeApiError(404, 'NotFound', `${path} not found`);
      return { items: objects.filter((o) => o.kind === kind.kind), metadata: { resourceVersion: '7' } };
    },
    watch: () => ({ done: new Promise<void>(() => {}), abort: () => {} }),
    close: () => {},
  };
  return client as unknown as KubeClient;
}

describe('the ConfigMaps the provider reads', () => {
  it("hands over the CA ConfigMap an owned Gateway's client validation names, not one a foreign Gateway names", async () => {
    const provider = new KubernetesProvider({
      client: fakeClient([
        {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'GatewayClass',
          metadata: { name: 'steadfast', uid: 'gc', resourceVersion: '1' },
          spec: { controllerName: 'steadfast.dev/gateway-controller' },
        },
        gateway('ours', 'steadfast', {
          default: { validation: { caCertificateRefs: [caRef('client-ca')] } },
        }),
        gateway('theirs', 'elsewhere', {
          default: { validation: { caCertificateRefs: [caRef('their-ca')] } },
        }),
        configMap('apps', 'client-ca'),
        configMap('apps', 'their-ca'),
        configMap('apps', 'leader-election'),
      ]),
      writeStatus: false,
    });
    try {
      const { objects } = await provider.read();
      const maps = objects
        .map((o) => o.body as KubeObject)
        .filter((o) => o.kind === 'ConfigMap')
        .map((o) => o.metadata?.name);
      expect(maps).toEqual(['client-ca']);
    } finally {
      await provider.close();
    }
  });
});
