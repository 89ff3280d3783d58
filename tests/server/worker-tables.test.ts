// What `steadfast serve --workers N` sends each ext_proc worker when the configuration
// changes: the routes the worker does not hold, the others as their positions; a worker that
// missed a table refuses the next one, and the table sent whole then brings it back. The
// worker's resolver answers as one compiled from the whole table.
import { describe, expect, it } from 'vitest';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import { WorkerTableReceiver, WorkerTableSender } from '../../extproc/src/server/worker-tables.js';
import { baseObjectsYaml, manyRoutes, routesYaml } from '../e2e/support/attach-config.js';

const base = { path: 'base.yaml', text: baseObjectsYaml([{ address: '127.0.0.2' }], 8080) };
const routes = (edit?: string) => {
  const text = routesYaml(manyRoutes(30));
  return { path: 'routes.yaml', text: edit === undefined ? text : text.replace("'/r/7'", `'${edit}'`) };
};
const probes = Array.from({ length: 30 }, (_, i) => [
  { method: 'GET', authority: `svc-${i}.example`, path: `/r/${i}/x` },
  { method: 'GET', authority: `svc-${i}.example`, path: `/edited/x` },
]).flat();

describe('policy tables for ext_proc workers', () => {
  it("sends only the routes a worker does not hold, and the worker's resolver answers as a fresh one", () => {
    const sender = new WorkerTableSender();
    const receiver = new WorkerTableReceiver();
    const first = compileSnapshot([base, routes()]);
    const m1 = sender.message(first, 1);
    expect(m1.table.routes.items.every((r) => typeof r === 'string')).toBe(true);
    receiver.apply(m1);
    // Routes whose JSON the worker holds cross as positions, whatever objects they are here.
    const edited = compileSnapshot([base, routes('/edited')]);
    const m2 = sender.message(edited, 2);
    const texts = m2.table.routes.items.filter((r): r is string => typeof r === 'string');
    expect(texts.map((t) => (JSON.parse(t) as { name: string }).name)).toEqual(['route-7']);
    expect(m2.answerGeneration).toBe(edited.resolver.generation);
    const resolver = receiver.apply(m2);
    const fresh = compileResolver(edited.ir);
    expect(resolver.generation).toBe(fresh.generation);
    expect(resolver.size).toBe(fresh.size);
    for (const p of probes)
      expect(resolver.resolve(p)?.token, p.authority + p.path).toBe(fresh.resolve(p)?.token);
    expect(resolver.resolve({ method: 'GET', authority: 'svc-7.example', path: '/edited/x' })).toBeDefined();
  });

  it('a worker that missed a table refuses the next, and takes it sent whole', () => {
    const sender = new WorkerTableSender();
    const receiver = new WorkerTableReceiver();
    const first = compileSnapshot([base, routes()]);
    const edited = compileSnapshot([base, routes('/edited')]);
    receiver.apply(sender.message(first, 1));
    // Table 2 is lost on the way; table 3 refers to it.
    sender.message(edited, 2);
    const m3 = sender.message(first, 3);
    expect(m3.table.routes.base).toBe(2);
    expect(() => receiver.apply(m3)).toThrow(/not held/);
    expect(sender.sentWhole).toBe(false);
    const whole = sender.message(first, 3, true);
    expect(whole.table.routes.base).toBeUndefined();
    // A whole table refused is not sent again (the primary reads this before resending).
    expect(sender.sentWhole).toBe(true);
    const resolver = receiver.apply(whole);
    for (const p of probes) expect(resolver.resolve(p)?.token).toBe(first.resolver.resolve(p)?.token);
  });
});
