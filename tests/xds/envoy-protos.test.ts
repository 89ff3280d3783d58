// Every resource the gateway generator writes (the golden outputs of tests/envoy/testdata)
// encodes as Envoy's protobuf, field for field: what the ADS server sends is what the files say.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { TYPE_CLUSTER, TYPE_LISTENER, TYPE_SECRET } from '../../extproc/src/envoy/envoy-names.js';
import { ProtoConversionError, decodeAny, encodeAny } from '../../extproc/src/xds/envoy-protos.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'envoy', 'testdata');
const goldens = readdirSync(dir).filter((f) => f.endsWith('.out.yaml'));

type Json = Record<string, unknown>;

describe('Envoy resources as protobuf', () => {
  for (const file of goldens) {
    it(`${file}: every listener, cluster and secret encodes, and decodes to the same names`, () => {
      const config = parse(readFileSync(join(dir, file), 'utf8')) as {
        static_resources: { listeners?: Json[]; clusters?: Json[]; secrets?: Json[] };
      };
      const sets: [string, Json[]][] = [
        [TYPE_LISTENER, config.static_resources.listeners ?? []],
        [TYPE_CLUSTER, config.static_resources.clusters ?? []],
        [TYPE_SECRET, config.static_resources.secrets ?? []],
      ];
      let count = 0;
      for (const [type, resources] of sets) {
        for (const r of resources) {
          const any = encodeAny({ '@type': type, ...r });
          expect(any.type_url).toBe(type);
          expect(decodeAny(any)['name']).toBe(r['name']);
          count++;
        }
      }
      expect(count).toBeGreaterThan(0);
    });
  }

  it('keeps what the JSON says: durations, metadata, nested Any', () => {
    const any = encodeAny({
      '@type': 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
      name: 'r',
      virtual_hosts: [
        {
          name: 'v',
          domains: ['*'],
          routes: [
            {
              match: { prefix: '/' },
              metadata: { filter_metadata: { steadfast: { policy: 'sf1;id=x' } } },
              route: { cluster: 'c', timeout: '1.5s' },
              typed_per_filter_config: {
                f: { '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig', disabled: true },
              },
            },
          ],
        },
      ],
    });
    const route = ((decodeAny(any)['virtual_hosts'] as Json[])[0]?.['routes'] as Json[])[0] as Json;
    expect((route['route'] as Json)['timeout']).toEqual({ seconds: 1, nanos: 500_000_000 });
    expect(route['metadata']).toEqual({
      filter_metadata: { steadfast: { fields: { policy: { stringValue: 'sf1;id=x' } } } },
    });
    const filter = (
      route['typed_per_filter_config'] as Record<string, { type_url: string; value: Uint8Array }>
    )['f'];
    expect(filter?.type_url).toBe('type.googleapis.com/envoy.config.route.v3.FilterConfig');
    expect(decodeAny(filter as { type_url: string; value: Uint8Array })).toEqual({ disabled: true });
  });

  it('writes `{}` as the empty Any: present, with no type (a FilterConfig that switches a filter on)', () => {
    const any = encodeAny({ '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig', config: {} });
    // Field 1 (config), length 0: set, and empty.
    expect([...any.value]).toEqual([0x0a, 0x00]);
    expect(decodeAny(any)).toEqual({ config: {} });
    const absent = encodeAny({ '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig' });
    expect(absent.value.length).toBe(0);
  });

  it('refuses a field the protos do not have, and a bad duration, with where they are', () => {
    expect(() =>
      encodeAny({ '@type': TYPE_CLUSTER, name: 'c', connect_timeout: '2s', no_such_field: 1 }),
    ).toThrow(/envoy.config.cluster.v3.Cluster has no field no_such_field/);
    expect(() => encodeAny({ '@type': TYPE_CLUSTER, name: 'c', connect_timeout: '2 seconds' })).toThrow(
      ProtoConversionError,
    );
    expect(() => encodeAny({ '@type': 'type.googleapis.com/no.Such', name: 'c' })).toThrow(
      /unknown message type/,
    );
  });
});
