// Where steadfast's own .proto files are (extproc/proto): beside the sources, or, from the
// compiled dist/ tree, two levels further up.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function ownProtoDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../proto', '../../../extproc/proto']) {
    const dir = join(here, up);
    if (existsSync(join(dir, 'grpc/health/v1/health.proto'))) return dir;
  }
  throw new Error(`cannot find extproc/proto from ${here}`);
}
