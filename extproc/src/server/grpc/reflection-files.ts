// The proto files server reflection answers with. proto-loader hands one file per package and
// leaves each file's list of the files it imports empty (grpc/grpc-node#2595): `grpcurl list`
// works from the service names alone, but `describe` builds each file from what it is sent and
// cannot resolve a type of another package (ext_proc's messages use envoy.config.core.v3's).
// Here each type a file names is resolved to the file that declares it, written absolute as
// protoc writes it (`.package.Type`), and those files listed as its imports. Only what the
// services use is kept: the annotations Envoy's protos import (validate, udpa, xds) carry
// options, which these descriptors do not, and they extend descriptor.proto's messages, which
// proto-loader files with the well-known types under proto3 (a client refuses their proto2
// defaults there).
import type * as protoLoader from '@grpc/proto-loader';
import descriptor from 'protobufjs/ext/descriptor/index.js';

/** A field, extension or method: the types it names. */
interface TypeRefs {
  name?: string;
  typeName?: string;
  extendee?: string;
  inputType?: string;
  outputType?: string;
}

interface MessageProto {
  name?: string;
  field?: TypeRefs[];
  extension?: TypeRefs[];
  nestedType?: MessageProto[];
  enumType?: { name?: string }[];
  options?: { mapEntry?: boolean };
  reservedRange?: { end?: number }[];
  extensionRange?: { end?: number }[];
}

interface FileProto {
  name?: string;
  package?: string;
  dependency?: string[];
  messageType?: MessageProto[];
  enumType?: { name?: string }[];
  extension?: TypeRefs[];
  service?: { name?: string; method?: TypeRefs[] }[];
}

/** Where a message or enum is declared: its file, and the top-level type it is (or is nested in). */
interface Declaration {
  readonly file: string;
  readonly top: string;
}

/** Each file of the definitions once, by name: every definition of one load carries the same list. */
function filesOf(packages: readonly protoLoader.PackageDefinition[]): Map<string, FileProto> {
  const files = new Map<string, FileProto>();
  const lists = new Set<readonly Buffer[]>();
  for (const pkg of packages) {
    for (const def of Object.values(pkg)) {
      const list = (def as Partial<protoLoader.ProtobufTypeDefinition>).fileDescriptorProtos;
      if (list) lists.add(list);
    }
  }
  for (const list of lists) {
    for (const bytes of list) {
      const file = descriptor.FileDescriptorProto.decode(bytes) as FileProto;
      if (file.name && !files.has(file.name)) files.set(file.name, file);
    }
  }
  return files;
}

const scopeOf = (file: FileProto): string => (file.package ? `.${file.package}` : '');

/** Walks messages (nested ones too) with the absolute name of each. */
function eachMessage(
  messages: readonly MessageProto[] | undefined,
  scope: string,
  visit: (m: MessageProto, full: string) => void,
): void {
  for (const m of messages ?? []) {
    const full = `${scope}.${m.name ?? ''}`;
    visit(m, full);
    eachMessage(m.nestedType, full, visit);
  }
}

/** A map field's entry type as protoc names it: `labels_by_key` → `LabelsByKeyEntry`. */
function entryName(field: string): string {
  return `${field.replace(/(?:^|_+)([a-z]?)/g, (_, c: string) => c.toUpperCase())}Entry`;
}

/**
 * Names each map field's entry type as protoc does, which a client checks: protobufjs names it
 * after the field alone (`Fields` for `fields`, not `FieldsEntry`).
 */
function nameMapEntries(file: FileProto): void {
  eachMessage(file.messageType, scopeOf(file), (m) => {
    for (const f of m.field ?? []) {
      const entry = m.nestedType?.find((n) => n.options?.mapEntry === true && n.name === f.typeName);
      if (!entry || !f.name) continue;
      entry.name = entryName(f.name);
      f.typeName = entry.name;
    }
  });
}

/** Every message and enum by its absolute name (`.package.Message.Nested`). */
function declarations(files: ReadonlyMap<string, FileProto>): Map<string, Declaration> {
  const declared = new Map<string, Declaration>();
  for (const [file, proto] of files) {
    const scope = scopeOf(proto);
    for (const e of proto.enumType ?? []) {
      const full = `${scope}.${e.name ?? ''}`;
      declared.set(full, { file, top: full });
    }
    for (const top of proto.messageType ?? []) {
      const topName = `${scope}.${top.name ?? ''}`;
      eachMessage([top], scope, (m, full) => {
        declared.set(full, { file, top: topName });
        for (const e of m.enumType ?? []) declared.set(`${full}.${e.name ?? ''}`, { file, top: topName });
      });
    }
  }
  return declared;
}

/** `ref` as named in `scope`, absolute: looked up from the innermost scope out, as protoc does. */
function resolve(declared: ReadonlyMap<string, Declaration>, ref: string, scope: string): string | undefined {
  if (ref.startsWith('.')) return declared.has(ref) ? ref : undefined;
  for (let at = scope; ; at = at.slice(0, at.lastIndexOf('.'))) {
    if (declared.has(`${at}.${ref}`)) return `${at}.${ref}`;
    if (at === '') return undefined;
  }
}

/**
 * Writes the types `file` names absolute, its ranges' ends past their last number (protobufjs
 * writes the last number, a client reads `reserved 1` as nothing reserved below 1), and leaves
 * out its extensions. protobufjs also adds each extension to the message it extends, as a field
 * named `.package.name`: not a field of that message, and one that made descriptor.proto's
 * file import the annotations' back.
 */
function absolute(file: FileProto, declared: ReadonlyMap<string, Declaration>): void {
  const fix = (refs: TypeRefs, key: 'typeName' | 'inputType' | 'outputType', scope: string) => {
    const ref = refs[key];
    const full = ref ? resolve(declared, ref, scope) : undefined;
    if (full !== undefined) refs[key] = full;
  };
  file.extension = [];
  eachMessage(file.messageType, scopeOf(file), (m, full) => {
    m.extension = [];
    m.field = m.field?.filter((f) => !f.name?.startsWith('.'));
    for (const r of [...(m.reservedRange ?? []), ...(m.extensionRange ?? [])]) r.end = (r.end ?? 0) + 1;
    for (const f of m.field ?? []) fix(f, 'typeName', full);
  });
  for (const method of (file.service ?? []).flatMap((s) => s.method ?? [])) {
    fix(method, 'inputType', scopeOf(file));
    fix(method, 'outputType', scopeOf(file));
  }
}

/** The top-level types the services use, directly or through the fields of the types they use. */
function usedTypes(
  files: ReadonlyMap<string, FileProto>,
  declared: ReadonlyMap<string, Declaration>,
): Set<string> {
  const tops = new Map<string, MessageProto>();
  for (const file of files.values()) {
    for (const m of file.messageType ?? []) tops.set(`${scopeOf(file)}.${m.name ?? ''}`, m);
  }
  const used = new Set<string>();
  const pending: string[] = [];
  const use = (name: string | undefined) => {
    const top = name === undefined ? undefined : declared.get(name)?.top;
    if (top === undefined || used.has(top)) return;
    used.add(top);
    pending.push(top);
  };
  for (const file of files.values()) {
    for (const method of (file.service ?? []).flatMap((s) => s.method ?? [])) {
      use(method.inputType);
      use(method.outputType);
    }
  }
  for (let top = pending.pop(); top !== undefined; top = pending.pop()) {
    eachMessage(
      tops.has(top) ? [tops.get(top) as MessageProto] : [],
      top.slice(0, top.lastIndexOf('.')),
      (m) => {
        for (const f of m.field ?? []) use(f.typeName);
      },
    );
  }
  return used;
}

/** `file` with only the types used, importing the files of the types it names; undefined when nothing is left. */
function pruned(
  file: FileProto,
  used: ReadonlySet<string>,
  declared: ReadonlyMap<string, Declaration>,
): FileProto | undefined {
  const scope = scopeOf(file);
  file.messageType = file.messageType?.filter((m) => used.has(`${scope}.${m.name ?? ''}`));
  file.enumType = file.enumType?.filter((e) => used.has(`${scope}.${e.name ?? ''}`));
  if (!file.service?.length && !file.messageType?.length && !file.enumType?.length) return undefined;
  const imports = new Set<string>();
  const from = (name: string | undefined) => {
    const where = name === undefined ? undefined : declared.get(name)?.file;
    if (where !== undefined && where !== file.name) imports.add(where);
  };
  eachMessage(file.messageType, scope, (m) => (m.field ?? []).forEach((f) => from(f.typeName)));
  for (const method of (file.service ?? []).flatMap((s) => s.method ?? [])) {
    from(method.inputType);
    from(method.outputType);
  }
  file.dependency = [...imports].sort();
  return file;
}

/**
 * The package definitions as reflection should describe them: one definition carrying the
 * files, each naming the files it imports. (The reflection service reads only the files;
 * handing them once also spares it decoding the whole list once per message type.)
 */
export function reflectionPackage(
  packages: readonly protoLoader.PackageDefinition[],
): protoLoader.PackageDefinition {
  const files = filesOf(packages);
  for (const file of files.values()) nameMapEntries(file);
  const declared = declarations(files);
  for (const file of files.values()) absolute(file, declared);
  const used = usedTypes(files, declared);
  const fileDescriptorProtos: Buffer[] = [];
  for (const file of files.values()) {
    const kept = pruned(file, used, declared);
    if (kept) fileDescriptorProtos.push(Buffer.from(descriptor.FileDescriptorProto.encode(kept).finish()));
  }
  // Any one message definition, carrying these files in place of its own list.
  for (const pkg of packages) {
    for (const [name, def] of Object.entries(pkg)) {
      if (def.format === 'Protocol Buffer 3 DescriptorProto')
        return { [name]: { ...def, fileDescriptorProtos } };
    }
  }
  return {};
}
