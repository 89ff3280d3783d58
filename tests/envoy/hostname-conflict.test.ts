// Gateway mode's Envoy listeners when HTTPS listeners of two Gateways share a port and a
// hostname: port 443 has the first one's filter chain and routes only (the later Gateway's
// route, which requires a client certificate, is not served there without one), the later
// Gateway's route is served on its own port with the client certificate required, the
// later listener's status says HostnameConflict, and nothing is dropped with a warning.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { envoyYaml } from '../../extproc/src/envoy/envoy-yaml.js';
import { generateGatewayConfig, generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import type { Json } from '../../extproc/src/json.js';
import { validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { HOSTNAME_CONFLICT_CONFIG } from '../support/hostname-conflict-config.js';

const snap = compileSnapshot([{ path: 'conflict.yaml', text: HOSTNAME_CONFLICT_CONFIG }]);
const OPTIONS = { wasmPath: 'filter/build/steadfast.wasm', sessionKeys: [] };
const dir = mkdtempSync(join(tmpdir(), 'sf-hostname-conflict-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function onPort(listeners: readonly Json[], port: number): string {
  const l = listeners.find(
    (x) => (x['address'] as { socket_address: { port_value: number } }).socket_address.port_value === port,
  );
  if (!l) throw new Error(`no Envoy listener on port ${port}`);
  return JSON.stringify(l);
}

describe('Envoy listeners for two Gateways sharing an HTTPS port and hostname', () => {
  const res = generateGatewayResources(
    snap.ir,
    OPTIONS,
    { kind: 'inline' },
    {
      material: snap.tls,
      source: { kind: 'static' },
    },
  );

  it("port 443 serves the first listener's chain and routes; the later listener's routes are absent", () => {
    const port443 = onPort(res.listeners, 443);
    expect(port443).toContain('gateway/default/open/listener/https');
    expect(port443).toContain('httproute/default/via-open');
    expect(port443).not.toContain('gateway/default/strict');
    expect(port443).not.toContain('via-strict');
    expect(port443).not.toContain('require_client_certificate');
    const port8443 = onPort(res.listeners, 8443);
    expect(port8443).toContain('httproute/default/via-strict');
    expect(port8443).toContain('"require_client_certificate":true');
    expect(res.warnings).toEqual([]);
    const strict = snap.statuses.find((s) => s.kind === 'Gateway' && s.metadata.name === 'strict');
    const https = strict?.status.listeners?.find((l) => l.name === 'https');
    expect(https?.conditions.find((c) => c.type === 'Conflicted')).toMatchObject({
      status: 'True',
      reason: 'HostnameConflict',
    });
  });

  it('the configuration validates', () => {
    const path = join(dir, 'envoy.yaml');
    writeFileSync(path, envoyYaml(generateGatewayConfig(snap.ir, OPTIONS, snap.tls)));
    const r = validateEnvoyConfig(path);
    expect(r.ok, r.output).toBe(true);
  });
});
