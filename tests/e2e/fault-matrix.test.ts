// The fault matrix, against the real Envoy in both modes: every backend failing (attempts
// stay bounded), hostile cookies (never a 5xx, never a wasm VM failure), and request
// smuggling (refused before any backend sees it). Gateway mode besides: a backend that
// resets mid-response, and a broken reload under load. Timeouts against a slow backend are
// in retry-semantics.test.ts; hostile configuration files in tests/provider/config-limits.test.ts.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import { startBoundedLoad } from './support/bounded-load.js';
import { curl } from './support/curl.js';
import {
  ConfigDir,
  gatewayUrl,
  gatewayYaml,
  serviceYaml,
  startTestGateway,
} from './support/gateway-fixture.js';
import { MODES, type ModeStack, startMode } from './support/mode-stack.js';
import { filterCounter } from '../support/filter-builds.js';
import { POLICY_HEADER, withPolicy } from './support/with-policy.js';

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: faults, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /fail } }]
      retry: { attempts: 2, codes: [503] }
      backendRefs: [{ name: app, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /cart } }]
      sessionPersistence: { sessionName: shop-session, type: Cookie }
      backendRefs: [{ name: app, port: 80 }]
`;

interface RawResponse {
  /** 0 when the connection ended without a status line. */
  readonly status: number;
  readonly text: string;
  /** Envoy closed the connection. */
  readonly closed: boolean;
}

/** Writes `request` as raw bytes to `url`'s host:port and reads until Envoy closes or answers in full. */
function raw(url: string, request: Buffer | string, timeoutMs = 5000): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket: Socket = connect(Number(port), hostname);
    const finish = (closed: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, closed });
    };
    const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      // A complete answer with a Content-Length: done without waiting for the close.
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, head))?.[1];
      if (head > 0 && length !== undefined && text.length - head - 4 >= Number(length)) {
        // Wait a moment for a close that follows the answer (a refused request closes).
        setTimeout(() => finish(socket.readableEnded || socket.destroyed), 100);
      }
    });
    socket.on('end', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(request);
  });
}

const host = (url: string): string => new URL(url).host;

describe.each(MODES)('%s mode', (mode) => {
  let stack: ModeStack;
  const attempts = async (uuid: string): Promise<number> => {
    const b = stack.backends[0]!;
    const r = await fetch(`http://${b.address}:${b.port}/__attempts?uuid=${uuid}`);
    return ((await r.json()) as { count: number }).count;
  };

  beforeAll(async () => {
    stack = await startMode(mode, ROUTES);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('all backends answer 503: 20 concurrent requests, each tried exactly 3 times (attempts: 2), no more', async () => {
    let sent = 0;
    // Each with its policy: in attach mode one whose ext_proc answer came too late went on
    // without it (one try), and is sent again (support/with-policy.ts).
    const answers = await withPolicy(
      stack,
      20,
      async () => {
        const id = `${mode}-all503-${sent++}`;
        const r = await fetch(`${stack.url}/fail?uuid=${id}&succeedAfter=1000&responseCode=503`);
        await r.arrayBuffer();
        return { id, status: r.status, policy: r.headers.has(POLICY_HEADER) };
      },
      (a) => a.policy,
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 503));
    const counts = await Promise.all(answers.map((a) => attempts(a.id)));
    expect(counts).toEqual(answers.map(() => 3));
  });

  describe('hostile cookies: never a 5xx, never a wasm VM failure', () => {
    let before: Map<string, number>;
    beforeAll(async () => {
      before = await stack.envoy.stats();
    });

    const token = 'A'.repeat(86);
    const request = (cookie: Buffer): Buffer =>
      Buffer.concat([
        Buffer.from(`GET /cart HTTP/1.1\r\nHost: ${host(stack.url)}\r\nConnection: close\r\nCookie: `),
        cookie,
        Buffer.from('\r\n\r\n'),
      ]);

    const cookies = (n: number, last?: string): string =>
      [...Array.from({ length: n }, (_, i) => `c${i}=v${i}`), ...(last ? [last] : [])].join('; ');
    const bytes = (...parts: (string | number[])[]): Buffer =>
      Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

    it.each([
      { what: 'an 8 KB session cookie', cookie: bytes(`shop-session=${'x'.repeat(8 * 1024)}`), status: 200 },
      { what: '500 cookies', cookie: bytes(cookies(500)), status: 200 },
      {
        what: '500 cookies, the session one last',
        cookie: bytes(cookies(499, `shop-session=${token}`)),
        status: 200,
      },
      {
        what: 'non-ASCII bytes in the value',
        cookie: bytes('shop-session=', [0xc3, 0xa9, 0xff, 0xfe]),
        status: 200,
      },
      { what: 'non-ASCII bytes in the name', cookie: bytes([0xff], `shop-session=${token}`), status: 200 },
      {
        what: 'two session cookies',
        cookie: bytes(`shop-session=${token}; shop-session=${'B'.repeat(86)}`),
        status: 200,
      },
      { what: 'an empty session cookie', cookie: bytes('shop-session=; shop-session'), status: 200 },
      // Refused by Envoy's HTTP/1 codec before any filter: NUL is never valid in a header.
      { what: 'a NUL byte', cookie: bytes('shop-session=ab', [0], 'cd'), status: 400 },
      // Over max_request_headers_kb (60 KiB, Envoy's default in attach mode too).
      { what: 'a 60 KB session cookie', cookie: bytes(`shop-session=${'x'.repeat(60 * 1024)}`), status: 431 },
    ])('$what → $status', async ({ cookie, status }) => {
      const r = await raw(stack.url, request(cookie));
      expect(r.status).toBe(status);
      if (status === 200) {
        // Treated as no session: a new one starts, on a backend of the rule.
        expect(r.text).toMatch(/\r\nset-cookie: shop-session=[\w-]{86};/i);
        expect(r.text).toMatch(/\r\nx-backend-instance: /i);
      }
    });

    it('the filter ran for each, and no wasm VM or native instance failed or was replaced', async () => {
      const after = await stack.envoy.stats();
      const delta = (name: string) => filterCounter(after, name) - filterCounter(before, name);
      expect(delta('steadfast_session_created_total')).toBeGreaterThanOrEqual(7);
      expect(delta('steadfast_session_rejected_total')).toBeGreaterThanOrEqual(3);
      if (stack.build === 'wasm') {
        const vm = [...after.keys()].filter((k) => /^wasm.*\.(created|active)$/.test(k));
        expect(vm.length).toBeGreaterThan(0);
        for (const k of vm) expect(after.get(k), k).toBe(before.get(k));
      } else {
        // The native module counts every trap (each replaces its worker's instance).
        expect(after.has('wasmcustom.steadfast_native_trapped_total')).toBe(true);
        expect(delta('steadfast_native_trapped_total')).toBe(0);
      }
      expect(stack.envoy.output()).not.toMatch(
        /Uncaught|RuntimeError|Function: \S+ failed|wasm.*(crash|abort)|the filter trapped/i,
      );
    });
  });

  describe('request smuggling is refused before any backend sees it', () => {
    const smuggled = (uuid: string): string => `GET /fail?uuid=${uuid} HTTP/1.1\r\nHost: x\r\n\r\n`;

    it.each([
      [
        'Content-Length with Transfer-Encoding: chunked',
        (h: string, inner: string) =>
          `POST /cart HTTP/1.1\r\nHost: ${h}\r\nContent-Length: ${5 + inner.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${inner}`,
      ],
      [
        'two different Content-Lengths',
        (h: string, inner: string) =>
          `POST /cart HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 0\r\nContent-Length: ${inner.length}\r\n\r\n${inner}`,
      ],
      [
        'an obfuscated Transfer-Encoding',
        (h: string, inner: string) =>
          `POST /cart HTTP/1.1\r\nHost: ${h}\r\nContent-Length: ${5 + inner.length}\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n${inner}`,
      ],
      [
        'Transfer-Encoding: chunked, identity',
        (h: string, inner: string) =>
          `POST /cart HTTP/1.1\r\nHost: ${h}\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${inner}`,
      ],
    ] as const)('%s → refused, the connection closed, the inner request never sent', async (what, build) => {
      const uuid = `${mode}-smuggled-${what.replace(/\W+/g, '-')}`;
      const r = await raw(stack.url, build(host(stack.url), smuggled(uuid)));
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.text).not.toMatch(/x-backend-instance/i);
      // Envoy closes after a refused request (its delayed close lets the client read the answer first).
      expect(r.closed || /\r\nconnection: close\r\n/i.test(r.text)).toBe(true);
      expect(await attempts(uuid)).toBe(0);
    });
  });
});

describe('gateway mode: a backend that resets mid-response, and a broken reload under load', () => {
  const config = new ConfigDir();
  let echo: RunningBackend;
  let resetter: Server;
  let resetterPort = 0;
  let resetterRequests = 0;
  let gateway: LocalGateway;

  beforeAll(async () => {
    echo = await startEchoBackend({ address: '127.0.0.2', name: 'echo' });
    // Reads a request, sends headers promising 1000 bytes and 5 of them, then resets.
    resetter = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => {
        resetterRequests++;
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\nhello');
        setTimeout(() => socket.resetAndDestroy(), 50);
      });
    });
    await new Promise<void>((r) => resetter.listen(0, '127.0.0.5', r));
    resetterPort = (resetter.address() as { port: number }).port;
    config.write('gateway.yaml', gatewayYaml());
    config.write(
      'services.yaml',
      serviceYaml('echo', [echo]),
      serviceYaml('resetter', [
        { name: 'resetter', address: '127.0.0.5', port: resetterPort, close: async () => undefined },
      ]),
    );
    config.write('routes.yaml', routesYaml());
    gateway = await startTestGateway(config);
  });

  afterAll(async () => {
    await gateway?.stop();
    await echo?.close();
    await new Promise((r) => resetter?.close(r));
    config.remove();
  });

  function routesYaml(extra = ''): string {
    return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: faults }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { value: /reset } }]
      retry: { attempts: 2 }
      backendRefs: [{ name: resetter, port: 80 }]
    - matches: [{ path: { value: /app } }]
      backendRefs: [{ name: echo, port: 80 }]
${extra}`;
  }

  it('a reset after the response started reaches the client as a cut response, is not retried, and Envoy serves on', async () => {
    const r = await curl(`${gatewayUrl(gateway)}/reset`).then(
      () => 'complete',
      (e: Error) => e.message,
    );
    // curl: "transfer closed with 995 bytes remaining to read" or a receive failure. A response
    // left hanging instead would end at curl's --max-time as exit code 28, which this refuses.
    expect(r).toMatch(/curl: \((18|56|92)\)/);
    expect(resetterRequests).toBe(1);
    const after = await curl(`${gatewayUrl(gateway)}/app`);
    expect(after.status).toBe(200);
  });

  it('a broken reload under load keeps the last good configuration: no request fails', async () => {
    const load = startBoundedLoad({
      url: `${gatewayUrl(gateway)}/app`,
      ratePerSecond: 100,
      durationMs: 3000,
      maxRequests: 300,
    });
    await new Promise((r) => setTimeout(r, 500));
    const generation = gateway.config.generation;
    config.write(
      'routes.yaml',
      routesYaml('    - matches: [{ path: { value: /broken } }\n      backendRefs: [{ name'),
    );
    const deadline = Date.now() + 5000;
    while (!gateway.config.lastFailure && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(gateway.config.lastFailure?.message).toMatch(/kept the previous configuration/);
    expect(gateway.config.generation).toBe(generation);
    const { samples, failed } = await load.done;
    expect(failed).toEqual([]);
    expect(samples.length).toBeGreaterThanOrEqual(200);
    config.write('routes.yaml', routesYaml());
  });
});
