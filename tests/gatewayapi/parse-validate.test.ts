// Loading: located objects and errors, defaults, unknown kinds, broken YAML.
import { describe, expect, it } from 'vitest';
import { DIAGNOSTIC_CODES } from '../../extproc/src/gatewayapi/codes.js';
import { formatDiagnostic } from '../../extproc/src/gatewayapi/diagnostic.js';
import { parseConfigFiles } from '../../extproc/src/gatewayapi/parse.js';
import { validateObjects } from '../../extproc/src/gatewayapi/validate.js';

const shop = `# a comment
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
spec:
  parentRefs:
    - name: gw
  rules:
    - backendRefs:
        - name: echo
          port: 80
    - retry:
        codes:
          - 600
`;

describe('parse and validate', () => {
  it('locates every error by file, line, object and field', () => {
    const parsed = parseConfigFiles([{ path: 'routes/shop.yaml', text: shop }]);
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.objects[0]?.source).toEqual({ file: 'routes/shop.yaml', line: 2 });
    const { diagnostics } = validateObjects(parsed.objects);
    expect(diagnostics.map(formatDiagnostic)).toEqual([
      'routes/shop.yaml:15 HTTPRoute default/shop spec.rules[1].retry.codes[0]: 600 is not in 400-599',
    ]);
    expect(diagnostics[0]?.code).toBe('out-of-range');
  });

  it('defaults the namespace to default and keeps explicit ones', () => {
    const parsed = parseConfigFiles([
      {
        path: 'a.yaml',
        text: 'apiVersion: v1\nkind: Service\nmetadata: { name: a }\n---\napiVersion: v1\nkind: Service\nmetadata: { name: b, namespace: team }\n',
      },
    ]);
    expect(parsed.objects.map((o) => `${o.namespace}/${o.name}`)).toEqual(['default/a', 'team/b']);
  });

  it('reports broken YAML with its line and still loads the other files and documents', () => {
    const parsed = parseConfigFiles([
      {
        path: 'bad.yaml',
        text: 'apiVersion: v1\nkind: Service\nmetadata: { name: x\n---\napiVersion: v1\nkind: Service\nmetadata: { name: y }\n',
      },
      { path: 'tabs.yaml', text: 'a:\n\t- b\n' },
      { path: 'good.yaml', text: 'apiVersion: v1\nkind: Service\nmetadata: { name: z }\n' },
    ]);
    expect(parsed.objects.map((o) => o.name)).toEqual(['y', 'z']);
    expect(parsed.diagnostics.map((d) => `${d.code} ${d.file}:${d.line}`)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^yaml-syntax bad\.yaml:[34]$/),
        expect.stringMatching(/^yaml-syntax tabs\.yaml:\d+$/),
      ]),
    );
  });

  it('reports unknown kinds and ignores them', () => {
    const parsed = parseConfigFiles([
      { path: 'x.yaml', text: 'apiVersion: example.com/v1\nkind: Widget\nmetadata: { name: w }\n' },
    ]);
    const v = validateObjects(parsed.objects);
    expect(v.objects).toEqual([]);
    expect(v.diagnostics.map(formatDiagnostic)).toEqual([
      'x.yaml:1: kind Widget (example.com/v1) is not read by steadfast; ignored',
    ]);
  });

  it('takes a kind named like an object property for an unknown kind, not a crash', () => {
    const names = ['toString', 'constructor', '__proto__', 'hasOwnProperty'];
    const parsed = parseConfigFiles([
      {
        path: 'x.yaml',
        text: names.map((k) => `apiVersion: v1\nkind: ${k}\nmetadata: { name: w }\n`).join('---\n'),
      },
    ]);
    const v = validateObjects(parsed.objects);
    expect(v.objects).toEqual([]);
    expect(v.diagnostics.map(formatDiagnostic)).toEqual(
      names.map((k, i) => `x.yaml:${1 + 4 * i}: kind ${k} (v1) is not read by steadfast; ignored`),
    );
  });

  it('never throws on odd input', () => {
    for (const text of [
      '',
      '---\n---\n',
      '42',
      'null',
      '[1, 2',
      'a: &a [*a]',
      '? [a]\n: b\n',
      'kind: 5\napiVersion: v1',
    ]) {
      expect(() => validateObjects(parseConfigFiles([{ path: 'odd.yaml', text }]).objects)).not.toThrow();
    }
  });

  it('has a documented meaning for every diagnostic code', () => {
    for (const [code, meaning] of Object.entries(DIAGNOSTIC_CODES)) {
      expect(code).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(meaning.length).toBeGreaterThan(10);
    }
  });
});
