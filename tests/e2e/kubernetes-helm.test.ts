// The install: the Helm chart (deploy/helm/steadfast) passes `helm lint`; `helm template` of
// both modes and of several value sets is applied with `kubectl apply --dry-run=server` to a
// real API server with the Gateway API CRDs installed, so the server validates every object;
// and the plain manifests of deploy/kubernetes/ are what the chart renders (a stale copy fails).
// No kubelet runs here: that the pods schedule and start is not proven (docs/kubernetes.md).
import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELM, KUBECTL, type LocalKube, startLocalKube } from '../../scripts/kube-local.mjs';
import { REPO_ROOT } from '../support/paths.js';

const CHART = 'deploy/helm/steadfast';

function helm(args: readonly string[]): { status: number | null; out: string } {
  const r = spawnSync(HELM, args, { cwd: REPO_ROOT, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** `helm template` as release `name` in `namespace` with `values` (--set pairs). */
function template(name: string, namespace: string, values: readonly string[]): string {
  const r = helm(['template', name, CHART, '--namespace', namespace, ...values.flatMap((v) => ['--set', v])]);
  expect(r.status, r.out).toBe(0);
  return r.out;
}

/** The kinds of the documents of a rendered manifest, in order. */
const kinds = (yaml: string): string[] => [...yaml.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1] as string);

describe('the Helm chart and the manifests made from it', () => {
  let kube: LocalKube;
  const kubectl = (args: readonly string[], input?: string): string =>
    execFileSync(KUBECTL, ['--kubeconfig', kube.adminConfig, ...args], {
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    });
  /** Server-side dry run: every object checked by the API server (schemas, CRDs, RBAC escalation). */
  const dryRun = (yaml: string): string => kubectl(['apply', '--dry-run=server', '-f', '-'], yaml);

  beforeAll(async () => {
    kube = await startLocalKube({ log: () => {} });
  }, 240_000);

  afterAll(async () => {
    await kube?.stop();
  });

  it('passes helm lint in both modes', () => {
    for (const mode of ['gateway', 'attach']) {
      const r = helm(['lint', CHART, '--strict', '--set', `mode=${mode}`]);
      expect(r.status, r.out).toBe(0);
      expect(r.out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it('keeps deploy/kubernetes/ and the chart bootstrap as generated (a stale file fails)', () => {
    const r = spawnSync(process.execPath, ['scripts/helm-manifests.mjs', '--check'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });

  it('renders gateway mode: control plane, Envoys fed over ADS, Services, PDBs; every object accepted by the API server', () => {
    const yaml = template('steadfast', 'steadfast-system', ['namespace.create=true']);
    expect(kinds(yaml).sort()).toEqual(
      [
        'Namespace',
        'ServiceAccount',
        'ClusterRole',
        'ClusterRoleBinding',
        'Role',
        'RoleBinding',
        'GatewayClass',
        'ConfigMap',
        'Deployment',
        'Deployment',
        'Service',
        'Service',
        'Service',
        'Service',
        'PodDisruptionBudget',
        'PodDisruptionBudget',
      ].sort(),
    );
    expect(yaml).toMatch(/--xds=0\.0\.0\.0:18000/);
    expect(yaml).toMatch(/address: steadfast-xds\.steadfast-system\.svc/);
    expect(yaml).toMatch(/readOnlyRootFilesystem: true/);
    expect(yaml).toMatch(/allowPrivilegeEscalation: false/);
    const applied = dryRun(yaml);
    expect(applied.match(/\(server dry run\)/g)).toHaveLength(kinds(yaml).length);
  });

  it('renders attach mode without Envoys or ADS; accepted by the API server', () => {
    const yaml = template('steadfast', 'steadfast-system', ['namespace.create=true', 'mode=attach']);
    expect(kinds(yaml)).not.toContain('ConfigMap');
    expect(yaml).not.toMatch(/--xds/);
    expect(kinds(yaml).filter((k) => k === 'Deployment')).toHaveLength(1);
    expect(dryRun(yaml).match(/\(server dry run\)/g)).toHaveLength(kinds(yaml).length);
  });

  it('follows its values: another release and namespace, replicas, ports, no GatewayClass, wasm, no session Secret', () => {
    kubectl(['create', 'namespace', 'edge']);
    const sets: readonly (readonly string[])[] = [
      [
        'controlPlane.replicas=3',
        'envoy.replicas=4',
        'gatewayClass.create=false',
        'xds.filter=wasm',
        'ports.xds=19000',
        'envoy.service.type=ClusterIP',
        'envoy.service.ports[0].name=http',
        'envoy.service.ports[0].port=80',
        'envoy.service.ports[0].targetPort=8080',
        'envoy.service.ports[1].name=https',
        'envoy.service.ports[1].port=8443',
        'xds.serverSecretName=edge-xds',
      ],
      [
        'mode=attach',
        'sessionKeys.secretName=',
        'controlPlane.lease.duration=30s',
        'controlPlane.extraArgs[0]=--workers=2',
      ],
    ];
    for (const values of sets) {
      const yaml = template('edge-gw', 'edge', values);
      expect(yaml).toMatch(/name: edge-gw\n/);
      expect(dryRun(yaml).match(/\(server dry run\)/g)).toHaveLength(kinds(yaml).length);
    }
    const gateway = template('edge-gw', 'edge', sets[0] as readonly string[]);
    expect(gateway).toMatch(/replicas: 3/);
    expect(gateway).toMatch(/replicas: 4/);
    expect(kinds(gateway)).not.toContain('GatewayClass');
    expect(gateway).toMatch(/--xds-wasm-path=\/steadfast-filter\/steadfast\.wasm/);
    expect(gateway).toMatch(/address: edge-gw-xds\.edge\.svc\n\s+port_value: 19000/);
    // The control plane reads its ADS Secret from the API server (watched), in the release's namespace.
    expect(gateway).toMatch(/--xds-tls-secret=edge\/edge-xds\n/);
    expect(gateway).not.toMatch(/--xds-tls-cert=/);
    const attach = template('edge-gw', 'edge', sets[1] as readonly string[]);
    expect(attach).not.toMatch(/--session-key-secret/);
    expect(attach).toMatch(/--lease-duration=30s/);
    expect(attach).toMatch(/- "--workers=2"/);
  });

  it("takes each side's CA from a Secret of its own when asked, for a CA rotation", () => {
    const plain = template('steadfast', 'steadfast-system', []);
    expect(plain).not.toMatch(/--xds-client-ca-secret|xds-ca/);
    expect(plain).toMatch(/filename: \/etc\/steadfast\/xds-tls\/ca\.crt/);
    const values = ['xds.clientCaSecretName=envoys-ca-bundle', 'xds.serverCaSecretName=xds-ca-bundle'];
    const rotating = template('steadfast', 'steadfast-system', values);
    expect(rotating).toMatch(/--xds-client-ca-secret=steadfast-system\/envoys-ca-bundle\n/);
    // The Envoys read the control plane's CA from the other Secret, mounted apart from their own.
    expect(rotating).toMatch(/filename: \/etc\/steadfast\/xds-ca\/ca\.crt/);
    expect(rotating).not.toMatch(/filename: \/etc\/steadfast\/xds-tls\/ca\.crt/);
    expect(rotating).toMatch(/- \{ name: xds-ca, mountPath: \/etc\/steadfast\/xds-ca, readOnly: true \}/);
    expect(rotating).toMatch(/- name: xds-ca\n\s+secret:\n\s+secretName: xds-ca-bundle\n/);
    expect(dryRun(rotating).match(/\(server dry run\)/g)).toHaveLength(kinds(rotating).length);
    // A changed bootstrap rolls the Envoys: that is step 3 of the rotation.
    const sum = (yaml: string) => yaml.match(/checksum\/bootstrap: ([0-9a-f]{64})/)?.[1];
    expect(sum(rotating)).toBeDefined();
    expect(sum(rotating)).not.toBe(sum(plain));
  });

  it('rolls the Envoys when the bootstrap the ConfigMap holds changes: the ADS address or port', () => {
    const checksum = (name: string, namespace: string, values: readonly string[]): string => {
      const m = template(name, namespace, values).match(/checksum\/bootstrap: ([0-9a-f]{64})/);
      expect(m).not.toBeNull();
      return m?.[1] as string;
    };
    const plain = checksum('steadfast', 'steadfast-system', []);
    expect(checksum('steadfast', 'steadfast-system', [])).toBe(plain);
    const others = [
      checksum('steadfast', 'steadfast-system', ['ports.xds=19000']),
      checksum('edge-gw', 'steadfast-system', []),
      checksum('steadfast', 'edge', []),
    ];
    expect(new Set([plain, ...others]).size).toBe(4);
  });

  it('passes envoy.upstreamIdleTimeout to serve in gateway mode; refuses a bad one, or one in attach mode, with the reason', () => {
    expect(template('steadfast', 'steadfast-system', [])).not.toMatch(/--upstream-idle-timeout/);
    for (const value of ['30s', '500ms', 'off', '45', '1.5']) {
      const yaml = template('steadfast', 'steadfast-system', [`envoy.upstreamIdleTimeout=${value}`]);
      expect(yaml).toContain(`- --upstream-idle-timeout=${value}\n`);
    }
    const set = template('steadfast', 'steadfast-system', ['envoy.upstreamIdleTimeout=30s']);
    expect(dryRun(set).match(/\(server dry run\)/g)).toHaveLength(kinds(set).length);
    // The shape by the chart's schema, the range (1ms to a day, as serve takes it) by the template.
    for (const bad of ['2d', 'fast', '-1s', '0', '0ms', '90000s', '86401']) {
      const r = helm(['template', 'steadfast', CHART, '--set', `envoy.upstreamIdleTimeout=${bad}`]);
      expect(r.status, bad).not.toBe(0);
      expect(r.out, bad).toMatch(/upstreamIdleTimeout/);
    }
    const attach = helm([
      'template',
      'steadfast',
      CHART,
      '--set',
      'mode=attach',
      '--set',
      'envoy.upstreamIdleTimeout=30s',
    ]);
    expect(attach.status).not.toBe(0);
    expect(attach.out).toMatch(/envoy\.upstreamIdleTimeout is for gateway mode/);
  });

  it('refuses a mode it does not know, and gateway mode without session keys, with the reason', () => {
    const r = helm(['template', 'steadfast', CHART, '--set', 'mode=mesh']);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/mode must be gateway or attach, not "mesh"/);
    const keyless = helm(['template', 'steadfast', CHART, '--set', 'sessionKeys.secretName=']);
    expect(keyless.status).not.toBe(0);
    expect(keyless.out).toMatch(/gateway mode needs sessionKeys\.secretName/);
  });
});
