// A provider's read crossing to the compiler thread told against the last input the thread took
// (input-crossing.ts): after every step of seeded random changes — documents edited, moved
// down, added, removed, given again as new strings, named twice; objects added, removed,
// replaced, moved, listed again as new objects of the same versions, carried without a version
// or with a version two carry — the thread's compiler, fed what crosses (through a structured
// clone, as postMessage does), gives what a full compile of the provider's input gives; a
// request the thread cannot take is sent whole, as the service does. And what crosses is the
// change: one object, and of an edited file its changed text.
import { describe, expect, it } from 'vitest';
import { IncrementalCompiler, StaleObjectsError } from '../../extproc/src/pipeline/incremental-compiler.js';
import {
  type CrossingInput,
  type DocumentChange,
  InputReader,
  InputWriter,
  StaleInputError,
} from '../../extproc/src/pipeline/input-crossing.js';
import { type Snapshot, compileConfig } from '../../extproc/src/pipeline/snapshot.js';
import type { ConfigFile, ObjectInput } from '../../extproc/src/gatewayapi/parse.js';
import type { ProvidedConfig } from '../../extproc/src/provider/provider.js';
import { EDGE_BASE_YAML as BASE_YAML, edgeRouteYaml as routeYaml } from '../support/edge-gateway-yaml.js';
import { mulberry32 as random } from '../support/mulberry32.js';

function routeBody(name: string, path: string): unknown {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'objects' },
    spec: {
      parentRefs: [{ name: 'edge', namespace: 'default' }],
      hostnames: [`${name}.objects.example`],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: path } }],
          backendRefs: [{ name: 'app', namespace: 'default', port: 80 }],
        },
      ],
    },
  };
}

const GRANT: unknown = {
  apiVersion: 'gateway.networking.k8s.io/v1beta1',
  kind: 'ReferenceGrant',
  metadata: { name: 'to-app', namespace: 'default' },
  spec: {
    from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'objects' }],
    to: [{ group: '', kind: 'Service' }],
  },
};

/** The provider's state: files as lists of documents, and objects as the inputs it hands over. */
interface World {
  files: Map<string, string[]>;
  objects: ObjectInput[];
  serial: number;
}

/** The same text as a string of its own: what a provider that reads a file again hands over. */
const copied = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');

function provided(world: World, rnd: () => number): ProvidedConfig {
  const documents: ConfigFile[] = [...world.files].map(([path, docs]) => ({
    path,
    text: docs.join('---\n'),
  }));
  // Now and then a path handed over twice.
  if (rnd() < 0.05 && documents.length > 0) documents.push({ ...(documents[0] as ConfigFile) });
  return { documents, objects: [...world.objects], diagnostics: [] };
}

function versioned(world: World, name: string, path: string): ObjectInput {
  return { body: routeBody(name, path), version: `HTTPRoute/${name}@${world.serial++}` };
}

/** Inputs carrying another's version. */
const twins = new WeakSet<ObjectInput>();

/** One random change of the world; what it did. */
function change(world: World, rnd: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const at = (n: number) => Math.floor(rnd() * (n + 1));
  const names = [...world.files.keys()];
  // A version carried twice goes with the next change (while it is there, every request goes whole).
  world.objects = world.objects.filter((o) => !twins.has(o));
  const objects = world.objects;
  switch (Math.floor(rnd() * 14)) {
    case 0: {
      const docs = world.files.get(pick(names)) ?? [];
      if (docs.length > 0)
        docs[Math.floor(rnd() * docs.length)] = routeYaml(`doc-${world.serial}`, `/p/${world.serial++}`);
      return 'a document edited';
    }
    case 1: {
      const docs = world.files.get(pick(names)) ?? [];
      docs.splice(at(docs.length), 0, routeYaml(`doc-${world.serial}`, `/n/${world.serial++}`));
      return 'a document added';
    }
    case 2: {
      const docs = world.files.get(pick(names)) ?? [];
      if (docs.length > 0) docs.splice(Math.floor(rnd() * docs.length), 1);
      return 'a document removed';
    }
    case 3: {
      const path = pick(names);
      const docs = world.files.get(path) ?? [];
      // Lines inserted before a document: everything below it moves down.
      if (docs.length > 0) docs[0] = `# moved\n${docs[0]}`;
      return `${path}: lines added on top`;
    }
    case 4: {
      const path = `extra-${world.serial++}.yaml`;
      world.files.set(path, [routeYaml(`file-${world.serial}`, `/f/${world.serial++}`)]);
      return `${path} added`;
    }
    case 5: {
      const path = pick(names);
      if (path !== 'base.yaml') world.files.delete(path);
      return `${path} removed`;
    }
    case 6:
      objects.splice(at(objects.length), 0, versioned(world, `obj-${world.serial}`, `/o/${world.serial}`));
      return 'an object added';
    case 7:
      if (objects.length > 0) objects.splice(Math.floor(rnd() * objects.length), 1);
      return 'an object removed';
    case 8: {
      if (objects.length === 0) return 'no object to replace';
      const i = Math.floor(rnd() * objects.length);
      const name = `obj-${world.serial}`;
      objects[i] = versioned(world, name, `/r/${world.serial}`);
      return `object ${i} replaced`;
    }
    case 9: {
      if (objects.length < 2) return 'no object to move';
      const [moved] = objects.splice(Math.floor(rnd() * objects.length), 1);
      objects.splice(at(objects.length), 0, moved as ObjectInput);
      return 'an object moved';
    }
    case 10:
      // Listed again: new inputs of the same versions and content.
      world.objects = objects.map((o) => ({ ...o, body: JSON.parse(JSON.stringify(o.body)) as unknown }));
      return 'objects listed again';
    case 11:
      objects.splice(at(objects.length), 0, {
        body: routeBody(`plain-${world.serial}`, `/u/${world.serial++}`),
      });
      return 'an object without a version added';
    case 12: {
      if (objects.length === 0 || rnd() < 0.5) return 'nothing changed';
      // Two inputs of one version (what a provider must not do): still compiled as given.
      const twin = objects[Math.floor(rnd() * objects.length)] as ObjectInput;
      const made = { ...twin, body: routeBody(`twin-${world.serial++}`, '/twin') };
      twins.add(made);
      objects.splice(at(objects.length), 0, made);
      return 'a version carried twice';
    }
    default:
      return 'nothing changed';
  }
}

/** What a snapshot serves and reports, as data. */
function view(s: Snapshot): unknown {
  const { table, tls, statuses, diagnostics, errors, warnings } = s;
  return JSON.parse(JSON.stringify({ table, tls, statuses, diagnostics, errors, warnings })) as unknown;
}

/** The thread's side and the service's, as SnapshotCompiler and snapshot-thread.ts pair them. */
class Crossing {
  readonly writer = new InputWriter();
  readonly reader = new InputReader();
  readonly compiler = new IncrementalCompiler();
  private id = 0;
  /** Requests the thread could not take (sent again whole). */
  stale = 0;
  last: CrossingInput | undefined;

  compile(input: ProvidedConfig): Snapshot {
    try {
      return this.once(input);
    } catch (e) {
      if (!(e instanceof StaleObjectsError || e instanceof StaleInputError)) throw e;
      this.stale++;
      this.writer.forget();
      return this.once(input);
    }
  }

  private once(input: ProvidedConfig): Snapshot {
    const id = ++this.id;
    const crossed = structuredClone(this.writer.write(input, id));
    this.last = crossed;
    try {
      const snapshot = this.compiler.compile(this.reader.read(crossed, id));
      this.writer.took(id);
      return snapshot;
    } catch (e) {
      this.reader.forget();
      throw e;
    }
  }
}

function world(rnd: () => number): World {
  const w: World = {
    files: new Map(),
    objects: [{ body: GRANT, version: 'ReferenceGrant/to-app@1' }],
    serial: 0,
  };
  w.files.set('base.yaml', [BASE_YAML]);
  w.files.set(
    'a.yaml',
    Array.from({ length: 6 }, (_, i) => routeYaml(`a-${i}`, `/a/${i}`)),
  );
  w.files.set(
    'b.yaml',
    Array.from({ length: 4 }, (_, i) => routeYaml(`b-${i}`, `/b/${i}`)),
  );
  for (let i = 0; i < 8; i++) w.objects.push(versioned(w, `obj-${i}`, `/o/${i}`));
  for (let i = 0; i < 3; i++) change(w, rnd);
  return w;
}

describe('input crossing', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`compiles as a full compile of the provider's input after every step of random changes (seed ${seed})`, () => {
      const rnd = random(seed);
      const w = world(rnd);
      const crossing = new Crossing();
      const steps: string[] = [];
      let told = 0;
      for (let step = 0; step < 80; step++) {
        // A provider reading again hands over new strings of the same texts, now and then.
        if (rnd() < 0.3) for (const [path, docs] of w.files) w.files.set(path, docs.map(copied));
        const input = provided(w, rnd);
        const compiled = crossing.compile(input);
        if (crossing.last?.base !== undefined) told++;
        expect(view(compiled), steps.join('; ')).toEqual(view(compileConfig(input)));
        steps.push(change(w, rnd));
      }
      // Most requests were told against the last input; the rest went whole.
      expect(told).toBeGreaterThan(60);
    });
  }

  it('sends one changed object and the changed text of an edited file, and the same text as the same string', () => {
    const rnd = random(7);
    const w: World = { files: new Map(), objects: [], serial: 0 };
    w.files.set('base.yaml', [BASE_YAML]);
    w.files.set(
      'routes.yaml',
      Array.from({ length: 50 }, (_, i) => routeYaml(`r-${i}`, `/r/${i}`)),
    );
    for (let i = 0; i < 50; i++) w.objects.push(versioned(w, `obj-${i}`, `/o/${i}`));
    const crossing = new Crossing();
    crossing.compile(provided(w, () => 1));
    expect(crossing.last?.base).toBeUndefined();
    // Whole, the objects cross as one JSON text (a string is copied, not walked object by object).
    expect(typeof crossing.last?.objects.middle).toBe('string');
    w.objects[20] = versioned(w, 'obj-20', '/edited');
    (w.files.get('routes.yaml') as string[])[30] = routeYaml('r-30', '/edited');
    for (const [path, docs] of w.files) w.files.set(path, docs.map(copied));
    const input = provided(w, () => 1);
    const compiled = crossing.compile(input);
    expect(view(compiled)).toEqual(view(compileConfig(input)));
    const crossed = crossing.last as CrossingInput;
    expect(crossed.base).toBeDefined();
    expect(crossed.objects).toMatchObject({ start: 20, end: 29 });
    expect(crossed.objects.middle).toEqual([w.objects[20]]);
    const [base, routes] = crossed.documents as DocumentChange[];
    expect(base).toEqual({ path: 'base.yaml', prefix: BASE_YAML.length, suffix: 0, middle: '' });
    expect(routes?.middle.length).toBeLessThan(20);
    expect(routes?.middle).toContain('edit');
    // An object listed again in its place (a new input of a version the thread holds, as after a
    // status write) crosses not at all; moved elsewhere, as its version alone.
    w.objects[5] = { ...(w.objects[5] as ObjectInput) };
    crossing.compile(provided(w, () => 1));
    expect((crossing.last as CrossingInput).objects).toEqual({ start: 50, end: 0, middle: [] });
    const moved = { ...(w.objects[5] as ObjectInput) };
    w.objects.splice(5, 1);
    w.objects.splice(40, 0, moved);
    crossing.compile(provided(w, () => 1));
    expect((crossing.last as CrossingInput).objects.middle).toContainEqual({
      body: undefined,
      version: moved.version,
    });
    expect(crossing.stale).toBe(0);
    void rnd;
  });

  it('refuses a request told against an input or a text it does not hold, and then takes it whole', () => {
    const input: ProvidedConfig = {
      documents: [{ path: 'base.yaml', text: BASE_YAML }],
      objects: [],
      diagnostics: [],
    };
    const writer = new InputWriter();
    const reader = new InputReader();
    reader.read(writer.write(input, 1), 1);
    writer.took(1);
    const told = writer.write(input, 2);
    expect(told.base).toBe(1);
    expect(() => new InputReader().read(told, 2)).toThrow(StaleInputError);
    expect(() => reader.read({ ...told, base: 0 }, 2)).toThrow(StaleInputError);
    expect(() =>
      reader.read({ ...told, documents: [{ path: 'other.yaml', prefix: 0, suffix: 0, middle: '' }] }, 2),
    ).toThrow(/does not hold the text of other.yaml/);
    // The service forgets and sends it whole; the thread takes that from nothing.
    writer.forget();
    const whole = writer.write(input, 3);
    expect(whole.base).toBeUndefined();
    expect(new InputReader().read(whole, 3)).toEqual(input);
  });
});
