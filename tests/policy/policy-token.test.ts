// The reader `steadfast serve --policy-token` uses agrees with the one encoder: every policy
// the encoder writes reads back equal, including escaped names; broken tokens are refused.
import { describe, expect, it } from 'vitest';
import type { Policy } from '../../extproc/src/policy/policy.js';
import { checkPolicyToken, encodePolicyToken } from '../../extproc/src/policy/policy-token.js';
import { pick, rng } from '../resolve/random-table.js';

function randomPolicy(rand: () => number, i: number): Policy {
  const maybe = <T>(v: T): T | undefined => (rand() < 0.5 ? v : undefined);
  const n = (max: number) => Math.floor(rand() * max);
  const kind = pick(rand, ['http', 'grpc'] as const);
  const retry = maybe({
    attempts: n(10),
    codes: rand() < 0.5 ? [] : [500 + n(4), 429],
    backoffMs: pick(rand, [0, 25, 2_147_483_647]),
    grpcReasons: kind === 'grpc' ? (['unavailable', 'resource-exhausted'] as const).slice(0, n(3)) : [],
  });
  const requestMs = maybe(n(100_000));
  const backendRequestMs = maybe(n(100_000));
  const timeouts =
    requestMs !== undefined || backendRequestMs !== undefined
      ? {
          ...(requestMs !== undefined ? { requestMs } : {}),
          ...(backendRequestMs !== undefined ? { backendRequestMs } : {}),
        }
      : undefined;
  const absoluteTimeoutS = maybe(n(86_400));
  const idleTimeoutS = maybe(n(3_600));
  const session = maybe({
    type: pick(rand, ['cookie', 'header'] as const),
    name: pick(rand, ['shop-session', 'x-sess', 'n;a=m,e%é']),
    path: pick(rand, ['/', '/cart', '/a b']),
    lifetime: pick(rand, ['session', 'permanent'] as const),
    ...(absoluteTimeoutS !== undefined ? { absoluteTimeoutS } : {}),
    ...(idleTimeoutS !== undefined ? { idleTimeoutS } : {}),
  });
  return {
    rule: `${kind === 'grpc' ? 'grpcroute' : 'httproute'}/default/r;${i}/rule/${n(5)}`,
    kind,
    ...(retry ? { retry } : {}),
    ...(timeouts ? { timeouts } : {}),
    ...(session ? { session } : {}),
  };
}

describe('checkPolicyToken', () => {
  it('reads back every policy the encoder writes (500 seeded random policies)', () => {
    const rand = rng(18);
    for (let i = 0; i < 500; i++) {
      const policy = randomPolicy(rand, i);
      const checked = checkPolicyToken(encodePolicyToken(policy));
      expect(checked.policy).toEqual(policy);
      expect(checked.unknownKeys).toEqual([]);
    }
  });

  it('names unknown keys (the filter ignores them too) without refusing the token', () => {
    expect(checkPolicyToken('sf1;id=r;k=h;zz=1').unknownKeys).toEqual(['zz']);
  });

  it.each([
    ['', 'must start with "sf1;"'],
    ['sf2;id=r', 'must start with "sf1;", not "sf2"'],
    ['sf1;id=r;k=x', 'k=x: expected h or g'],
    ['sf1;id=r;ra=1;rc=5000', 'rc: 5000 is not an HTTP status'],
    ['sf1;id=r;rb=10', 'rb needs ra='],
    ['sf1;id=r;st=c', 'sn= (the cookie or header name) is missing'],
    ['sf1;id=r;st=c;sn=a%G1', 'sn: bad percent escape'],
    ['sf1;id=r;id=s', 'id appears twice'],
    ['sf1;id=r;noequals', '"noequals" is not key=value'],
    [`sf1;id=${'x'.repeat(5000)}`, 'longer than 4096 bytes'],
  ])('refuses %j', (token, message) => {
    expect(() => checkPolicyToken(token)).toThrow(message);
  });
});
