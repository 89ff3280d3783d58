// @types/node 20 does not declare the WebAssembly global that Node provides. This is
// the part of it the tests use (the emulator and the known-answer harness).
declare namespace WebAssembly {
  type ImportExportKind = 'function' | 'table' | 'memory' | 'global';
  interface ModuleImportDescriptor {
    readonly module: string;
    readonly name: string;
    readonly kind: ImportExportKind;
  }
  interface ModuleExportDescriptor {
    readonly name: string;
    readonly kind: ImportExportKind;
  }
  class Module {
    constructor(bytes: Uint8Array);
    static imports(module: Module): ModuleImportDescriptor[];
    static exports(module: Module): ModuleExportDescriptor[];
  }
  class Memory {
    constructor(descriptor: { initial: number; maximum?: number });
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  type ExportValue = Function | Memory | object;
  type Exports = Record<string, ExportValue>;
  type ImportValue = ExportValue | number | bigint;
  type Imports = Record<string, Record<string, ImportValue>>;
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Exports;
  }
  class RuntimeError extends Error {}
  function compile(bytes: Uint8Array): Promise<Module>;
  function instantiate(module: Module, imports?: Imports): Promise<Instance>;
}
