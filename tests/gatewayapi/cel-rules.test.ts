// The schema's CEL rules, one table row per case, in the manner of the Gateway API's own
// CEL tests: a rule snippet and the errors the API server would answer with.
import { describe, expect, it } from 'vitest';
import { parseConfigFiles } from '../../extproc/src/gatewayapi/parse.js';
import { validateObjects } from '../../extproc/src/gatewayapi/validate.js';

function ruleErrors(kind: 'HTTPRoute' | 'GRPCRoute', rule: string): string[] {
  const text = `apiVersion: gateway.networking.k8s.io/v1
kind: ${kind}
metadata: { name: r }
spec:
  rules:
    - ${rule}
`;
  const { diagnostics } = validateObjects(parseConfigFiles([{ path: 'r.yaml', text }]).objects);
  return diagnostics.map((d) => `${d.field.replace(/^spec\.rules\[0\]\.?/, '')}: ${d.message}`);
}

const http: [string, string, string[]][] = [
  ['timeouts: request only', 'timeouts: { request: 10s }', []],
  ['timeouts: equal', 'timeouts: { request: 1s, backendRequest: 1s }', []],
  [
    'timeouts: backendRequest longer',
    'timeouts: { request: 1s, backendRequest: 1001ms }',
    ['timeouts: backendRequest timeout cannot be longer than request timeout'],
  ],
  ['timeouts: request 0s disables the check', 'timeouts: { request: 0s, backendRequest: 1h }', []],
  [
    'timeouts: bare 0',
    'timeouts: { request: "0" }',
    [
      'timeouts.request: "0" is not a GEP-2257 duration (^([0-9]{1,5}(h|m|s|ms)){1,4}$, e.g. "0s", "1s500ms")',
    ],
  ],
  ['retry: all fields', 'retry: { codes: [500, 502, 503, 504], attempts: 2, backoff: 100ms }', []],
  ['retry: code 599 and 400', 'retry: { codes: [400, 599] }', []],
  ['retry: code 399', 'retry: { codes: [399] }', ['retry.codes[0]: 399 is not in 400-599']],
  ['retry: attempts 0', 'retry: { attempts: 0 }', ['retry.attempts: 0 is not in 1-2147483647']],
  [
    'retry: reasons on HTTPRoute',
    'retry: { reasons: [unavailable] }',
    ['retry.reasons: unknown field "reasons"'],
  ],
  [
    'session: v1.5 permanent with absoluteTimeout',
    'sessionPersistence: { absoluteTimeout: 1h, idleTimeout: 5m, cookieConfig: { lifetimeType: Permanent } }',
    [],
  ],
  [
    'session: permanent without absoluteTimeout',
    'sessionPersistence: { cookieConfig: { lifetimeType: Permanent } }',
    ['sessionPersistence: AbsoluteTimeout must be specified when cookie lifetimeType is Permanent'],
  ],
  [
    'session: cookieConfig with Header',
    'sessionPersistence: { type: Header, cookieConfig: {} }',
    ['sessionPersistence.cookieConfig: cookieConfig can only be set with type Cookie'],
  ],
  [
    'session: union cookie',
    'sessionPersistence: { type: Cookie, cookie: { name: c, path: /a, lifetimeType: Session } }',
    [],
  ],
  ['session: union header', 'sessionPersistence: { type: Header, header: { name: x-s } }', []],
  [
    'session: union Cookie without cookie',
    'sessionPersistence: { type: Cookie, header: { name: x } }',
    [
      'sessionPersistence: cookie must be specified for Cookie type',
      'sessionPersistence.header: header must be nil if type is not Header',
    ],
  ],
  [
    'session: union header without name',
    'sessionPersistence: { type: Header, header: {} }',
    ['sessionPersistence.header.name: Required value'],
  ],
  [
    'session: name too long',
    `sessionPersistence: { sessionName: ${'a'.repeat(129)} }`,
    ['sessionPersistence.sessionName: must be at most 128 characters, is 129'],
  ],
  [
    'session: cookie name with a space',
    'sessionPersistence: { cookie: { name: "a b" } }',
    [`sessionPersistence.cookie.name: "a b" does not match ^[A-Za-z0-9!#$%&'*+\\-.^_\`|~]+$`],
  ],
  ['matches: empty PathPrefix value defaults to /', 'matches: [{ path: { type: PathPrefix } }]', []],
  [
    'matches: Exact without leading slash',
    'matches: [{ path: { type: Exact, value: foo } }]',
    [
      "matches[0].path.value: value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
    ],
  ],
  [
    'matches: regex keeps free form',
    'matches: [{ path: { type: RegularExpression, value: "^/v[0-9]+/.*" } }]',
    [],
  ],
  [
    'filters: redirect with backendRefs',
    'filters: [{ type: RequestRedirect, requestRedirect: { statusCode: 301 } }]\n      backendRefs: [{ name: s, port: 80 }]',
    [': RequestRedirect filter must not be used together with backendRefs'],
  ],
  [
    'backendRefs: Service without port',
    'backendRefs: [{ name: s }]',
    ['backendRefs[0]: Must have port for Service reference'],
  ],
  [
    'backendRefs: weight too big',
    'backendRefs: [{ name: s, port: 80, weight: 1000001 }]',
    ['backendRefs[0].weight: 1000001 is not in 0-1000000'],
  ],
  [
    'backendRefs: other kind without port',
    'backendRefs: [{ group: example.com, kind: Bucket, name: b }]',
    [],
  ],
];

const grpc: [string, string, string[]][] = [
  [
    'reasons in both spellings',
    'retry: { reasons: [cancelled, DEADLINE_EXCEEDED, internal, RESOURCE_EXHAUSTED, unavailable] }',
    [],
  ],
  [
    'unknown reason',
    'retry: { reasons: [aborted] }',
    [
      'retry.reasons[0]: "aborted" is not one of cancelled, deadline-exceeded, internal, resource-exhausted, unavailable (or CANCELLED, DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED, UNAVAILABLE)',
    ],
  ],
  ['method match with service and method', 'matches: [{ method: { service: pkg.Svc, method: Get } }]', []],
  [
    'method match with neither',
    'matches: [{ method: { type: Exact } }]',
    ["matches[0].method: One or both of 'service' or 'method' must be specified"],
  ],
  [
    'service with a slash',
    'matches: [{ method: { service: "a/b" } }]',
    [
      'matches[0].method.service: service must only contain valid characters (matching ^\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)',
    ],
  ],
  ['regex service is free form', 'matches: [{ method: { type: RegularExpression, service: "a/.*" } }]', []],
];

describe('HTTPRoute rule CEL and schema', () => {
  it.each(http)('%s', (_name, rule, want) => {
    expect(ruleErrors('HTTPRoute', rule)).toEqual(want);
  });
});

describe('GRPCRoute rule CEL and schema', () => {
  it.each(grpc)('%s', (_name, rule, want) => {
    expect(ruleErrors('GRPCRoute', rule)).toEqual(want);
  });
});
