// Server reflection (`grpcurl -plaintext HOST:PORT list`, `describe`) for the control service's
// gRPC server, built when a client first asks. Building it reads ext_proc's protos (a good part
// of Envoy's API) and indexes every file twice, once per reflection version: ~0.9 s of the
// service thread's CPU at start and ~3 MiB held, for a service no Envoy calls. The services are
// registered at start all the same (their own small protos), so no client sees a difference.
import type * as grpc from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';

type Registered = {
  readonly definition: grpc.ServiceDefinition;
  readonly handlers: grpc.UntypedServiceImplementation;
};

/** What a ReflectionService registers on a server (both its versions), taken instead of served. */
function registered(service: ReflectionService): Registered[] {
  const services: Registered[] = [];
  service.addToServer({
    addService: (definition, handlers) => services.push({ definition, handlers }),
  });
  return services;
}

/** Each handler of `services` by its method's path. */
function byPath(services: readonly Registered[]): Map<string, grpc.UntypedHandleCall> {
  const out = new Map<string, grpc.UntypedHandleCall>();
  for (const { definition, handlers } of services) {
    for (const [name, method] of Object.entries(definition)) {
      const handler = handlers[name];
      if (handler) out.set(method.path, handler);
    }
  }
  return out;
}

export class LazyReflection {
  /** The services as registered: a reflection over no package registers the same ones. */
  private readonly services = registered(new ReflectionService({}));
  private handlers: Map<string, grpc.UntypedHandleCall> | undefined;

  /** `packages`: what reflection describes, read on the first reflection call. */
  constructor(private readonly packages: () => PackageDefinition) {}

  /** Registers both reflection services; each call builds the reflection first if no call has yet. */
  addToServer(server: Pick<grpc.Server, 'addService'>): void {
    for (const { definition } of this.services) {
      const handlers: grpc.UntypedServiceImplementation = {};
      for (const [name, method] of Object.entries(definition)) {
        handlers[name] = ((call: unknown) => {
          this.handlers ??= byPath(registered(new ReflectionService(this.packages())));
          (this.handlers.get(method.path) as (call: unknown) => void)(call);
        }) as grpc.UntypedHandleCall;
      }
      server.addService(definition, handlers);
    }
  }
}
