// What `npm start` serves: examples/quickstart validates cleanly, shows every feature the
// quickstart prints a command for, and names the demo backends the quickstart starts.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoBackends, quickstartHttps } from '../../extproc/src/cli/commands/quickstart.js';
import { readConfigFiles } from '../../extproc/src/provider/config-files.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { isHealthy } from '../../extproc/src/translate/status.js';
import { REPO_ROOT } from '../support/paths.js';

async function quickstart() {
  const read = await readConfigFiles([join(REPO_ROOT, 'examples', 'quickstart')]);
  // With the HTTPS Gateway `steadfast quickstart` makes at start.
  const https = { path: 'https.yaml', text: quickstartHttps('127.0.0.1').yaml };
  return compileSnapshot([...read.files, https], read.diagnostics);
}

describe('examples/quickstart', () => {
  it('validates with every object accepted and resolved', async () => {
    const snap = await quickstart();
    expect(snap.errors).toEqual([]);
    expect(snap.statuses.every(isHealthy)).toBe(true);
  });

  it('shows retries, timeouts, cookie and header sessions, a 70/30 split and each appProtocol', async () => {
    const rules = (await quickstart()).table.routes.flatMap((r) => r.rules);
    const policies = rules.map((r) => r.policy);
    expect(policies.some((p) => p.retry && p.kind === 'http')).toBe(true);
    expect(policies.some((p) => p.retry && p.retry.grpcReasons.length > 0)).toBe(true);
    expect(
      policies.some((p) => p.timeouts?.requestMs !== undefined && p.timeouts.backendRequestMs !== undefined),
    ).toBe(true);
    expect(policies.some((p) => p.session?.type === 'cookie')).toBe(true);
    expect(policies.some((p) => p.session?.type === 'header')).toBe(true);
    expect(rules.some((r) => r.backends.map((b) => b.weight).join('/') === '70/30')).toBe(true);
    const protocols = new Set(rules.flatMap((r) => r.backends.map((b) => b.protocol)));
    expect([...protocols].sort()).toEqual(['h2c', 'http1', 'ws', 'wss']);
  });

  it('adds an HTTPS listener with the generated certificate and a cookie-session route on it', async () => {
    const snap = await quickstart();
    const https = snap.table.listeners.find((l) => l.protocol === 'HTTPS');
    expect(https?.tls?.certificates).toEqual(['secret/default/quickstart-dev-tls']);
    const route = snap.table.routes.find((r) => r.name === 'shop-https');
    expect(route?.listeners).toEqual([https?.id]);
    expect(route?.rules[0]?.policy.session?.type).toBe('cookie');
  });

  it('names one demo backend per loopback endpoint, gRPC where a GRPCRoute sends traffic', async () => {
    const backends = demoBackends((await quickstart()).table);
    expect(backends.map((b) => `${b.kind} ${b.name} ${b.address}:${b.port}`).sort()).toEqual([
      'echo echo-2 127.0.0.2:8080',
      'echo echo-3 127.0.0.3:8080',
      'echo echo-4 127.0.0.4:8080',
      'echo echo-canary-2 127.0.0.2:8081',
      'grpc grpc-echo-1 127.0.0.1:50061',
    ]);
  });
});
