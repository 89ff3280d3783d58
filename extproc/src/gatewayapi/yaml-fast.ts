// The fast way to read a YAML file's documents as plain data, for parse.ts. The `yaml`
// package keeps a full syntax tree with every node's position, which parse.ts needs only
// to name the line of a field in a diagnostic, and which costs about 2 µs and 1 KB per byte
// of input (a 3.4 MB file of 10,000 routes: 6 s). js-yaml builds the values alone, about
// eight times faster — whole, or a document at a time as the incremental compiler reads a new
// file (`npm run bench:yaml`) — and holds nothing once done. So this loads the values with js-yaml,
// under a schema written to give exactly the `yaml` package's YAML 1.2 core results, and
// keeps each document's span of the text; a field's line is found later, by parsing that
// one document with `yaml`, only when something asks for it.
//
// Whatever the two libraries could read differently goes the slow way instead (the caller
// falls back to `yaml` for the whole file): explicit tags, complex keys, anchors shared
// between nodes (so the alias limits of the slow way still hold), null keys, and any error
// (so syntax errors are located and worded as before).
import { FAILSAFE_SCHEMA, type State, Type, loadAll } from 'js-yaml';

/** A document's value and where its content stands in the file's text. */
export interface FastDocument {
  readonly value: unknown;
  /** 1-based line of the document's content (what `source.line` names). */
  readonly line: number;
  /** Offsets of the content in the text: [start, end). */
  readonly start: number;
  readonly end: number;
}

// YAML 1.2 core schema (yaml.org/spec/1.2.2, 10.3.2), as the `yaml` package resolves plain
// scalars: these regular expressions and nothing else make a null, a boolean, an integer or
// a float; every other plain scalar is a string.
const NULL = /^(?:~|null|Null|NULL)?$/;
const BOOL = /^(?:true|True|TRUE|false|False|FALSE)$/;
const INT_DEC = /^[-+]?[0-9]+$/;
const INT_OCT = /^0o[0-7]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const FLOAT_INF = /^[-+]?\.(?:inf|Inf|INF)$/;
const FLOAT_NAN = /^\.(?:nan|NaN|NAN)$/;

const coreNull = new Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (s: string) => NULL.test(s),
  construct: () => null,
});
const coreBool = new Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (s: string) => BOOL.test(s),
  construct: (s: string) => s[0] === 't' || s[0] === 'T',
});
const coreInt = new Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (s: string) => INT_DEC.test(s) || INT_OCT.test(s) || INT_HEX.test(s),
  construct: (s: string) =>
    INT_OCT.test(s) ? parseInt(s.slice(2), 8) : INT_HEX.test(s) ? parseInt(s.slice(2), 16) : Number(s),
});
const coreFloat = new Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (s: string) => FLOAT.test(s) || FLOAT_INF.test(s) || FLOAT_NAN.test(s),
  construct: (s: string) =>
    FLOAT_NAN.test(s) ? NaN : FLOAT_INF.test(s) ? (s[0] === '-' ? -Infinity : Infinity) : Number(s),
});
const CORE = FAILSAFE_SCHEMA.extend({ implicit: [coreNull, coreBool, coreInt, coreFloat] });

// A tag (`!`, `!!int`, `!<…>`) where a node may start, or a complex key (`? `): read the
// slow way. Matching inside a quoted string as well only costs that file the fast path.
const SLOW_SYNTAX = /(?:^|[\s[{,:-])!|^[ \t]*\?(?:[ \t]|$)/m;

/**
 * Whether a value holds what the two libraries turn into different data: a collection
 * reached twice (an alias of an anchored mapping or sequence), or a null key (`~: 1`:
 * js-yaml names it "null", the `yaml` package ""), which a quoted "null" key resembles.
 */
function needsSlowWay(value: unknown, seen: Set<object>): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (seen.has(value)) return true;
  seen.add(value);
  if (Array.isArray(value)) return value.some((v) => needsSlowWay(v, seen));
  for (const key in value) {
    if (key === 'null' || needsSlowWay((value as Record<string, unknown>)[key], seen)) return true;
  }
  return false;
}

/**
 * A string that holds no larger one. A string js-yaml reads is a slice of its own copy of
 * the whole text (it appends a terminator to the text it was given), and V8 keeps what a
 * slice was cut from alive: one name kept from a document kept that document's text twice.
 */
function ownString(s: string): string {
  // V8 copies strings this short instead of slicing them.
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/**
 * The value as the service keeps it, for as long as its document is unchanged: strings that
 * hold no text but their own, lists exactly as long as they are (js-yaml grows a list item by
 * item, and a one-item list keeps room for 17: 10,000 routes of nine lists kept 11 MB more).
 * Values are trees here (needsSlowWay sent shared collections the slow way).
 */
function compact(value: unknown): unknown {
  if (typeof value === 'string') return ownString(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = compact(value[i]);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = compact((value as Record<string, unknown>)[key]);
    // js-yaml defines a `__proto__` key as an own property; so does this.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}

/** The file's documents, or undefined when the file must be read the slow way. */
export function loadDocumentsFast(text: string): FastDocument[] | undefined {
  if (SLOW_SYNTAX.test(text)) return undefined;
  // js-yaml drops a leading byte order mark before it counts positions.
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const values: unknown[] = [];
  const spans: { line: number; start: number; end: number }[] = [];
  let depth = 0;
  let open = { line: 1, start: 0 };
  try {
    loadAll(text, (v) => values.push(v), {
      schema: CORE,
      listener(event: 'open' | 'close', state: State) {
        if (event === 'open') {
          if (depth === 0) open = { line: state.line + 1, start: state.position + bom };
          depth++;
        } else if (--depth === 0) {
          spans.push({ ...open, end: state.position + bom });
        }
      },
    });
  } catch {
    return undefined;
  }
  if (spans.length !== values.length) return undefined;
  const seen = new Set<object>();
  if (values.some((v) => needsSlowWay(v, seen))) return undefined;
  return values.map((value, i) => ({
    value: compact(value),
    ...(spans[i] as { line: number; start: number; end: number }),
  }));
}
