// Translation keeps a status equal to the last one for its object as that object, by
// content (sameJson), so what is made of it (its JSON and digest on the way to the service)
// is made once; a status that differs in anything is the new object.
import { describe, expect, it } from 'vitest';
import { sameJson } from '../../extproc/src/json.js';
import type { ObjectStatus } from '../../extproc/src/translate/status.js';
import { TranslateMemo } from '../../extproc/src/translate/translate-memo.js';

const status = (name: string, reason = 'Accepted', line = 3): ObjectStatus => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { namespace: 'default', name },
  source: { file: 'routes.yaml', line },
  errors: [],
  status: {
    parents: [
      {
        parentRef: {
          group: 'gateway.networking.k8s.io',
          kind: 'Gateway',
          namespace: 'default',
          name: 'edge',
        },
        controllerName: 'steadfast.dev/gateway-controller',
        conditions: [{ type: 'Accepted', status: 'True', reason: reason as 'Accepted', message: 'ok' }],
      },
    ],
  },
});

describe('sameJson', () => {
  it('holds equal primitives, lists and objects the same, and anything different not', () => {
    expect(sameJson(status('a'), status('a'))).toBe(true);
    expect(sameJson(status('a'), status('b'))).toBe(false);
    expect(sameJson(status('a'), status('a', 'NotAllowedByListeners'))).toBe(false);
    expect(sameJson(status('a'), status('a', 'Accepted', 4))).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson({ a: [1, 2] }, { a: [1, 2, 3] })).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson({ a: null }, { a: null })).toBe(true);
    expect(sameJson({ a: null }, { a: {} })).toBe(false);
    expect(sameJson(Number.NaN, Number.NaN)).toBe(false);
  });
});

describe('TranslateMemo.statuses', () => {
  it('keeps an equal status as the object it had, and takes a changed one', () => {
    const memo = new TranslateMemo();
    const first = memo.statuses([status('a'), status('b'), status('c')]);
    const second = memo.statuses([
      status('a'),
      status('b', 'NotAllowedByListeners'),
      status('c', 'Accepted', 9),
    ]);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).not.toBe(first[1]);
    expect(second[1]?.status.parents?.[0]?.conditions[0]?.reason).toBe('NotAllowedByListeners');
    expect(second[2]?.source?.line).toBe(9);
    // Only the last statuses are held: b as it was first is not taken back.
    const third = memo.statuses([status('b')]);
    expect(third[0]).not.toBe(second[1]);
    expect(third[0]).not.toBe(first[1]);
    expect(memo.statuses([status('b')])[0]).toBe(third[0]);
  });

  it('holds only the last statuses when they are given again as the same objects', () => {
    const memo = new TranslateMemo();
    const first = memo.statuses([status('a'), status('b')]);
    // The same objects given again (the memo's own, as translation gives unchanged ones).
    const second = memo.statuses([...first]);
    expect(second).toEqual(first);
    expect(second.every((st, i) => st === first[i])).toBe(true);
    // a goes away, then comes back equal: it is not the object held before it went.
    memo.statuses([second[1] as ObjectStatus]);
    const back = memo.statuses([status('a'), second[1] as ObjectStatus]);
    expect(back[0]).not.toBe(first[0]);
    expect(back[1]).toBe(first[1]);
    // b changed while given among kept ones: the new one is held from then on.
    const changed = memo.statuses([back[0] as ObjectStatus, status('b', 'NotAllowedByListeners')]);
    expect(changed[1]).not.toBe(first[1]);
    expect(memo.statuses([status('a'), status('b', 'NotAllowedByListeners')])).toEqual(changed);
    expect(memo.statuses([status('a'), status('b', 'NotAllowedByListeners')])[1]).toBe(changed[1]);
  });
});
