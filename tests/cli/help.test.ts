// A CLI that explains itself: --version, and a --help for every command that describes each
// of its options with its default, in one style, written from the table the parser reads (each
// command's module loaded when asked for).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../extproc/src/cli/commands/index.js';
import { run } from '../../extproc/src/cli/main.js';

async function cli(...args: string[]) {
  let out = '';
  let err = '';
  const code = await run(args, { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) });
  return { code, out, err };
}

describe('steadfast --version', () => {
  it('prints the package version for --version and -v', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await cli('--version')).toEqual({ code: 0, out: `steadfast ${version}\n`, err: '' });
    expect((await cli('-v')).out).toBe(`steadfast ${version}\n`);
  });
});

describe('steadfast <command> --help', () => {
  it('lists every command, the global options and the exit codes', async () => {
    const r = await cli('--help');
    expect(r.code).toBe(0);
    for (const c of commands) expect(r.out).toContain(`  ${c.name.padEnd(14)} ${c.summary}`);
    expect(r.out).toContain('-v, --version');
    expect(r.out).toContain('3 a port cannot be bound');
  });

  for (const c of commands) {
    it(`${c.name}: describes each option with its default`, async () => {
      const command = await c.load();
      const r = await cli(c.name, '--help');
      expect(r.code).toBe(0);
      expect(r.out.startsWith(`usage: steadfast ${c.name}`)).toBe(true);
      expect(r.out).toContain(command.description.split('\n')[0]);
      const optionLines = r.out.split('\n').filter((l) => /^ {2}--/.test(l));
      expect(optionLines.map((l) => /^ {2}--([a-z-]+)/.exec(l)?.[1])).toEqual([
        ...Object.keys(command.flags),
        'help',
      ]);
      for (const line of optionLines.slice(0, -1)) {
        // One style: `  --name VALUE  description (default: …)` or `(required)` for a required one.
        expect(line).toMatch(/^ {2}--[a-z-]+( \S+)? {2,}[A-Za-z"'`(].*(\(default: .+\)|\(required\))/);
      }
    });
  }

  it('spells each flag one way across commands (old spellings only as aliases)', async () => {
    const loaded = await Promise.all(commands.map((c) => c.load()));
    const seen = new Map<string, string>();
    for (const c of loaded) {
      for (const [name, def] of Object.entries(c.flags)) {
        for (const alias of def.aliases ?? []) {
          expect(Object.keys(c.flags)).not.toContain(alias);
          seen.set(alias, name);
        }
      }
    }
    for (const c of loaded) for (const name of Object.keys(c.flags)) expect(seen.has(name)).toBe(false);
    expect(seen).toEqual(
      new Map([
        ['session-keys', 'session-key-file'],
        ['grpc-address', 'ext-proc-address'],
      ]),
    );
  });
});

describe('old spellings', () => {
  it('still work, with one deprecation line', async () => {
    const r = await cli('validate', '--config', 'examples/quickstart', '--output', 'json');
    expect(r.code).toBe(0);
    const old = await cli('envoy-config', 'examples/quickstart', '--session-keys', '/nonexistent/keys');
    expect(old.err).toContain(
      'steadfast envoy-config: warning: --session-keys is deprecated; use --session-key-file',
    );
    expect(old.err).toContain('cannot read the session key file /nonexistent/keys');
  });

  it('validate and resolve take --config like every other command, and paths without it', async () => {
    const a = await cli('validate', '--config', 'examples/quickstart');
    const b = await cli('validate', 'examples/quickstart');
    expect(a).toEqual(b);
    expect(a.code).toBe(0);
  });
});
