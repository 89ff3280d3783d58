// The file provider: what it hands over, and which file events count as a change.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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
