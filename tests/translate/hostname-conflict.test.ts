// HTTPS listeners of two Gateways on one port with one hostname: the younger one (creation
// time, then namespace/name, whatever the order read) is Conflicted (HostnameConflict), not accepted, not programmed and not in the table,
// so its Gateway's client-certificate requirement is never served by the other's filter
// chain; its routes attach through its other listeners only. Attach mode's port groups agree.
import { describe, expect, it } from 'vitest';
import { portGroups } from '../../extproc/src/ir/listener-ports.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import type { Condition, ObjectStatus } from '../../extproc/src/translate/status.js';
import { HOSTNAME_CONFLICT_CONFIG } from '../support/hostname-conflict-config.js';

const snap = compileSnapshot([{ path: 'conflict.yaml', text: HOSTNAME_CONFLICT_CONFIG }]);

function status(kind: string, name: string): ObjectStatus {
  const s = snap.statuses.find((x) => x.kind === kind && x.metadata.name === name);
  if (!s) throw new Error(`no ${kind} ${name}`);
  return s;
}

function listener(gateway: string, name: string) {
  const l = status('Gateway', gateway).status.listeners?.find((x) => x.name === name);
  if (!l) throw new Error(`no listener ${name}`);
  return { ...l, by: Object.fromEntries(l.conditions.map((c) => [c.type, c])) as Record<string, Condition> };
}

describe('HTTPS listeners of two Gateways sharing a port and a hostname', () => {
  it('the later one is HostnameConflict, not programmed, and takes no routes; the first is untouched', () => {
    const later = listener('strict', 'https');
    expect(later.by['Conflicted']).toMatchObject({ status: 'True', reason: 'HostnameConflict' });
    expect(later.by['Conflicted']?.message).toContain('gateway/default/open/listener/https');
    expect(later.by['Accepted']).toMatchObject({ status: 'False', reason: 'HostnameConflict' });
    expect(later.by['Programmed']).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(later.attachedRoutes).toBe(0);
    const first = listener('open', 'https');
    expect(first.by['Conflicted']).toMatchObject({ status: 'False', reason: 'NoConflicts' });
    expect(first.by['Programmed']).toMatchObject({ status: 'True' });
    expect(first.attachedRoutes).toBe(1);
    expect(listener('strict', 'alone').by['Programmed']).toMatchObject({ status: 'True' });
    expect(listener('strict', 'alone').attachedRoutes).toBe(1);
    // One listener of two is not usable: the Gateway says so and stays programmed.
    const gw = status('Gateway', 'strict').status.conditions ?? [];
    expect(gw.find((c) => c.type === 'Accepted')).toMatchObject({
      status: 'True',
      reason: 'ListenersNotValid',
    });
  });

  it("the table and both modes' port groups leave the conflicted listener and its routes off that port", () => {
    expect(snap.table.listeners.map((l) => l.id)).toEqual([
      'gateway/default/open/listener/https',
      'gateway/default/strict/listener/alone',
    ]);
    const strictRoute = snap.table.routes.find((r) => r.name === 'via-strict');
    expect(strictRoute?.listeners).toEqual(['gateway/default/strict/listener/alone']);
    const groups = portGroups(snap.table);
    expect(groups.map((g) => [g.port, g.listeners.map((l) => l.id)])).toEqual([
      [443, ['gateway/default/open/listener/https']],
      [8443, ['gateway/default/strict/listener/alone']],
    ]);
    const port443 = snap.ir.ports.find((p) => p.port === 443);
    expect(port443?.routes.map((r) => r.route.name)).toEqual(['via-open']);
    expect(snap.ir.ports.find((p) => p.port === 8443)?.routes.map((r) => r.route.name)).toEqual([
      'via-strict',
    ]);
  });
});

/** The winner of port 443 when the config is read with these changes. */
function winner(edit: (config: string) => string): string[] {
  const edited = compileSnapshot([{ path: 'conflict.yaml', text: edit(HOSTNAME_CONFLICT_CONFIG) }]);
  return edited.table.listeners.filter((l) => l.port === 443).map((l) => l.id);
}

/** The config with Gateway `name` given a creation time. */
function created(name: string, at: string): (config: string) => string {
  return (config) =>
    config.replace(`metadata: { name: ${name} }`, `metadata: { name: ${name}, creationTimestamp: '${at}' }`);
}

describe('which of two Gateways keeps a hostname on an HTTPS port', () => {
  it('without creation times (file mode): namespace/name order, not the order read', () => {
    // Documents split where the next one starts: PEM lines hold '---' too.
    const reversed = (config: string) =>
      config
        .split(/---\n(?=apiVersion)/)
        .reverse()
        .join('---\n');
    expect(winner(reversed)).toEqual(['gateway/default/open/listener/https']);
  });

  it('the older Gateway, even when it is read later and named later', () => {
    expect(winner(created('strict', '2026-01-01T00:00:00Z'))).toEqual([
      'gateway/default/strict/listener/https',
    ]);
    const both = (config: string) =>
      created('open', '2026-02-01T00:00:00Z')(created('strict', '2026-01-01T00:00:00Z')(config));
    expect(winner(both)).toEqual(['gateway/default/strict/listener/https']);
  });
});
