#!/bin/sh
# The steadfast image's entry point: `docker run IMAGE --version`, `docker run IMAGE validate
# /config` run steadfast; a program of the image (sh, node, as compose.yaml's services run)
# runs as given. The same rule as the node image's own entry point, for steadfast.
set -e
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ] || ! command -v "$1" >/dev/null 2>&1; then
  set -- node /steadfast/bin/steadfast.js "$@"
fi
exec "$@"
