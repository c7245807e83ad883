#!/usr/bin/env bash
# helm.sh: prints the path of a helm binary for the chart tests, building it
# from its Go module first when it is missing (about 75 s cold on two cores).
# The binary is cached under ~/.cache/resolute/helm/<version>; helm is never
# a dependency of the project's go.mod: it builds in a throwaway module.
# RESOLUTE_HELM, when set, is printed as is.
set -euo pipefail
if [ -n "${RESOLUTE_HELM:-}" ]; then echo "$RESOLUTE_HELM"; exit 0; fi
version=${HELM_VERSION:-v3.22.0}
dir="${XDG_CACHE_HOME:-$HOME/.cache}/resolute/helm/$version"
bin="$dir/helm"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  exec 9>"$dir/build.lock"
  flock 9 # another test process may be building it
fi
if [ ! -x "$bin" ]; then
  mod=$(mktemp -d "$dir/build.XXXXXX")
  trap 'rm -rf "$mod"' EXIT
  (
    cd "$mod"
    export GOFLAGS=-mod=mod GOWORK=off
    go mod init resolute-helm-build >/dev/null 2>&1
    go get "helm.sh/helm/v3@$version" >&2
    go build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$version" \
      -o "$bin.tmp" helm.sh/helm/v3/cmd/helm >&2
  )
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
