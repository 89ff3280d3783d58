// Golden tests for the IR, the stage every consumer reads: each tests/envoy/testdata/*.in.yaml
// is compiled and its IR written out as data — per port, the virtual hosts with each match's
// decided routes; each rule's router plan and action; the shared clusters — and compared with
// testdata/*.ir.yaml here. A change to what gateway mode generates shows first as a change to
// what the IR decided. UPDATE_GOLDEN=1 rewrites the outputs and deletes stale ones.
import { existsSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { GatewayIr } from '../../extproc/src/ir/gateway-ir.js';
import type { IrRule } from '../../extproc/src/ir/rule-action.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';

const here = dirname(fileURLToPath(import.meta.url));
const inputDir = join(here, '..', 'envoy', 'testdata');
const dir = join(here, 'testdata');
const update = process.env['UPDATE_GOLDEN'] === '1';
const inputs = readdirSync(inputDir)
  .filter((f) => f.endsWith('.in.yaml'))
  .sort();

/** The IR as plain data: rules once, by id, and entries naming them. */
function irData(ir: GatewayIr): unknown {
  const rules = new Map<string, IrRule>();
  const ports = ir.ports.map((p) => ({
    port: p.port,
    protocol: p.protocol,
    name: p.name,
    listeners: p.listeners.map((l) => l.id),
    routes: p.routes.map((r) => ({ route: r.route.id, hostnames: r.route.hostnames })),
    virtualHosts: p.virtualHosts.map((h) => ({
      hostname: h.hostname,
      countsAttempts: h.countsAttempts,
      entries: h.entries.map((e) => {
        rules.set(e.rule.id, e.rule);
        // Which of the plan's retries the route takes: the plan is written once, with its rule.
        const route = {
          name: e.route.name,
          retry: e.route.retry === e.rule.plan.idempotent ? 'idempotent' : 'other',
          resetByMethod: e.route.resetByMethod,
        };
        return { match: e.match.id, rule: e.rule.id, route };
      }),
    })),
    warnings: p.warnings,
  }));
  return {
    ports,
    rules: Object.fromEntries([...rules].sort(([a], [b]) => a.localeCompare(b))),
    clusters: ir.clusters,
    warnings: ir.warnings,
    headersRead: ir.headersRead,
  };
}

describe('IR golden: ../envoy/testdata/*.in.yaml → testdata/*.ir.yaml', () => {
  it('has inputs', () => expect(inputs.length).toBeGreaterThan(0));

  it('has no stale outputs', () => {
    const stale = readdirSync(dir)
      .filter((f) => f.endsWith('.ir.yaml'))
      .filter((f) => !inputs.includes(f.replace(/\.ir\.yaml$/, '.in.yaml')));
    if (update) for (const f of stale) unlinkSync(join(dir, f));
    else expect(stale, 'outputs without an input (run with UPDATE_GOLDEN=1 to delete)').toEqual([]);
  });

  for (const input of inputs) {
    const name = input.replace(/\.in\.yaml$/, '');
    const outPath = join(dir, `${name}.ir.yaml`);
    it(`${name}: matches its golden IR`, () => {
      const snap = compileSnapshot([{ path: input, text: readFileSync(join(inputDir, input), 'utf8') }]);
      const got = `# The IR of ../../envoy/testdata/${input} (tests/ir/ir-golden.test.ts).\n${stringify(irData(snap.ir), { lineWidth: 0, aliasDuplicateObjects: false })}`;
      if (update) {
        writeFileSync(outPath, got);
        return;
      }
      if (!existsSync(outPath)) throw new Error(`${outPath} is missing; run with UPDATE_GOLDEN=1`);
      expect(got).toBe(readFileSync(outPath, 'utf8'));
    });
  }
});
