// A small, total JSON reader for the plugin configuration (parsed once, at configure).
// Any malformed input yields null; nesting deeper than MAX_DEPTH is refused.

const MAX_DEPTH = 16;

export enum JsonKind {
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

export class JsonValue {
  kind: JsonKind = JsonKind.Null;
  bool: bool = false;
  num: f64 = 0;
  str: string = '';
  items: JsonValue[] = [];
  keys: string[] = [];

  /** The member named `key` of an object, or null. */
  get(key: string): JsonValue | null {
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keys[i] == key) return this.items[i];
    }
    return null;
  }
}

class Reader {
  pos: i32 = 0;
  failed: bool = false;
  constructor(public text: string) {}

  @inline peek(): i32 {
    return this.pos < this.text.length ? this.text.charCodeAt(this.pos) : -1;
  }

  skipSpace(): void {
    while (this.pos < this.text.length) {
      const c = this.text.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  literal(word: string): bool {
    if (this.text.length - this.pos < word.length) return false;
    for (let i = 0; i < word.length; i++) {
      if (this.text.charCodeAt(this.pos + i) != word.charCodeAt(i)) return false;
    }
    this.pos += word.length;
    return true;
  }

  value(depth: i32): JsonValue | null {
    if (depth > MAX_DEPTH) return null;
    this.skipSpace();
    const c = this.peek();
    const v = new JsonValue();
    if (c == 0x7b) return this.object(depth);
    if (c == 0x5b) return this.array(depth);
    if (c == 0x22) {
      const s = this.string();
      if (s == null) return null;
      v.kind = JsonKind.String;
      v.str = s;
      return v;
    }
    if (c == 0x74 && this.literal('true')) {
      v.kind = JsonKind.Bool;
      v.bool = true;
      return v;
    }
    if (c == 0x66 && this.literal('false')) {
      v.kind = JsonKind.Bool;
      return v;
    }
    if (c == 0x6e && this.literal('null')) return v;
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    return null;
  }

  number(): JsonValue | null {
    const start = this.pos;
    if (this.peek() == 0x2d) this.pos++;
    let digits = 0;
    while (this.peek() >= 0x30 && this.peek() <= 0x39) {
      this.pos++;
      digits++;
    }
    if (digits == 0) return null;
    if (this.peek() == 0x2e) {
      this.pos++;
      let frac = 0;
      while (this.peek() >= 0x30 && this.peek() <= 0x39) {
        this.pos++;
        frac++;
      }
      if (frac == 0) return null;
    }
    const e = this.peek();
    if (e == 0x65 || e == 0x45) {
      this.pos++;
      if (this.peek() == 0x2b || this.peek() == 0x2d) this.pos++;
      let exp = 0;
      while (this.peek() >= 0x30 && this.peek() <= 0x39) {
        this.pos++;
        exp++;
      }
      if (exp == 0) return null;
    }
    const v = new JsonValue();
    v.kind = JsonKind.Number;
    v.num = F64.parseFloat(this.text.substring(start, this.pos));
    return v;
  }

  hex4(): i32 {
    if (this.text.length - this.pos < 4) return -1;
    let n = 0;
    for (let i = 0; i < 4; i++) {
      const c = this.text.charCodeAt(this.pos + i);
      let d = -1;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      if (d < 0) return -1;
      n = (n << 4) | d;
    }
    this.pos += 4;
    return n;
  }

  string(): string | null {
    this.pos++; // opening quote
    let out = '';
    let runStart = this.pos;
    while (this.pos < this.text.length) {
      const c = this.text.charCodeAt(this.pos);
      if (c == 0x22) {
        out += this.text.substring(runStart, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) return null;
      if (c != 0x5c) {
        this.pos++;
        continue;
      }
      out += this.text.substring(runStart, this.pos);
      this.pos++;
      const e = this.peek();
      this.pos++;
      if (e == 0x22) out += '"';
      else if (e == 0x5c) out += '\\';
      else if (e == 0x2f) out += '/';
      else if (e == 0x62) out += '\b';
      else if (e == 0x66) out += '\f';
      else if (e == 0x6e) out += '\n';
      else if (e == 0x72) out += '\r';
      else if (e == 0x74) out += '\t';
      else if (e == 0x75) {
        const u = this.hex4();
        if (u < 0) return null;
        out += String.fromCharCode(u);
      } else return null;
      runStart = this.pos;
    }
    return null;
  }

  array(depth: i32): JsonValue | null {
    this.pos++;
    const v = new JsonValue();
    v.kind = JsonKind.Array;
    this.skipSpace();
    if (this.peek() == 0x5d) {
      this.pos++;
      return v;
    }
    while (true) {
      const item = this.value(depth + 1);
      if (item == null) return null;
      v.items.push(item);
      this.skipSpace();
      const c = this.peek();
      this.pos++;
      if (c == 0x5d) return v;
      if (c != 0x2c) return null;
    }
    return null;
  }

  object(depth: i32): JsonValue | null {
    this.pos++;
    const v = new JsonValue();
    v.kind = JsonKind.Object;
    this.skipSpace();
    if (this.peek() == 0x7d) {
      this.pos++;
      return v;
    }
    while (true) {
      this.skipSpace();
      if (this.peek() != 0x22) return null;
      const key = this.string();
      if (key == null) return null;
      this.skipSpace();
      if (this.peek() != 0x3a) return null;
      this.pos++;
      const item = this.value(depth + 1);
      if (item == null) return null;
      v.keys.push(key);
      v.items.push(item);
      this.skipSpace();
      const c = this.peek();
      this.pos++;
      if (c == 0x7d) return v;
      if (c != 0x2c) return null;
    }
    return null;
  }
}

/** Parses a whole JSON document; null if it is not exactly one valid value. */
export function parseJson(text: string): JsonValue | null {
  const r = new Reader(text);
  const v = r.value(0);
  if (v == null) return null;
  r.skipSpace();
  return r.pos == text.length ? v : null;
}
