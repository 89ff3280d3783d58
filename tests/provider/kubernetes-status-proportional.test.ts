// A generation checks only the objects whose computed status changed; what else can move —
// an object someone else changed, a failed write, a new holder of the Lease — is queued by its
// own path. Seeded random steps against the same steps with every object checked each
// generation (the writer's lead(), which checks everything) hold the two to the same writes.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { statusFor } from '../../extproc/src/provider/kubernetes/status-writer.js';
import type { KubeObject } from '../../extproc/src/provider/kubernetes/reflector.js';
import type { Condition, ObjectStatus } from '../../extproc/src/translate/status.js';
import { pick, rng } from '../resolve/random-table.js';
import { GATEWAY, OTHER_CONTROLLER, ROUTE, StatusCluster, keyOf, otherEntry } from './status-cluster.js';
import { canonical } from '../support/canonical-json.js';

const OURS = 'steadfast.dev/gateway-controller';
const owns = (namespace: string, name: string) => namespace === 'default' && name === 'gw';
const gwRef = (name: string) => ({
  group: 'gateway.networking.k8s.io',
  kind: 'Gateway',
  namespace: 'default',
  name,
});

/** What the compiler makes of a route, in the few ways that matter here. */
interface RouteModel {
  present: boolean;
  /** gw: steadfast's Gateway; both: and a Gateway of another class; mesh: a Service only; none: no status at all. */
  attach: 'gw' | 'both' | 'mesh' | 'none';
  accepted: 'True' | 'False';
  note: number;
  /** The generation the compiler last saw. */
  generation: number;
}

const condition = (type: string, status: 'True' | 'False', message: string, gen?: number): Condition => ({
  type,
  status,
  reason: status === 'True' ? 'Accepted' : 'NotAllowedByListeners',
  message,
  ...(gen !== undefined ? { observedGeneration: gen } : {}),
});

function routeStatus(name: string, m: RouteModel): ObjectStatus | undefined {
  if (!m.present || m.attach === 'none') return undefined;
  const refs =
    m.attach === 'mesh'
      ? [{ group: '', kind: 'Service', namespace: 'default', name: 'svc' }]
      : m.attach === 'both'
        ? [gwRef('gw'), gwRef('foreign')]
        : [gwRef('gw')];
  const parents = refs.map((parentRef) => ({
    parentRef,
    controllerName: OURS,
    // Accepted carries the compiler's generation, ResolvedRefs takes the object's.
    conditions: [
      condition('Accepted', m.accepted, `note ${m.note}`, m.generation),
      condition('ResolvedRefs', 'True', 'resolved'),
    ],
  }));
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: 'default', name },
    errors: [],
    status: { parents },
  };
}

function gatewayStatus(name: string, attached: number): ObjectStatus {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { namespace: 'default', name },
    errors: [],
    status: {
      conditions: [condition('Accepted', 'True', 'accepted')],
      listeners: [
        {
          name: 'http',
          supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }],
          attachedRoutes: attached,
          conditions: [condition('Programmed', 'True', 'programmed')],
        },
      ],
    },
  };
}

/** The compiler's statuses, each the same object as last time while its text is the same. */
class Compiler {
  private last = new Map<string, { text: string; status: ObjectStatus }>();

  compile(models: readonly RouteModel[]): Map<string, ObjectStatus> {
    const statuses: ObjectStatus[] = models.flatMap((m, i) => routeStatus(`r${i}`, m) ?? []);
    const attached = models.filter((m) => m.present && (m.attach === 'gw' || m.attach === 'both')).length;
    statuses.push(gatewayStatus('gw', attached), gatewayStatus('foreign', 0));
    const next = new Map<string, { text: string; status: ObjectStatus }>();
    for (const s of statuses) {
      const key = `${s.kind}/${s.metadata.namespace ?? ''}/${s.metadata.name}`;
      const text = JSON.stringify(s);
      const before = this.last.get(key);
      next.set(key, before?.text === text ? before : { text, status: s });
    }
    this.last = next;
    return new Map([...next].map(([k, v]) => [k, v.status]));
  }
}

const routeObject = (i: number, generation = 1): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { namespace: 'default', name: `r${i}`, generation },
  spec: { parentRefs: [{ name: 'gw' }] },
});

const gatewayObject = (name: string): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { namespace: 'default', name, generation: 1 },
  spec: { gatewayClassName: name === 'gw' ? 'steadfast' : 'other' },
});

/** What the API server holds that a writer decides: every object's generation and status. */
function held(c: StatusCluster): string {
  return canonical(
    Object.fromEntries(
      [...c.store].map(([k, o]) => [k, { generation: o.metadata?.generation, status: o.status ?? null }]),
    ),
  );
}

/** Every object the writer owns status on is as computed (nothing left to write). */
function inStep(c: StatusCluster, desired: ReadonlyMap<string, ObjectStatus>): string[] {
  const now = c.now.toISOString();
  return [...c.store]
    .filter(([key, o]) => {
      if (key === keyOf(GATEWAY, 'default', 'foreign')) return false;
      const which = key.startsWith('Gateway/') ? 'gateway' : 'route';
      return statusFor(which, o, desired.get(key)?.status, { ownsGateway: owns }, now) !== undefined;
    })
    .map(([key]) => key);
}

describe('a generation checks only what changed', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => vi.useRealTimers());

  it('looks up only the object whose computed status changed, among 1,000 in step', async () => {
    const c = new StatusCluster(owns);
    const models: RouteModel[] = Array.from({ length: 1000 }, () => ({
      present: true,
      attach: 'gw',
      accepted: 'True',
      note: 0,
      generation: 1,
    }));
    models.forEach((_, i) => c.put(ROUTE, routeObject(i)));
    c.put(GATEWAY, gatewayObject('gw'));
    const compiler = new Compiler();
    await c.settle();
    c.writer.report(compiler.compile(models), c.all());
    await c.settle();
    expect(c.puts).toBe(1001);

    const [lookups, puts] = [c.lookups, c.puts];
    c.writer.report(compiler.compile(models), c.all());
    await c.settle();
    expect([c.lookups - lookups, c.puts - puts]).toEqual([0, 0]);

    (models[7] as RouteModel).accepted = 'False';
    c.writer.report(compiler.compile(models), c.all());
    await c.settle();
    // Checked (and looked up again to write it), written, and its echo found in step.
    expect(c.puts - puts).toBe(1);
    expect(c.lookups - lookups).toBeLessThanOrEqual(3);
    expect(inStep(c, compiler.compile(models))).toEqual([]);
    await c.writer.close();
  });

  it("removes steadfast's entry from a route whose computed status is gone, keeping another controller's", async () => {
    const c = new StatusCluster(owns);
    const models: RouteModel[] = [{ present: true, attach: 'gw', accepted: 'True', note: 0, generation: 1 }];
    c.put(ROUTE, routeObject(0));
    c.put(GATEWAY, gatewayObject('gw'));
    const compiler = new Compiler();
    await c.settle();
    c.writer.report(compiler.compile(models), c.all());
    await c.settle();
    const key = keyOf(ROUTE, 'default', 'r0');
    const route = c.store.get(key) as KubeObject;
    const parents = (route.status as { parents: unknown[] }).parents;
    c.put(ROUTE, { ...route, status: { parents: [otherEntry(1), ...parents] } });
    await c.settle();

    (models[0] as RouteModel).attach = 'none';
    c.writer.report(compiler.compile(models), c.all());
    await c.settle();
    const left = (c.store.get(key)?.status as { parents: { controllerName: string }[] }).parents;
    expect(left.map((p) => p.controllerName)).toEqual([OTHER_CONTROLLER]);
    await c.writer.close();
  });

  it('writes the same as checking every object, through seeded random steps', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) await compareWithCheckingAll(seed, 120);
  });
});

/** One step of the world, applied alike to both clusters. */
type Step =
  | { op: 'compile'; changes: [number, Partial<RouteModel>][] }
  | { op: 'theirs'; route: number; clobber: 'drop' | 'flip' | 'keep' }
  | { op: 'spec'; route: number; compile: boolean }
  | { op: 'delete' | 'create'; route: number }
  | { op: 'trap'; route: number; trap: 'conflict' | 'fail' }
  | { op: 'lease' };

function randomStep(rand: () => number, routes: number): Step {
  const route = Math.floor(rand() * routes);
  const kind = pick(rand, [
    'compile',
    'compile',
    'theirs',
    'spec',
    'delete',
    'create',
    'trap',
    'lease',
  ] as const);
  if (kind === 'compile') {
    const changes = Array.from({ length: 1 + Math.floor(rand() * 3) }, (): [number, Partial<RouteModel>] => [
      Math.floor(rand() * routes),
      pick(rand, [
        { attach: pick(rand, ['gw', 'both', 'mesh', 'none'] as const) },
        { accepted: pick(rand, ['True', 'False'] as const) },
        { note: Math.floor(rand() * 3) },
      ]),
    ]);
    return { op: 'compile', changes };
  }
  if (kind === 'theirs')
    return { op: 'theirs', route, clobber: pick(rand, ['drop', 'flip', 'keep'] as const) };
  if (kind === 'spec') return { op: 'spec', route, compile: rand() < 0.5 };
  if (kind === 'trap') return { op: 'trap', route, trap: pick(rand, ['conflict', 'fail'] as const) };
  if (kind === 'lease') return { op: 'lease' };
  return { op: kind, route };
}

/** A cluster, its routes' models and its compiler; `checkAll` asks the writer to check everything each generation. */
class World {
  readonly c = new StatusCluster(owns);
  private readonly compiler = new Compiler();
  desired = new Map<string, ObjectStatus>();
  readonly models: RouteModel[];

  constructor(
    routes: number,
    private readonly checkAll: boolean,
  ) {
    this.models = Array.from({ length: routes }, () => ({
      present: true,
      attach: 'gw',
      accepted: 'True',
      note: 0,
      generation: 1,
    }));
    this.models.forEach((_, i) => this.c.put(ROUTE, routeObject(i)));
    this.c.put(GATEWAY, gatewayObject('gw'));
    this.c.put(GATEWAY, gatewayObject('foreign'));
  }

  report(): void {
    this.desired = this.compiler.compile(this.models);
    this.c.writer.report(this.desired, this.c.all());
    if (this.checkAll && this.c.gate.holds) this.c.writer.lead(this.c.all());
  }

  apply(step: Step): void {
    const key = 'route' in step ? keyOf(ROUTE, 'default', `r${step.route}`) : '';
    const model = 'route' in step ? (this.models[step.route] as RouteModel) : undefined;
    const stored = this.c.store.get(key);
    switch (step.op) {
      case 'compile':
        for (const [i, change] of step.changes) Object.assign(this.models[i] as RouteModel, change);
        return this.report();
      case 'theirs':
        return stored ? this.theirs(stored, step.clobber) : undefined;
      case 'spec':
        if (!stored || !model) return;
        this.c.put(ROUTE, {
          ...stored,
          metadata: { ...stored.metadata, generation: Number(stored.metadata?.generation) + 1 },
        });
        if (step.compile) {
          model.generation = Number(stored.metadata?.generation) + 1;
          this.report();
        }
        return;
      case 'delete':
        if (model) model.present = false;
        this.c.remove(ROUTE, key);
        return this.report();
      case 'create':
        if (stored || !model) return;
        Object.assign(model, { present: true, generation: 1 });
        this.c.put(ROUTE, routeObject(step.route));
        return this.report();
      case 'trap':
        this.c.traps.set(key, step.trap);
        if (model) model.note = (model.note + 1) % 3;
        return this.report();
      case 'lease':
        this.c.gate.holds = !this.c.gate.holds;
        if (this.c.gate.holds) this.c.writer.lead(this.c.all());
        else this.c.writer.follow();
    }
  }

  /** Another controller writes its entry, and drops steadfast's, flips its condition, or keeps it. */
  private theirs(stored: KubeObject, clobber: 'drop' | 'flip' | 'keep'): void {
    type Parent = { controllerName?: string; conditions?: { status?: string }[] };
    const parents = ((stored.status as { parents?: Parent[] } | undefined)?.parents ?? []).filter(
      (p) => p.controllerName !== OTHER_CONTROLLER,
    );
    const ours =
      clobber === 'drop'
        ? []
        : clobber === 'flip'
          ? parents.map((p) => ({
              ...p,
              conditions: (p.conditions ?? []).map((x) => ({
                ...x,
                status: x.status === 'True' ? 'False' : 'True',
              })),
            }))
          : parents;
    this.c.put(ROUTE, { ...stored, status: { parents: [...ours, otherEntry(parents.length)] } });
  }
}

async function compareWithCheckingAll(seed: number, steps: number): Promise<void> {
  const rand = rng(seed);
  const routes = 8;
  const worlds = [new World(routes, false), new World(routes, true)] as const;
  for (const w of worlds) {
    await w.c.settle();
    w.report();
    await w.c.settle();
  }
  for (let i = 0; i < steps; i++) {
    const step = randomStep(rand, routes);
    for (const w of worlds) {
      w.c.now = new Date(w.c.now.getTime() + 60_000);
      w.apply(step);
      await w.c.settle();
    }
    const [proportional, everything] = worlds;
    const where = `seed ${seed}, step ${i} (${JSON.stringify(step)})`;
    expect(held(proportional.c), where).toBe(held(everything.c));
    expect(proportional.c.puts, where).toBe(everything.c.puts);
    if (proportional.c.gate.holds) expect(inStep(proportional.c, proportional.desired), where).toEqual([]);
  }
  for (const w of worlds) await w.c.writer.close();
}
