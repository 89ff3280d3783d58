// The file provider: what it hands over, and which file events count as a change.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isLoadedFile } from '../../extproc/src/provider/config-files.js';
import { FileProvider } from '../../extproc/src/provider/file.js';

let provider: FileProvider | undefined;
let dir = '';
afterEach(() => {
  provider?.close();
  provider = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('FileProvider', () => {
  it('hands over every loaded file below the paths as documents, relative to the root', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    mkdirSync(join(dir, 'team'));
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, 'a.yaml'), 'a: 1\n');
    writeFileSync(join(dir, 'team', 'b.yml'), 'b: 1\n');
    writeFileSync(join(dir, 'team', 'c.json'), '{"c": 1}\n');
    writeFileSync(join(dir, 'notes.txt'), 'not configuration\n');
    writeFileSync(join(dir, '.hidden.yaml'), 'h: 1\n');
    writeFileSync(join(dir, '.git', 'd.yaml'), 'd: 1\n');
    provider = new FileProvider({ paths: [dir, join(dir, 'missing')] });
    const provided = await provider.read();
    expect(provided.documents.map((d) => d.path)).toEqual(['a.yaml', 'team/b.yml', 'team/c.json']);
    expect(provided.objects).toEqual([]);
    expect(provided.diagnostics).toMatchObject([{ code: 'io-error', file: join(dir, 'missing') }]);
  });

  it('loads *.yaml, *.yml and *.json, never hidden files', () => {
    expect(['a.yaml', 'b.YML', 'c.json'].map(isLoadedFile)).toEqual([true, true, true]);
    expect(
      ['notes.txt', 'a.yaml~', '.a.yaml.swp', '.a.yaml', '4913', 'gateway.log'].map(isLoadedFile),
    ).toEqual([false, false, false, false, false, false]);
  });

  it('says a change happened only for files it loads', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    writeFileSync(join(dir, 'a.yaml'), 'a: 1\n');
    provider = new FileProvider({ paths: [dir] });
    await provider.read();
    const changes: string[] = [];
    const first = new Promise<void>((resolve) =>
      provider?.watch((what) => {
        changes.push(what);
        resolve();
      }),
    );
    // Events arrive in the order the files were written: had any of these counted, it would come first.
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'notes.txt'), `line ${i}\n`);
    writeFileSync(join(dir, '.a.yaml.swp'), 'swap');
    writeFileSync(join(dir, 'gateway.log'), 'log line\n');
    writeFileSync(join(dir, 'b.yaml'), 'b: 1\n');
    await first;
    expect(changes[0]).toBe(join(dir, 'b.yaml'));
  });
});

describe('FileProvider and a file written in place', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports a file truncated empty when it is written, not before', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    const a = join(dir, 'a.yaml');
    writeFileSync(a, 'a: 1\n');
    provider = new FileProvider({ paths: [dir] });
    await provider.read();
    const changes: string[] = [];
    let seen: () => void = () => undefined;
    provider.watch((what) => {
      changes.push(what);
      seen();
    });
    // A writer in place truncates first; events come in order, so once b's is here a's was handled.
    const b = new Promise<void>((resolve) => (seen = resolve));
    writeFileSync(a, '');
    writeFileSync(join(dir, 'b.yaml'), 'b: 1\n');
    await b;
    expect(changes).not.toContain(a);
    // Its write reports it, and nothing more comes of the truncation.
    writeFileSync(a, 'a: 2\n');
    const last = new Promise<void>(
      (resolve) => (seen = () => changes.at(-1) === join(dir, 'c.yaml') && resolve()),
    );
    writeFileSync(join(dir, 'c.yaml'), 'c: 1\n');
    await last;
    expect(changes.filter((c) => c !== join(dir, 'b.yaml'))[0]).toBe(a);
    const ofA = () => changes.filter((c) => c === a).length;
    const count = ofA();
    await vi.advanceTimersByTimeAsync(2000);
    expect(ofA()).toBe(count);
  });

  it('reports a file emptied on purpose 1 s after its event', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    writeFileSync(join(dir, 'a.yaml'), 'a: 1\n');
    provider = new FileProvider({ paths: [dir] });
    await provider.read();
    const changes: string[] = [];
    let seen: () => void = () => undefined;
    provider.watch((what) => {
      changes.push(what);
      seen();
    });
    const a = join(dir, 'a.yaml');
    const b = new Promise<void>((resolve) => (seen = resolve));
    writeFileSync(a, '');
    // Events come in order: once b's is here, a's was handled (and held).
    writeFileSync(join(dir, 'b.yaml'), 'b: 1\n');
    await b;
    const ofA = () => changes.filter((c) => c === a).length;
    expect(ofA()).toBe(0);
    await vi.advanceTimersByTimeAsync(999);
    expect(ofA()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(ofA()).toBe(1);
  });
});
