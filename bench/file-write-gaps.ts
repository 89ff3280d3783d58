// `node dist/bench/file-write-gaps.js [runs]`: how far apart the file events of one save come,
// for the writers people use on a configuration file, as the file provider watches them (one
// fs.watch per directory). Each writer saves bench:scale's 10,000-route file (3.4 MB) over the
// last one, `runs` times, in a process of its own; this process times every event of the file
// and prints, per writer, the events of one save, the span from its first event to its last and
// the largest gap between two of them (median and largest over the runs), apart for gaps after
// an event that found the file empty (a truncation, before the first write) and gaps after one
// that found it partly written (holding less than the save's text; once it holds all of it, as
// before an editor's fsync and change of attributes, a gap does not matter). The file provider's settle must outlast the largest gap of a
// writer that writes in place, or it may read half a file; a save by rename is one event and
// never half a file. Numbers, never assertions: they
// depend on the machine and its load (printed).
import { spawn } from 'node:child_process';
import { type FSWatcher, mkdtempSync, rmSync, statSync, watch, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './round-stats.js';
import { routesYaml } from './scale-config.js';
import { sleep } from './scale-process.js';

const runs = Number(process.argv[2] ?? 10);

/** A writer, as the command that saves `src`'s text (with a changing last line) over `dst`. */
interface Writer {
  readonly name: string;
  readonly argv: (src: string, dst: string, dir: string) => string[];
}

const sh = (script: string): string[] => ['sh', '-c', script];
const WRITERS: readonly Writer[] = [
  { name: 'cp over the file', argv: (src, dst) => ['cp', src, dst] },
  { name: 'shell redirect (cat >)', argv: (src, dst) => sh(`cat '${src}' > '${dst}'`) },
  {
    name: 'dd, 4 KiB blocks',
    argv: (src, dst) => ['dd', `if=${src}`, `of=${dst}`, 'bs=4096', 'status=none'],
  },
  {
    name: 'node fs.writeFile',
    argv: (src, dst) => [
      process.execPath,
      '-e',
      `const fs=require('fs');fs.writeFile(${JSON.stringify(dst)},fs.readFileSync(${JSON.stringify(src)},'utf8'),()=>{})`,
    ],
  },
  {
    name: 'python write()',
    argv: (src, dst) => [
      'python3',
      '-c',
      `open(${JSON.stringify(dst)},'w').write(open(${JSON.stringify(src)}).read())`,
    ],
  },
  {
    name: 'vim :w (default options)',
    argv: (src, dst) => [
      'vim',
      '-Es',
      '-u',
      'NONE',
      '-c',
      '%d',
      '-c',
      `r ${src}`,
      '-c',
      '1d',
      '-c',
      'w!',
      '-c',
      'q!',
      dst,
    ],
  },
  { name: 'sed -i', argv: (_src, dst) => ['sed', '-i', '$s/$/ /', dst] },
  {
    name: 'write a temporary file, then mv',
    argv: (src, dst, dir) => sh(`cp '${src}' '${join(dir, '.tmp')}' && mv '${join(dir, '.tmp')}' '${dst}'`),
  },
];

function run(argv: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = argv as [string, ...string[]];
    const child = spawn(cmd, args, { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}

/** A file event: when it came, and the file's size when it was seen (-1: no file). */
interface Event {
  readonly at: number;
  readonly size: number;
}

/** One save's gaps between events (ms), after an event that found the file empty and after one that found it partly written. */
interface Save {
  readonly events: number;
  readonly span: number;
  readonly empty: number[];
  readonly partial: number[];
}

async function oneSave(writer: Writer, dir: string, k: number, events: Event[]): Promise<Save> {
  const src = join(dir, `src-${k % 2}.yaml`);
  events.length = 0;
  await run(writer.argv(src, join(dir, 'routes.yaml'), dir));
  // Events still on their way after the writer exits.
  await sleep(300);
  const whole = statSync(src).size;
  const save: Save = { events: events.length, span: 0, empty: [], partial: [] };
  for (let i = 1; i < events.length; i++) {
    const [a, b] = [events[i - 1] as Event, events[i] as Event];
    if (a.size === 0) save.empty.push(b.at - a.at);
    else if (a.size > 0 && a.size < whole) save.partial.push(b.at - a.at);
  }
  return { ...save, span: (events[events.length - 1]?.at ?? 0) - (events[0]?.at ?? 0) };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-write-gaps-'));
  const events: Event[] = [];
  let watcher: FSWatcher | undefined;
  try {
    for (const k of [0, 1]) writeFileSync(join(dir, `src-${k}.yaml`), routesYaml(0, 10_000) + `# ${k}\n`);
    writeFileSync(join(dir, 'routes.yaml'), routesYaml(0, 10_000));
    watcher = watch(dir, (_event, file) => {
      if (file === 'routes.yaml') events.push({ at: performance.now(), size: sizeOf(join(dir, file)) });
    });
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; ${runs} saves each`,
    );
    console.log(
      'writer | events per save (min-max) | span first-last event | largest gap after the file was empty | largest gap after it was partly written (ms, median / max) | saves with such a gap over 15 / 50 ms',
    );
    for (const writer of WRITERS) {
      const saves: Save[] = [];
      for (let k = 0; k < runs; k++) saves.push(await oneSave(writer, dir, k, events));
      const counts = saves.map((s) => s.events);
      const fmt = (xs: number[]) => `${(median(xs) ?? 0).toFixed(1)} / ${Math.max(0, ...xs).toFixed(1)}`;
      const largest = (gaps: (s: Save) => number[]) => saves.map((s) => Math.max(0, ...gaps(s)));
      const partial = largest((s) => s.partial);
      const over = (ms: number) => partial.filter((g) => g > ms).length;
      console.log(
        `${writer.name} | ${Math.min(...counts)}-${Math.max(...counts)} | ${fmt(saves.map((s) => s.span))} | ` +
          `${fmt(largest((s) => s.empty))} | ${fmt(partial)} | ${over(15)} / ${over(50)}`,
      );
    }
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    watcher?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
