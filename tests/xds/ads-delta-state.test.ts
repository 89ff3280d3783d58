// What a delta stream's state counts as held by the Envoy: a name no longer asked for is
// forgotten, and so are the resources Envoy lets go with another (a route configuration's
// virtual hosts); forgotten too in what a refused push goes back to, so that asked for again
// they are sent again, and meanwhile never removed by name.
import { describe, expect, it } from 'vitest';
import { DeltaState } from '../../extproc/src/xds/ads-delta.js';
import { type Resource, resource } from '../../extproc/src/xds/ads-resource.js';

const TYPE = 'type.googleapis.com/envoy.config.route.v3.VirtualHost';
const made = (name: string, content = name): Resource =>
  resource(name, { type_url: TYPE, value: Buffer.from(content) });
const sent = (push: ReturnType<DeltaState['push']>) => ({
  names: (push?.resources ?? []).map((r) => r.name).sort(),
  removed: [...(push?.removed_resources ?? [])].sort(),
});

describe('delta state', () => {
  it('sends a name again once it was asked for no more', () => {
    const state = new DeltaState();
    const all = [made('a'), made('b')];
    expect(sent(state.push(TYPE, all))).toEqual({ names: ['a', 'b'], removed: [] });
    expect(state.push(TYPE, all)).toBeUndefined();
    state.unsubscribed(TYPE, ['b']);
    // Not asked for: neither sent nor removed.
    expect(state.push(TYPE, [made('a')])).toBeUndefined();
    expect(sent(state.push(TYPE, all))).toEqual({ names: ['b'], removed: [] });
  });

  it('forgets the resources a predicate picks, so they are sent again unchanged', () => {
    const state = new DeltaState();
    const hosts = [made('port/80/a'), made('port/80/b'), made('port/81/c')];
    state.push(TYPE, hosts);
    state.forget(TYPE, (n) => n.startsWith('port/80/'));
    // Without them the Envoy's state is what is sent: no removal of what it no longer has.
    expect(state.push(TYPE, [made('port/81/c')])).toBeUndefined();
    expect(sent(state.push(TYPE, hosts))).toEqual({ names: ['port/80/a', 'port/80/b'], removed: [] });
  });

  it('forgets them in what a refusal goes back to as well', () => {
    const state = new DeltaState();
    state.push(TYPE, [made('port/80/a'), made('port/81/c')]);
    // A push in flight (c changed); meanwhile port/80 is let go, then the push is refused.
    state.push(TYPE, [made('port/80/a'), made('port/81/c', 'c2')]);
    state.forget(TYPE, (n) => n.startsWith('port/80/'));
    state.refused(TYPE);
    expect(sent(state.push(TYPE, [made('port/80/a'), made('port/81/c', 'c2')]))).toEqual({
      names: ['port/80/a', 'port/81/c'],
      removed: [],
    });
  });
});
