// The attempt counter docker compose's demo backends share through a volume: separate processes
// that see the same directory number a uuid's attempts 1, 2, 3, … together.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AttemptLedger } from '../../backends/attempt-ledger.js';
import { DirectoryAttemptCounter } from '../../backends/directory-attempt-counter.js';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import { REPO_ROOT } from '../support/paths.js';
import { http1, json } from './clients.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'steadfast-attempts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('DirectoryAttemptCounter', () => {
  it('numbers attempts across counters that share the directory', () => {
    const a = new DirectoryAttemptCounter(dir);
    const b = new DirectoryAttemptCounter(dir);
    expect([a.next('u1'), b.next('u1'), a.next('u1'), b.next('u2')]).toEqual([1, 2, 3, 1]);
    expect([a.count('u1'), b.count('u1'), a.count('u2'), a.count('never')]).toEqual([3, 3, 1, 0]);
  });

  it('gives every number exactly once to processes counting at the same time', async () => {
    const module = pathToFileURL(join(REPO_ROOT, 'dist/backends/directory-attempt-counter.js')).href;
    const script =
      `const { DirectoryAttemptCounter } = await import(${JSON.stringify(module)});` +
      `const c = new DirectoryAttemptCounter(process.argv[1]); const got = [];` +
      `for (let i = 0; i < 200; i++) got.push(c.next('same-uuid'));` +
      `console.log(JSON.stringify(got));`;
    const run = promisify(execFile);
    const outputs = await Promise.all(
      [1, 2, 3].map(() => run(process.execPath, ['--input-type=module', '-e', script, dir])),
    );
    const numbers = outputs.flatMap((o) => JSON.parse(o.stdout) as number[]);
    expect(numbers.sort((x, y) => x - y)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
  });

  it('forgets a uuid once its latest attempt is older than maxAgeMs, all its attempts at once', () => {
    let now = Date.now();
    const counter = new DirectoryAttemptCounter(dir, { maxAgeMs: 60_000, now: () => now });
    counter.next('old');
    counter.next('old');
    now += 61_000;
    // The sweep runs on the next count and removes every file of the old uuid.
    expect(counter.next('fresh')).toBe(1);
    expect(counter.count('old')).toBe(0);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  it('lets echo backends with separate ledgers count one uuid together', async () => {
    const b1 = await startEchoBackend({
      address: '127.0.0.3',
      name: 'c1',
      ledger: new AttemptLedger({ counter: new DirectoryAttemptCounter(dir) }),
    });
    const b2 = await startEchoBackend({
      address: '127.0.0.4',
      name: 'c2',
      ledger: new AttemptLedger({ counter: new DirectoryAttemptCounter(dir) }),
    });
    try {
      const query = `/retry?uuid=shared-${process.pid}&succeedAfter=2&responseCode=503`;
      const first = await http1(`http://127.0.0.3:${b1.port}`, query);
      const second = await http1(`http://127.0.0.4:${b2.port}`, query);
      const third = await http1(`http://127.0.0.3:${b1.port}`, query);
      expect([first.status, second.status, third.status]).toEqual([503, 503, 200]);
      expect(json(third)['attempt']).toBe(3);
      const counted = json(
        await http1(`http://127.0.0.4:${b2.port}`, `/__attempts?uuid=shared-${process.pid}`),
      );
      expect(counted['count']).toBe(3);
    } finally {
      await Promise.all([b1.close(), b2.close()]);
    }
  });
});
