// The resources of the few large objects of a generation (clusters, their endpoints, listeners,
// certificates) as last encoded, so that a one-route change does not encode them again. The
// generator makes some of them anew every generation (each kind of Envoy's listeners, a
// cluster's EDS form), and encoding one checks every field of it (envoy-protos.ts, about half a
// millisecond for a listener); writing it out and hashing it costs a fraction of that. What two
// generations in a row did not use is let go.
import { createHash } from 'node:crypto';
import type { Json } from '../json.js';
import { type Resource, resource } from './ads-resource.js';
import { encodeAny } from './envoy-protos.js';

/** What a JSON object was encoded as, and under which key. */
interface Kept {
  readonly type: string;
  readonly key: string;
  readonly resource: Resource;
}

export class KeptEncodings {
  /** By the object (the generator keeps unchanged ones: envoy/generation-memo.ts), never changed once made. */
  private readonly byObject = new WeakMap<Json, Kept>();
  /** By type and a digest of the JSON: this generation's, and the last one's. */
  private now = new Map<string, Resource>();
  private last = new Map<string, Resource>();

  /** A new generation: what the last one used can still be taken, what it did not is let go. */
  rotate(): void {
    this.last = this.now;
    this.now = new Map();
  }

  /** Resource `name` of `type`, its JSON `json`: the one encoded for the same JSON, or encoded now. */
  resource(type: string, name: string, json: Json): Resource {
    let kept = this.byObject.get(json);
    if (kept?.type !== type) {
      const key = `${type}\0${createHash('sha256').update(JSON.stringify(json)).digest('base64')}`;
      const made =
        this.now.get(key) ??
        this.last.get(key) ??
        resource(name, encodeAny({ '@type': type, ...json }, `${type}/${name}`));
      kept = { type, key, resource: made };
      this.byObject.set(json, kept);
    }
    this.now.set(kept.key, kept.resource);
    return kept.resource;
  }
}
