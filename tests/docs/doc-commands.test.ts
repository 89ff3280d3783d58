// Every documented command runs as written: each ```sh block of README.md and docs/*.md is
// run with bash from the repository root, in order, and must exit 0. An HTML comment on the
// line before a block changes that, and says why:
//
//   <!-- doc-test: skip (reason) -->            not run (a Kubernetes apply, Docker, the bench)
//   <!-- doc-test: background until /REGEX/ --> started and left running (a server) until its
//                                                output matches REGEX; stopped (SIGINT to its
//                                                process group) after the file's last block
//   ... run: COMMAND -->                         a background block run as COMMAND instead
//                                                (`npm install && npm start` → `npm start`:
//                                                CI has installed already)
//
// Variables a block exports reach the blocks after it in the same file.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

interface Block {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly mode:
    { kind: 'run' } | { kind: 'skip'; reason: string } | { kind: 'background'; until: RegExp; run?: string };
}

const MARKER = /^<!-- doc-test: (.*) -->$/;

export function shellBlocks(file: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(sh|bash|shell)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    let prev = start - 1;
    while (prev >= 0 && (lines[prev] ?? '').trim() === '') prev--;
    const marker = MARKER.exec((lines[prev] ?? '').trim())?.[1];
    let mode: Block['mode'] = { kind: 'run' };
    if (marker !== undefined) {
      const skip = /^skip \((.+)\)$/.exec(marker);
      const bg = /^background until \/(.+)\/(?: run: (.+))?$/.exec(marker);
      if (skip?.[1]) mode = { kind: 'skip', reason: skip[1] };
      else if (bg?.[1])
        mode = { kind: 'background', until: new RegExp(bg[1]), ...(bg[2] ? { run: bg[2] } : {}) };
      else throw new Error(`${file}:${prev + 1}: unreadable doc-test marker: ${marker}`);
    }
    blocks.push({ file, line: start + 1, text: body.join('\n'), mode });
  }
  return blocks;
}

const files = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const state = mkdtempSync(join(tmpdir(), 'steadfast-doc-test-'));
afterAll(() => rmSync(state, { recursive: true, force: true }));

/** Runs a block in its own process group; `env` carries the exported variables between blocks. */
function start(script: string, envFile: string): { child: ChildProcess; output: () => string } {
  const wrapped = `set -eo pipefail\n[ -f '${envFile}' ] && source '${envFile}'\n${script}\nexport -p > '${envFile}.next'\n`;
  const child = spawn('bash', ['-c', wrapped], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

function exited(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode ?? 128);
    else child.once('exit', (code) => resolve(code ?? 128));
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

for (const file of files) {
  const blocks = shellBlocks(file, readFileSync(join(REPO_ROOT, file), 'utf8'));
  if (blocks.length === 0) continue;
  describe(file, () => {
    const envFile = join(state, file.replaceAll('/', '_'));
    const background: ChildProcess[] = [];
    afterAll(async () => {
      for (const child of background.reverse()) {
        killGroup(child, 'SIGINT');
        const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 20_000);
        await exited(child);
        clearTimeout(timer);
      }
    }, 60_000);

    for (const block of blocks) {
      const name = `${file}:${block.line} ${block.text.split('\n')[0] ?? ''}`;
      if (block.mode.kind === 'skip') {
        // Reported as skipped, with its reason, so the run's summary counts what was not run.
        it.skip(`${name} — not run: ${block.mode.reason}`, () => undefined);
        continue;
      }
      if (block.mode.kind === 'background') {
        const { until, run } = block.mode;
        it(`${name} — runs in the background until ${until}`, async () => {
          const { child, output } = start(run ?? block.text, envFile);
          background.push(child);
          const deadline = Date.now() + 240_000;
          while (!until.test(output())) {
            if (child.exitCode !== null)
              throw new Error(`exited ${child.exitCode} before ${until}:\n${output()}`);
            if (Date.now() > deadline) throw new Error(`no ${until} within 240 s:\n${output()}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        }, 250_000);
        continue;
      }
      it(
        name,
        async () => {
          const { child, output } = start(block.text, envFile);
          const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 150_000);
          const code = await exited(child);
          clearTimeout(timer);
          // Anything a block left running (none should) goes with it.
          killGroup(child, 'SIGKILL');
          expect(code, output()).toBe(0);
          // Only the variables exported by name; bash's own read-only ones would not source.
          const exported = readFileSync(`${envFile}.next`, 'utf8')
            .split('\n')
            .filter((l) => /^declare -x [A-Za-z_][A-Za-z0-9_]*=/.test(l));
          writeFileSync(envFile, `${exported.join('\n')}\n`);
        },
        160_000,
      );
    }
  });
}
