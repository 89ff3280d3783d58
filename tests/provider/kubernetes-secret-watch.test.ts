// One Secret watched by name, kept watched: a first list the API server refuses (403) is tried
// again, logged once; what the Secret holds is handed on once it lists; a watch that fails later
// shows as not watched until the reflector's next watch is answered, and so does a watch that
// ends at once (a proxy closing it).
import { describe, expect, it } from 'vitest';
import {
  KubeApiError,
  type KubeClient,
  type WatchEvent,
} from '../../extproc/src/provider/kubernetes/client.js';
import type { KubeObject } from '../../extproc/src/provider/kubernetes/reflector.js';
import { SecretWatch } from '../../extproc/src/provider/kubernetes/secret-watch.js';
import { waitUntil } from '../support/wait-until.js';

const secret = (v: string) => ({
  metadata: { namespace: 'ns', name: 's', resourceVersion: v },
  data: { k: v },
});

/** An API server that refuses the first `refusals` lists, then lists the Secret; its watches are the test's. */
function fakeClient(refusals: number) {
  const watches: {
    emit: (e: WatchEvent) => void;
    fail: (e: Error) => void;
    /** The API server answers the watch request (200), no event yet. */
    open: () => void;
    /** The watch ends, without an error. */
    end: () => void;
  }[] = [];
  let lists = 0;
  const client = {
    server: 'https://fake',
    async call(method: string, path: string) {
      expect([method, path.split('&')[0]]).toEqual([
        'GET',
        '/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%3Ds',
      ]);
      if (++lists <= refusals) throw new KubeApiError(403, 'Forbidden', 'secrets is forbidden: cannot list');
      return { items: [secret('1')], metadata: { resourceVersion: '1' } };
    },
    watch(_path: string, _rv: string, onEvent: (e: WatchEvent) => void, onOpen?: () => void) {
      let fail: (e: Error) => void = () => {};
      let end: () => void = () => {};
      const done = new Promise<void>((resolve, reject) => {
        fail = reject;
        end = resolve;
      });
      watches.push({ emit: onEvent, fail, open: () => onOpen?.(), end });
      return { done, abort: () => {} };
    },
  };
  return { client: client as unknown as KubeClient, watches, lists: () => lists };
}

describe('a Secret watched by name', () => {
  it('tries a refused list again, says so once, and hands on the Secret once it lists', async () => {
    const { client, watches, lists } = fakeClient(2);
    const seen: KubeObject[] = [];
    const logs: string[] = [];
    const w = new SecretWatch(
      client,
      'ns',
      's',
      '--flag',
      { seen: (o) => seen.push(o), deleted: () => {} },
      (l) => logs.push(l),
      'Secret ns/s (--flag)',
    );
    w.start();
    try {
      await waitUntil('refused once', () => logs.length === 1);
      expect(logs[0]).toMatch(
        /^Secret ns\/s \(--flag\): not watched, .*trying again .*: cannot list Secret \(v1\): secrets is forbidden/,
      );
      expect(w.state()).toEqual({ secret: 'ns/s', flag: '--flag', watched: false });
      // Tried again after 1 s and 2 s: the second refusal, said before, is not said again.
      await waitUntil('listed', () => seen.length === 1, 10_000);
      expect(lists()).toBe(3);
      expect(logs.filter((l) => /not watched/.test(l))).toHaveLength(1);
      expect(logs.at(-1)).toMatch(/watched now/);
      expect(seen[0]?.['data']).toEqual({ k: '1' });
      expect(w.state().watched).toBe(true);

      // The watch fails: not watched until a new watch brings an event.
      watches[0]?.fail(new Error('connection reset'));
      await waitUntil('shown as not watched', () => !w.state().watched);
      await waitUntil('watched again', () => watches.length === 2, 5000);
      watches[1]?.emit({ type: 'MODIFIED', object: secret('2') });
      expect(w.state().watched).toBe(true);
      expect(seen.at(-1)?.['data']).toEqual({ k: '2' });
    } finally {
      w.stop();
    }
  }, 20_000);

  it('is watched as soon as a watch is answered, and not watched while watches end at once', async () => {
    const { client, watches } = fakeClient(0);
    const w = new SecretWatch(
      client,
      'ns',
      's',
      '--flag',
      { seen: () => {}, deleted: () => {} },
      () => {},
      'Secret ns/s (--flag)',
    );
    w.start();
    try {
      await waitUntil('watching', () => watches.length === 1 && w.state().watched);
      // The connection drops; the next watch is answered and brings no event (a Secret watched by
      // name can go a minute without one): watched from the answer.
      watches[0]?.fail(new Error('connection reset'));
      await waitUntil('shown as not watched', () => !w.state().watched);
      await waitUntil('watched again', () => watches.length === 2, 5000);
      expect(w.state().watched).toBe(false);
      watches[1]?.open();
      expect(w.state().watched).toBe(true);
      // A proxy ends the watch at once, without an event: not watched, though nothing failed.
      watches[1]?.end();
      await waitUntil('shown as not watched', () => !w.state().watched);
      await waitUntil('watched again', () => watches.length === 3, 5000);
      expect(w.state().watched).toBe(false);
      watches[2]?.open();
      expect(w.state().watched).toBe(true);
    } finally {
      w.stop();
    }
  }, 20_000);
});
