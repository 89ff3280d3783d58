// The statuses translation gave last time, kept so that an unchanged status stays the same
// object (what was made of it on the way to the service is then kept, pipeline/piece-list.ts),
// and the list of them taken up from the last one: when the walk over the routes was taken up
// (route-run.ts), every route that was in the last walk made what it made then, so a route
// that is the same object at the same place from the start or the end of the objects' list has
// the status it had, and only the objects between and those that are not routes (a Gateway
// counts its routes, a policy what they reach) are given a status again.
// A test holds the result equal to a full compile after random edit sequences.
import type { AnyObject } from '../gatewayapi/model.js';
import { changedPart, sameJson } from '../json.js';
import { type ObjectStatus, objectKey } from './status.js';

const isRoute = (o: AnyObject): boolean => o.kind === 'HTTPRoute' || o.kind === 'GRPCRoute';

export class GivenStatuses {
  /** The last statuses, by object (objectKey). */
  private readonly byKey = new Map<string, ObjectStatus>();
  /** The statuses the last translation gave, so the 10,000 it gives again are not looked up by key. */
  private given = new Set<ObjectStatus>();
  /** The objects of the last list given, and their statuses in order. */
  private last:
    { readonly objects: readonly AnyObject[]; readonly statuses: readonly ObjectStatus[] } | undefined;

  /** The last status given for the object of `key`. */
  lastOf(key: string): ObjectStatus | undefined {
    return this.byKey.get(key);
  }

  /**
   * The statuses, each the object last given for its object when it is equal to it. Equality
   * is content, so this holds whatever else changed.
   */
  keep(list: readonly ObjectStatus[]): ObjectStatus[] {
    this.last = undefined;
    const given = new Set<ObjectStatus>();
    const out = list.map((s) => this.kept(s, given));
    // The objects whose status is no longer given are gone (or given a new one, set above).
    for (const s of this.given) if (!given.has(s)) this.forget(s);
    this.given = given;
    return out;
  }

  /**
   * Each object's status, `one` making it, kept as `keep` keeps them; taken up from the last
   * list when the route walk was (`resumed`).
   */
  of(objects: readonly AnyObject[], resumed: boolean, one: (o: AnyObject) => ObjectStatus): ObjectStatus[] {
    const last = this.last;
    const statuses = last && resumed ? this.changed(last, objects, one) : this.keep(objects.map(one));
    this.last = { objects, statuses };
    return statuses;
  }

  private changed(
    last: { readonly objects: readonly AnyObject[]; readonly statuses: readonly ObjectStatus[] },
    objects: readonly AnyObject[],
    one: (o: AnyObject) => ObjectStatus,
  ): ObjectStatus[] {
    const at = changedPart(last.objects, objects);
    const out = new Array<ObjectStatus>(objects.length);
    const again: number[] = [];
    const dropped = last.statuses.slice(at.from, at.to);
    const take = (i: number, j: number) => {
      const o = objects[i] as AnyObject;
      if (isRoute(o)) out[i] = last.statuses[j] as ObjectStatus;
      else {
        again.push(i);
        dropped.push(last.statuses[j] as ObjectStatus);
      }
    };
    for (let i = 0; i < at.from; i++) take(i, i);
    for (let i = at.from; i < at.newTo; i++) again.push(i);
    for (let i = at.newTo, j = at.to; i < objects.length; i++, j++) take(i, j);
    const given = new Set<ObjectStatus>();
    for (const i of again) out[i] = this.kept(one(objects[i] as AnyObject), given);
    for (const s of dropped) {
      if (given.has(s)) continue;
      this.given.delete(s);
      this.forget(s);
    }
    for (const s of given) this.given.add(s);
    return out;
  }

  /** The status as given: the last one of its object when equal; recorded in `given`. */
  private kept(s: ObjectStatus, given: Set<ObjectStatus>): ObjectStatus {
    // Given last time: the last status of its object (keys are unique in a list), kept as is.
    if (this.given.has(s)) {
      given.add(s);
      return s;
    }
    const key = objectKey(s);
    const last = this.byKey.get(key);
    const kept = last && sameJson(last, s) ? last : s;
    this.byKey.set(key, kept);
    given.add(kept);
    return kept;
  }

  /** A status no longer given: its object's entry goes, unless another status took it. */
  private forget(s: ObjectStatus): void {
    const key = objectKey(s);
    if (this.byKey.get(key) === s) this.byKey.delete(key);
  }
}
