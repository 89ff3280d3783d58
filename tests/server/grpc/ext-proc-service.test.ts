// The ext_proc service in-process, driven by a gRPC client that speaks like Envoy:
// one stream per request, request headers first, other phases answered "continue".
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGrpcServer, type GrpcServerHandle } from '../../../extproc/src/server/grpc/grpc-server.js';
import type { RequestAttributes } from '../../../extproc/src/server/grpc/request-attributes.js';
import { loadServiceProtos } from '../../../extproc/src/server/grpc/protos.js';
import { ServiceMetrics } from '../../../extproc/src/server/metrics.js';
import { waitUntil } from '../../support/wait-until.js';

type Message = Record<string, unknown>;

let server: GrpcServerHandle;
let client: grpc.Client;
const metrics = new ServiceMetrics();
const seen: RequestAttributes[] = [];

function envoyHeaders(pairs: Array<[string, string]>, raw = true): Message {
  return {
    request_headers: {
      headers: {
        headers: pairs.map(([key, value]) => (raw ? { key, raw_value: Buffer.from(value) } : { key, value })),
      },
      end_of_stream: true,
    },
  };
}

/** Opens one stream, sends `messages`, collects every answer until the server has answered each. */
function exchange(messages: Message[]): Promise<Message[]> {
  return new Promise((resolve, reject) => {
    const call = (
      client as unknown as { Process: () => grpc.ClientDuplexStream<Message, Message> }
    ).Process();
    const answers: Message[] = [];
    call.on('data', (m: Message) => {
      answers.push(m);
      if (answers.length === messages.length) call.end();
    });
    call.on('error', reject);
    call.on('end', () => resolve(answers));
    for (const m of messages) call.write(m);
    if (messages.length === 0) call.end();
  });
}

beforeAll(async () => {
  server = await startGrpcServer('127.0.0.1:0', {
    metrics: metrics.extProc,
    lookup: (req) => {
      seen.push(req);
      if (req.path.startsWith('/boom')) throw new Error('resolver bug');
      if (req.path.startsWith('/closed')) return { result: 'invalid' };
      return req.authority === 'shop.example' ? 'sf1;id=httproute/default/shop/rule/0;k=h' : undefined;
    },
  });
  const Ctor = grpc.makeGenericClientConstructor(loadServiceProtos().extProc, 'ExternalProcessor');
  client = new Ctor(server.address, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client.close();
  await server.shutdown(1000);
});

describe('ext_proc request headers', () => {
  it('answers a matching request with the token in the steadfast namespace', async () => {
    const [answer] = await exchange([
      envoyHeaders([
        [':method', 'GET'],
        [':authority', 'shop.example'],
        [':path', '/cart?x=1'],
      ]),
    ]);
    expect(answer).toMatchObject({
      request_headers: { response: {} },
      dynamic_metadata: {
        fields: {
          steadfast: {
            structValue: { fields: { policy: { stringValue: 'sf1;id=httproute/default/shop/rule/0;k=h' } } },
          },
        },
      },
    });
    expect(seen.at(-1)).toMatchObject({ method: 'GET', authority: 'shop.example', path: '/cart?x=1' });
  });

  it('reads header values sent as `value` as well as `raw_value`', async () => {
    await exchange([
      envoyHeaders(
        [
          [':authority', 'shop.example'],
          ['X-Mixed', 'a'],
          ['x-mixed', 'b'],
        ],
        false,
      ),
    ]);
    expect(seen.at(-1)?.headers['x-mixed']).toBe('a,b');
  });

  it('closes the stream cleanly once the request headers are answered', async () => {
    // exchange() resolves on the server's end of stream; ask for nothing more than one answer.
    const call = (
      client as unknown as { Process: () => grpc.ClientDuplexStream<Message, Message> }
    ).Process();
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('data', () => undefined);
    call.write(envoyHeaders([[':authority', 'shop.example']]));
    expect((await status).code).toBe(grpc.status.OK);
  });

  it('answers an unmatched request with an empty response, not an error', async () => {
    const [answer] = await exchange([
      envoyHeaders([
        [':authority', 'other.example'],
        [':path', '/'],
      ]),
    ]);
    expect(answer).toEqual({ request_headers: { response: {} }, response: 'request_headers' });
  });

  it('answers without policy when the resolver throws, and counts it', async () => {
    const [answer] = await exchange([
      envoyHeaders([
        [':authority', 'shop.example'],
        [':path', '/boom'],
      ]),
    ]);
    expect(answer?.['dynamic_metadata']).toBeUndefined();
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/steadfast_extproc_requests_total\{result="error"\} 1/);
    expect(text).toMatch(/steadfast_extproc_errors_total\{kind="resolve"\} 1/);
  });

  it('gives a request matching a rule that fails closed no policy, counted as invalid', async () => {
    const [answer] = await exchange([
      envoyHeaders([
        [':authority', 'shop.example'],
        [':path', '/closed'],
      ]),
    ]);
    expect(answer?.['dynamic_metadata']).toBeUndefined();
    expect(await metrics.registry.metrics()).toMatch(
      /steadfast_extproc_requests_total\{result="invalid"\} 1/,
    );
  });

  it('counts a stream Envoy gives up on before it was answered', async () => {
    const call = (
      client as unknown as { Process: () => grpc.ClientDuplexStream<Message, Message> }
    ).Process();
    call.on('error', () => undefined);
    const shows = (line: RegExp) => async () => line.test(await metrics.registry.metrics());
    // The earlier tests' streams are all closed, so the open-streams gauge reads 1 once the service has this one.
    await waitUntil('no stream open before', shows(/^steadfast_extproc_streams 0$/m));
    await waitUntil('the stream open at the service', shows(/^steadfast_extproc_streams 1$/m));
    call.cancel();
    await waitUntil('the stream closed at the service', shows(/^steadfast_extproc_streams 0$/m));
    expect(await metrics.registry.metrics()).toMatch(
      /steadfast_extproc_errors_total\{kind="cancelled_unanswered"\} 1/,
    );
  });

  it('answers phases it was not asked for with "continue"', async () => {
    const answers = await exchange([
      { response_headers: { headers: { headers: [] } } },
      { request_body: { body: Buffer.from('x'), end_of_stream: true } },
      { request_trailers: { trailers: { headers: [] } } },
    ]);
    expect(answers.map((a) => a['response'])).toEqual([
      'response_headers',
      'request_body',
      'request_trailers',
    ]);
  });

  it('survives empty and malformed messages', async () => {
    for (const odd of [
      { request_headers: {} },
      { request_headers: { headers: { headers: [{}, { key: '' }, { key: ':path' }] } } },
    ]) {
      expect(await exchange([odd])).toHaveLength(1);
    }
    const stillAlive = await exchange([envoyHeaders([[':authority', 'shop.example']])]);
    expect(stillAlive[0]?.['dynamic_metadata']).toBeDefined();
  });

  it('bounds what it reads of hostile headers', async () => {
    const many = Array.from({ length: 5000 }, (_, i): [string, string] => [`x-h${i}`, 'v'.repeat(100)]);
    await exchange([
      envoyHeaders([[':authority', 'shop.example'], ...many, ['x-huge', 'y'.repeat(100_000)]]),
    ]);
    const last = seen.at(-1)!;
    expect(Object.keys(last.headers).length).toBeLessThanOrEqual(256);
  });
});

describe('headers the resolver reads', () => {
  async function seenWith(headersRead: () => ReadonlySet<string>): Promise<RequestAttributes | undefined> {
    let got: RequestAttributes | undefined;
    const own = await startGrpcServer('127.0.0.1:0', {
      metrics: new ServiceMetrics().extProc,
      headersRead,
      lookup: (req) => {
        got = req;
        return undefined;
      },
    });
    const Ctor = grpc.makeGenericClientConstructor(loadServiceProtos().extProc, 'ExternalProcessor');
    const c = new Ctor(own.address, grpc.credentials.createInsecure());
    try {
      await new Promise<void>((resolve, reject) => {
        const call = (c as unknown as { Process: () => grpc.ClientDuplexStream<Message, Message> }).Process();
        call.on('data', () => call.end());
        call.on('error', reject);
        call.on('end', resolve);
        call.write(
          envoyHeaders([
            [':authority', 'shop.example'],
            ['x-env', 'canary'],
            ['cookie', 'c=1'],
          ]),
        );
      });
    } finally {
      c.close();
      await own.shutdown(1000);
    }
    return got;
  }

  it('decodes only the headers the resolver reads, besides pseudo-headers and host', async () => {
    const read = new Set(['x-env']);
    expect({ ...(await seenWith(() => read))?.headers }).toEqual({
      ':authority': 'shop.example',
      'x-env': 'canary',
    });
  });

  it('reads the message again when the configuration changed between decoding and resolving', async () => {
    // A new set on every call: each request sees a "reload" after it was decoded.
    let calls = 0;
    const seen = await seenWith(() => (++calls === 1 ? new Set<string>() : new Set(['cookie'])));
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(seen?.headers['cookie']).toBe('c=1');
  });
});

describe('metrics', () => {
  it('exposes what the streams counted: answers by result, the resolve-time histogram, open streams', async () => {
    const valueIn =
      (text: string) =>
      (line: RegExp): number =>
        Number(line.exec(text)?.[1]);
    /** The histogram's cumulative buckets, in the order of their bounds. */
    const buckets = (text: string): number[] =>
      [...text.matchAll(/^steadfast_extproc_resolve_seconds_bucket\{le="[^"]+"\} (\d+)$/gm)].map((m) =>
        Number(m[1]),
      );
    const earlier = await metrics.registry.metrics();
    await exchange([envoyHeaders([[':authority', 'shop.example']])]);
    const text = await metrics.registry.metrics();
    const [was, value] = [valueIn(earlier), valueIn(text)];
    const MATCHED = /^steadfast_extproc_requests_total\{result="matched"\} (\d+)$/m;
    const COUNT = /^steadfast_extproc_resolve_seconds_count (\d+)$/m;
    expect(value(MATCHED) - was(MATCHED)).toBe(1);
    // Every resolved request is timed once (the one whose resolver threw is not).
    const count = value(COUNT);
    expect(count - was(COUNT)).toBe(1);
    const matched = value(MATCHED);
    const unmatched = value(/^steadfast_extproc_requests_total\{result="unmatched"\} (\d+)$/m);
    const invalid = value(/^steadfast_extproc_requests_total\{result="invalid"\} (\d+)$/m);
    expect(count).toBe(matched + unmatched + invalid);
    expect(value(/^steadfast_extproc_resolve_seconds_bucket\{le="\+Inf"\} (\d+)$/m)).toBe(count);
    // The one new observation fell in one bucket: cumulatively, 0 below its bound and 1 from it on.
    const added = buckets(text).map((n, i) => n - (buckets(earlier)[i] ?? 0));
    expect(added.length).toBeGreaterThan(1);
    expect(added).toEqual([...added.filter((d) => d === 0), ...added.filter((d) => d === 1)]);
    expect(added.at(-1)).toBe(1);
    expect(value(/^steadfast_extproc_resolve_seconds_sum (\S+)$/m)).toBeGreaterThan(
      was(/^steadfast_extproc_resolve_seconds_sum (\S+)$/m),
    );
    // Scraping twice reports the same totals (the tallies are read, not drained).
    const extProcLines = (t: string): string[] =>
      t.split('\n').filter((l) => l.startsWith('steadfast_extproc_'));
    expect(extProcLines(await metrics.registry.metrics())).toEqual(extProcLines(text));
    expect(text).toMatch(/^steadfast_extproc_streams 0$/m);
  });
});

describe('health', () => {
  it('reports SERVING for the server and for ext_proc, NOT_FOUND for others', async () => {
    const Ctor = grpc.makeGenericClientConstructor(loadServiceProtos().health, 'Health');
    const health = new Ctor(server.address, grpc.credentials.createInsecure()) as unknown as {
      Check: (req: Message, cb: (err: grpc.ServiceError | null, res: Message) => void) => void;
      close: () => void;
    };
    const check = (service: string) =>
      new Promise<Message | grpc.ServiceError>((resolve) =>
        health.Check({ service }, (e, r) => resolve(e ?? r)),
      );
    expect(await check('')).toEqual({ status: 'SERVING' });
    expect(await check('envoy.service.ext_proc.v3.ExternalProcessor')).toEqual({ status: 'SERVING' });
    expect(await check('nope')).toMatchObject({ code: grpc.status.NOT_FOUND });
    health.close();
  });
});
