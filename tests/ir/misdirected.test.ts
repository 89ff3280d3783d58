// An HTTPS port whose listeners have different hostnames gets one route configuration per SNI
// chain (ir/misdirected.ts): the chain's own virtual hosts as they are, the other listeners'
// answering 421, and `*` answering 421 on every chain but the hostname-less listener's.
import { describe, expect, it } from 'vitest';
import { buildIr } from '../../extproc/src/ir/build-ir.js';
import type { PolicyTable, TableListener } from '../../extproc/src/policy/policy-table.js';
import { route } from '../resolve/table-builder.js';

function listener(name: string, protocol: string, hostname?: string): TableListener {
  return {
    id: `gateway/default/gw/listener/${name}`,
    gateway: 'default/gw',
    name,
    port: 443,
    protocol,
    ...(hostname ? { hostname } : {}),
    ...(protocol === 'HTTPS' ? { tls: { certificates: ['secret/default/cert'] } } : {}),
  };
}

function tableOf(protocol: string): PolicyTable {
  const listeners = [
    listener('any', protocol),
    listener('second', protocol, 'second.example'),
    listener('wild', protocol, '*.wild.example'),
  ];
  const on = (l: TableListener, name: string, hostnames: string[]) => ({
    ...route({ name, hostnames, rules: [[{ path: { type: 'PathPrefix', value: '/' } }]] }),
    listeners: [l.id],
  });
  const [any, second, wild] = listeners as [TableListener, TableListener, TableListener];
  return {
    version: 1,
    listeners,
    routes: [
      on(any, 'first', ['first.example']),
      on(second, 'second', ['second.example']),
      on(wild, 'wild', ['*.wild.example']),
    ],
  };
}

/** Each chain: its name, and each virtual host with `421` or the routes it serves. */
function chains(table: PolicyTable) {
  return buildIr(table).ports[0]?.sniChains?.map((c) => [
    c.name,
    c.virtualHosts.map(
      (h) =>
        `${h.hostname} ${h.misdirected ? '421' : h.entries.map((e) => e.rule.id.split('/')[2]).join(',')}`,
    ),
  ]);
}

describe('SNI chains of an HTTPS port', () => {
  it('answer 421 for the hosts of the other listeners', () => {
    expect(chains(tableOf('HTTPS'))).toEqual([
      ['port/443/sni/default', ['*.wild.example 421', 'first.example first', 'second.example 421', '* ']],
      [
        'port/443/sni/second.example',
        ['*.wild.example 421', 'first.example 421', 'second.example second', '* 421'],
      ],
      [
        'port/443/sni/*.wild.example',
        ['*.wild.example wild', 'first.example 421', 'second.example 421', '* 421'],
      ],
    ]);
  });

  it('are not made for an HTTP port, nor for an HTTPS port whose listeners share a hostname', () => {
    expect(chains(tableOf('HTTP'))).toBeUndefined();
    const one: PolicyTable = { ...tableOf('HTTPS'), listeners: [listener('any', 'HTTPS')] };
    expect(chains(one)).toBeUndefined();
  });
});
