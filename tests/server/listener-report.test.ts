// The cases where attach mode cannot tell a request's Gateway port (or is told one without
// routes) are reported once each, with what to do, and cost nothing when all is well.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import type { RequestListener } from '../../extproc/src/resolve/request.js';
import { ListenerReport } from '../../extproc/src/server/listener-report.js';
import { outcomeOf } from '../../extproc/src/server/served-config.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { REPO_ROOT } from '../support/paths.js';

const TWO = readFileSync(join(REPO_ROOT, 'tests/resolve/testdata/two-listeners.yaml'), 'utf8');
const resolver = compileResolver(compileSnapshot([{ path: 'two.yaml', text: TWO }]).ir);

function request(listener?: RequestListener) {
  return {
    method: 'GET',
    authority: 'shop.example',
    path: '/api',
    headers: {},
    ...(listener ? { listener } : {}),
  };
}

describe('ListenerReport', () => {
  it('reports each case once, with the port and what to do', () => {
    const said: string[] = [];
    const report = new ListenerReport((p) => said.push(`${p.kind}: ${p.message}`));
    report.configured(resolver);
    for (let i = 0; i < 3; i++) {
      expect(outcomeOf(resolver, request({ destinationPort: 8080 }), report)).toMatchObject({
        result: 'matched',
        listener: 'destination_port',
      });
      expect(outcomeOf(resolver, request({ destinationPort: 10080 }), report)).toEqual({
        result: 'unmatched',
        listener: 'unknown',
        // The answer holds for requests on the same listener (the answer cache keys on it).
        scope: expect.stringMatching(/^sc1;g=[0-9a-f]{16};l=1$/),
      });
      outcomeOf(resolver, request(), report);
      outcomeOf(resolver, request({ gatewayPort: 7070 }), report);
      outcomeOf(resolver, request({ invalidGatewayPort: 'eighty', destinationPort: 9090 }), report);
    }
    expect(report.problems.map((p) => [p.kind, p.port])).toEqual([
      ['unknown-port', 10080],
      ['no-attributes', undefined],
      ['metadata-port-without-routes', 7070],
      ['invalid-metadata', undefined],
    ]);
    expect(said).toHaveLength(4);
    expect(said[0]).toMatch(
      /unknown-port: requests arrive on Envoy port 10080, which is no Gateway listener's port \(ports: 8080, 9090\).*steadfast\.gateway_port/,
    );
    expect(said[1]).toMatch(/Envoy sends no listener attributes/);
    expect(said[3]).toMatch(/steadfast\.gateway_port is "eighty", not a port number/);
  });

  it('forgets the cases when the Gateway ports change, and keeps them when they do not', () => {
    const report = new ListenerReport();
    report.configured(resolver);
    outcomeOf(resolver, request({ destinationPort: 10080 }), report);
    report.configured(compileResolver(compileSnapshot([{ path: 'two.yaml', text: TWO }]).ir));
    expect(report.problems).toHaveLength(1);
    report.configured(
      compileResolver(
        compileSnapshot([{ path: 'one.yaml', text: TWO.replace('port: 9090', 'port: 8080') }]).ir,
      ),
    );
    expect(report.problems).toEqual([]);
  });
});
