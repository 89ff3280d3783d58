// Session persistence in every shape steadfast accepts, normalised into one SessionSpec:
// the rule field in the v1.5 shape (sessionName, absoluteTimeout, idleTimeout, type,
// cookieConfig.lifetimeType), the v1.6 shape (no idleTimeout), and the newest union
// shape (cookie {name, path, lifetimeType}, header {name}); plus the seed's
// SessionPersistencePolicy fields (absoluteTimeoutSeconds, idleTimeoutSeconds, sessionName).
import type { FieldPath } from '../diagnostic.js';
import type { Fields, Rec } from '../fields.js';
import type { SessionSpec } from '../model.js';
import { TOKEN } from '../patterns.js';
import { durationField } from './duration-field.js';

const LEGACY_KEYS = ['sessionName', 'idleTimeout', 'cookieConfig'];
const UNION_KEYS = ['cookie', 'header'];

function checkCookiePath(path: string | undefined, at: FieldPath, f: Fields): string | undefined {
  if (path === undefined) return undefined;
  // A cookie Path attribute (RFC 6265 5.2.4) must start with "/"; ";" and controls would end the attribute.
  if (!path.startsWith('/') || [...path].some((c) => c === ';' || c <= ' ' || c === '\x7f')) {
    f.add(
      at,
      'bad-format',
      `${JSON.stringify(path)} is not a cookie path: it must start with "/" and contain no ";", spaces or control characters`,
    );
    return undefined;
  }
  return path;
}

/**
 * `rules[].sessionPersistence` and `XBackendTrafficPolicy.spec.sessionPersistence`.
 * Long on purpose: as every decoder here, field after field in the schema's order, each with
 * the CEL rules that tie it to the others.
 */
export function decodeSessionPersistence(sp: Rec, path: FieldPath, f: Fields): SessionSpec | undefined {
  const hasUnion = UNION_KEYS.some((k) => sp[k] !== undefined);
  const legacy = LEGACY_KEYS.filter((k) => sp[k] !== undefined);
  if (hasUnion && legacy.length > 0) {
    f.add(
      path,
      'rule-violation',
      `mixes ${legacy.join(', ')} (v1.5/v1.6 shape) with cookie/header (newest shape); use one shape`,
    );
    return undefined;
  }
  const before = f.errors.length;
  const type = (f.str(sp, 'type', path, { enum: ['Cookie', 'Header'] }) ?? 'Cookie') as 'Cookie' | 'Header';
  const absoluteTimeoutMs = durationField(sp, 'absoluteTimeout', path, f);
  let lifetime = 'Session' as 'Session' | 'Permanent';
  let name: string | undefined;
  let cookiePath: string | undefined;
  let idleTimeoutMs: number | undefined;
  let shape: SessionSpec['shape'];
  if (hasUnion) {
    shape = 'union';
    f.known(sp, path, ['absoluteTimeout', 'type', 'cookie', 'header']);
    const cookie = f.rec(sp, 'cookie', path);
    const header = f.rec(sp, 'header', path);
    if (cookie) {
      const at = [...path, 'cookie'];
      f.known(cookie, at, ['name', 'path', 'lifetimeType']);
      name = f.str(cookie, 'name', at, { minLength: 1, maxLength: 256, pattern: TOKEN });
      cookiePath = checkCookiePath(f.str(cookie, 'path', at, { maxLength: 1024 }), [...at, 'path'], f);
      lifetime = (f.str(cookie, 'lifetimeType', at, { enum: ['Permanent', 'Session'] }) ??
        'Session') as typeof lifetime;
    }
    if (header) {
      const at = [...path, 'header'];
      f.known(header, at, ['name']);
      name = f.str(header, 'name', at, { required: true, minLength: 1, maxLength: 256, pattern: TOKEN });
    }
    if (cookie && type !== 'Cookie')
      f.add([...path, 'cookie'], 'rule-violation', 'cookie must be nil if type is not Cookie');
    if (!cookie && type === 'Cookie')
      f.add(path, 'rule-violation', 'cookie must be specified for Cookie type');
    if (header && type !== 'Header')
      f.add([...path, 'header'], 'rule-violation', 'header must be nil if type is not Header');
    if (!header && type === 'Header')
      f.add(path, 'rule-violation', 'header must be specified for Header type');
  } else {
    shape = sp.idleTimeout !== undefined ? 'v1.5' : 'v1.6';
    f.known(sp, path, ['sessionName', 'absoluteTimeout', 'idleTimeout', 'type', 'cookieConfig']);
    name = f.str(sp, 'sessionName', path, { minLength: 1, maxLength: 128, pattern: TOKEN });
    idleTimeoutMs = durationField(sp, 'idleTimeout', path, f);
    const cookieConfig = f.rec(sp, 'cookieConfig', path);
    if (cookieConfig) {
      f.known(cookieConfig, [...path, 'cookieConfig'], ['lifetimeType']);
      lifetime = (f.str(cookieConfig, 'lifetimeType', [...path, 'cookieConfig'], {
        enum: ['Permanent', 'Session'],
      }) ?? 'Session') as typeof lifetime;
      if (type !== 'Cookie')
        f.add([...path, 'cookieConfig'], 'rule-violation', 'cookieConfig can only be set with type Cookie');
    }
  }
  if (lifetime === 'Permanent' && sp.absoluteTimeout === undefined) {
    f.add(path, 'rule-violation', 'AbsoluteTimeout must be specified when cookie lifetimeType is Permanent');
  }
  if (f.errors.length > before) return undefined;
  return {
    shape,
    type,
    ...(name !== undefined ? { name } : {}),
    ...(cookiePath !== undefined ? { path: cookiePath } : {}),
    lifetime,
    ...(absoluteTimeoutMs !== undefined ? { absoluteTimeoutMs } : {}),
    ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
  };
}

/** The seed's SessionPersistencePolicy spec (GEP-1619 metaresource). */
export function decodeSessionPolicyFields(spec: Rec, path: FieldPath, f: Fields): SessionSpec | undefined {
  const before = f.errors.length;
  const raw = f.str(spec, 'type', path, { enum: ['Cookie', 'HTTPCookie', 'Header'] });
  const type = raw === 'Header' ? 'Header' : 'Cookie';
  const name = f.str(spec, 'sessionName', path, { minLength: 1, maxLength: 4096, pattern: TOKEN });
  const abs = f.int(spec, 'absoluteTimeoutSeconds', path, { min: 0, max: 2_147_483 });
  const idle = f.int(spec, 'idleTimeoutSeconds', path, { min: 0, max: 2_147_483 });
  if (f.errors.length > before) return undefined;
  return {
    shape: 'policy',
    type,
    ...(name !== undefined ? { name } : {}),
    lifetime: 'Session',
    // "omitempty" int64 fields: 0 means unset.
    ...(abs ? { absoluteTimeoutMs: abs * 1000 } : {}),
    ...(idle ? { idleTimeoutMs: idle * 1000 } : {}),
  };
}
