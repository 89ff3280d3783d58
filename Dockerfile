# The steadfast image: the control service, the demo backends and the compiled filter
# (steadfast.wasm, and the native module libsteadfast.so), built from this repository on
# Node 20. docker compose runs it, and so does the Helm chart (deploy/helm/steadfast).
FROM node:20-bookworm-slim AS build
WORKDIR /steadfast
# wasm2c and a C compiler build the native filter (docs/native-filter.md); the image requires it.
RUN apt-get update && apt-get install -y --no-install-recommends wabt gcc libc6-dev && rm -rf /var/lib/apt/lists/*
ENV STEADFAST_REQUIRE_NATIVE=1
COPY package.json package-lock.json ./
# --ignore-scripts: the postinstall fetches Envoy and grpcurl for local runs; compose uses
# the official Envoy image instead.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json asconfig.json tools.json ./
COPY extproc ./extproc
COPY backends ./backends
COPY filter ./filter
COPY scripts/build-native.mjs ./scripts/build-native.mjs
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /steadfast
ENV NODE_ENV=production
COPY --from=build /steadfast/package.json /steadfast/tools.json ./
COPY --from=build /steadfast/node_modules ./node_modules
COPY --from=build /steadfast/dist ./dist
COPY --from=build /steadfast/backends/proto ./backends/proto
COPY --from=build /steadfast/extproc/proto ./extproc/proto
COPY --from=build /steadfast/filter/build/steadfast.wasm /steadfast/filter/build/libsteadfast.so /steadfast/filter/build/native.json ./filter/build/
COPY bin ./bin
COPY scripts/compose-backend.mjs ./scripts/compose-backend.mjs
COPY scripts/image-entrypoint.sh ./scripts/image-entrypoint.sh
COPY examples ./examples
# compose mounts named volumes here: the filter and the generated configuration for Envoy,
# and the demo backends' shared attempt counts. Docker gives a new volume its directory's
# owner, so the node user can write into them.
RUN mkdir -p /shared/filter /shared/envoy /shared/attempts && chown node:node /shared/filter /shared/envoy /shared/attempts
USER node
EXPOSE 9902 50051
# `docker run IMAGE --version` or `docker run IMAGE validate /config` runs steadfast; `sh` or
# `node` (compose.yaml's commands) run as given.
ENTRYPOINT ["/steadfast/scripts/image-entrypoint.sh"]
CMD ["node", "bin/steadfast.js", "serve", "--config", "examples/quickstart", "--ext-proc-address", "0.0.0.0:50051", "--admin-address", "0.0.0.0", "--admin-port", "9902"]
