// The fast way of reading YAML (js-yaml values, lines found lazily: yaml-fast.ts) must give
// exactly what the `yaml` package's full syntax tree gives: the same objects, bodies,
// sources and diagnostics, and the same line for every field. Checked on every YAML file
// of the project and on documents written to find where the two libraries differ.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ConfigFile, type ParseResult, parseConfigFiles } from '../../extproc/src/gatewayapi/parse.js';
import { loadDocumentsFast } from '../../extproc/src/gatewayapi/yaml-fast.js';
import { documentPieces } from '../../extproc/src/pipeline/file-pieces.js';
import type { FieldPath } from '../../extproc/src/gatewayapi/diagnostic.js';

/** Every path into a value, containers included. */
function paths(value: unknown, prefix: FieldPath = []): FieldPath[] {
  const out: FieldPath[] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  }
  return out;
}

function view(result: ParseResult) {
  return {
    diagnostics: result.diagnostics,
    objects: result.objects.map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: o.namespace,
      name: o.name,
      body: o.body,
      source: o.source,
      // Every field, and paths that are not there (the line of the nearest present ancestor).
      lines: [...paths(o.body), ['spec', 'absent'], ['spec', 'rules', 99, 'x'], ['nothing']].map((p) => [
        p.join('.'),
        o.lineOf(p),
      ]),
    })),
  };
}

function expectSame(file: ConfigFile): void {
  const fast = view(parseConfigFiles([file]));
  const slow = view(parseConfigFiles([file], { fast: false }));
  expect(fast).toEqual(slow);
}

const projectYaml = execFileSync('git', ['ls-files', '*.yaml', '*.yml'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '');

describe('reading YAML the fast way', () => {
  it('gives what the full syntax tree gives for every YAML file of the project', () => {
    expect(projectYaml.length).toBeGreaterThan(50);
    let fastFiles = 0;
    for (const path of projectYaml) {
      const text = readFileSync(path, 'utf8');
      if (loadDocumentsFast(text)) fastFiles++;
      expectSame({ path, text });
    }
    // Most of them go the fast way: if none did, this test would compare the slow way with itself.
    expect(fastFiles).toBeGreaterThan(projectYaml.length / 2);
  });

  const route = (extra: string): string => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
  namespace: team-a
spec:
  hostnames: [a.example]
${extra}`;

  const cases: Record<string, string> = {
    'plain scalars of every core type': route(
      [
        '  x:',
        ...[
          '0777',
          '1_000',
          '+1',
          '.5',
          '+.5',
          '-.5',
          '1e3',
          '1.0e+3',
          '0x1f',
          '0o17',
          '0o8',
          '0xG',
          '0b101',
          '~',
          'null',
          'Null',
          'NULL',
          'nULL',
          'true',
          'True',
          'TRUE',
          'tRUE',
          'yes',
          'no',
          'on',
          'off',
          '.inf',
          '-.Inf',
          '+.INF',
          '.NaN',
          '.nan',
          '2001-12-14',
          '1:20',
          '-0',
          '0.',
          '1.',
          '1e',
          'e3',
          '09',
          '0.1.2',
          '_1',
          '012345678901234567890',
          '"1"',
          "'true'",
          '=',
          '<<',
        ].map((v, i) => `    k${i}: ${v}`),
      ].join('\n'),
    ),
    'an empty value and a null key': route('  x:\n    empty:\n    ~: 1\n    "": 2'),
    'a __proto__ key': route('  x:\n    __proto__: { polluted: 1 }\n    constructor: 2'),
    'merge keys stay plain keys': route('  x:\n    <<: { a: 1 }\n    b: 2'),
    'block and flow collections, block scalars': route(
      '  rules:\n    - matches: [{ path: { type: PathPrefix, value: /a } }, {method: GET}]\n' +
        '      note: |\n        two\n         lines\n      folded: >-\n        one\n        line\n',
    ),
    'comments, directives and document markers': `%YAML 1.2\n--- # first\n# a comment\n${route('')}...\n---\n\n---\n# only a comment\n---\n${route('  x: 1')}`,
    'content on the --- line': `--- {apiVersion: v1, kind: Service, metadata: {name: s}}\n--- {apiVersion: v1, kind: Service, metadata: {name: t}}\n`,
    'CRLF line endings': route('  x:\n    a: 1\n    b: [1, 2]\n').replace(/\n/g, '\r\n'),
    'a byte order mark': `\uFEFF${route('  x:\n    a: 1\n')}---\n${route('  y: 2\n')}`,
    'escapes in quoted scalars': route("  x: \"\\u00e9\\x41\\t\\n\"\n  y: 'it''s'"),
    'anchors and aliases (read the slow way)': route('  a: &x { k: v }\n  b: *x\n  c: &s scalar\n  d: *s'),
    'explicit tags (read the slow way)': route('  a: !!str 12\n  b: !custom 1\n  c: !!float 3'),
    'complex keys (read the slow way)': route('  x:\n    ? [a, b]\n    : 1'),
    'a syntax error after good documents': `${route('')}---\n${route('  x: [unclosed\n')}---\n${route('')}`,
    'duplicate keys': route('  x: 1\n  x: 2'),
    'a tab in indentation': route('  x:\n\t- a'),
    'not a mapping': '- a\n- b\n---\njust text\n---\n42\n',
    'a mapping without kind': 'apiVersion: v1\nmetadata: {name: x}\n',
    'deep nesting': route(`  x: ${'['.repeat(200)}1${']'.repeat(200)}`),
    'an alias bomb': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: bomb}',
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    ].join('\n'),
    'an empty file': '',
    'only comments': '# nothing here\n',
  };

  for (const [name, text] of Object.entries(cases)) {
    it(`gives what the full syntax tree gives: ${name}`, () => expectSame({ path: 'case.yaml', text }));
  }

  it('reads ordinary files the fast way, and what the libraries could read differently the slow way', () => {
    expect(loadDocumentsFast(cases['plain scalars of every core type'] as string)).toBeDefined();
    expect(loadDocumentsFast(cases['CRLF line endings'] as string)).toBeDefined();
    expect(loadDocumentsFast(cases['a byte order mark'] as string)).toBeDefined();
    for (const slow of [
      'anchors and aliases (read the slow way)',
      'explicit tags (read the slow way)',
      'complex keys (read the slow way)',
      'a syntax error after good documents',
      'duplicate keys',
      'an alias bomb',
    ]) {
      expect(loadDocumentsFast(cases[slow] as string), slow).toBeUndefined();
    }
  });

  it('says the lines the whole file says for a piece of it parsed with the lines before it, both ways', () => {
    // The incremental compiler parses a file's documents one by one, each where it stands.
    const text = [
      cases['block and flow collections, block scalars'],
      cases['CRLF line endings'],
      route('  a: &x 1\n  b: *x\n'),
    ]
      .map((doc) => `# before\n${doc as string}`)
      .join('---\n');
    for (const fast of [true, false]) {
      const whole = view(parseConfigFiles([{ path: 'p.yaml', text }], { fast }));
      const pieces = (documentPieces(text) ?? []).map((piece) =>
        view(
          parseConfigFiles([{ path: 'p.yaml', text: piece.text }], { fast, linesBefore: piece.linesBefore }),
        ),
      );
      expect(pieces).toHaveLength(3);
      expect(pieces.flatMap((p) => p.objects)).toEqual(whole.objects);
      expect(pieces.flatMap((p) => p.diagnostics)).toEqual(whole.diagnostics);
    }
  });

  it('locates a field of the 500th document of a large file without reading the others again', () => {
    const docs = Array.from({ length: 1000 }, (_, i) => route(`  rules:\n    - retry: { attempts: ${i} }\n`));
    const text = docs.join('---\n');
    const { objects } = parseConfigFiles([{ path: 'big.yaml', text }]);
    const o = objects[500];
    const slow = parseConfigFiles([{ path: 'big.yaml', text }], { fast: false }).objects[500];
    expect(o?.source).toEqual(slow?.source);
    expect(o?.lineOf(['spec', 'rules', 0, 'retry', 'attempts'])).toBe(
      slow?.lineOf(['spec', 'rules', 0, 'retry', 'attempts']),
    );
    expect(o?.lineOf(['spec', 'rules', 0, 'retry', 'attempts'])).toBe(500 * 10 + 9);
  });
});
