// `steadfast quickstart` (what `npm start` runs): a local gateway to try steadfast — an
// echo backend, the control service and Envoy wired as envoy/attach-example.yaml shows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoBackend } from '../../../../backends/echo/start-echo-backend.js';
import { encodePolicyToken } from '../../table/policy-token.js';
import { startControlService, untilSignalled } from '../../runtime/control-service.js';
import { startEnvoy } from '../../runtime/envoy-process.js';
import { projectRoot } from '../../runtime/project-root.js';
import { parseArgs } from '../args.js';
import type { Command } from '../command.js';

// The demo policy every request gets until gateway mode serves examples/quickstart.
const DEMO_TOKEN = encodePolicyToken({
  rule: 'httproute/default/quickstart/rule/0',
  kind: 'http',
  retry: { attempts: 2, codes: [500, 503], backoffMs: 0, grpcReasons: [] },
  timeouts: { requestMs: 5000 },
});

export const quickstartCommand: Command = {
  name: 'quickstart',
  summary: 'start a local gateway to try steadfast (what `npm start` runs)',
  usage: 'steadfast quickstart',
  async run(args, io) {
    parseArgs(args, {});
    const backend = await startEchoBackend({ address: '127.0.0.2', port: 8080, name: 'echo-1' });
    const service = await startControlService({
      grpcAddress: '127.0.0.1:50051',
      adminAddress: '127.0.0.1',
      adminPort: 9902,
      lookup: () => DEMO_TOKEN,
    });
    let envoy;
    try {
      envoy = await startEnvoy({
        config: readFileSync(join(projectRoot(), 'envoy', 'attach-example.yaml'), 'utf8'),
      });
    } catch (e) {
      await Promise.all([service.stop(), backend.close()]);
      throw e;
    }
    const url = envoy.url('ingress');
    io.out(
      [
        `steadfast quickstart: ready; gateway ${url}; Envoy admin ${envoy.adminUrl}; control service admin ${service.adminUrl}`,
        '',
        'Try:',
        `  curl -i ${url}/hello                      # x-steadfast-policy shows the policy this request got`,
        `  curl -i "${url}/flaky?uuid=$RANDOM&succeedAfter=2&responseCode=503"   # retried by Envoy: 200`,
        `  curl -s ${envoy.adminUrl}/stats | grep steadfast   # the filter's counters`,
        `  curl -s ${service.adminUrl}/metrics | grep steadfast_extproc`,
        '',
        'Ctrl-C stops everything.',
      ].join('\n'),
    );
    await untilSignalled();
    await envoy.stop();
    await Promise.all([service.stop(), backend.close()]);
    io.out('steadfast quickstart: stopped');
    return 0;
  },
};
