#!/usr/bin/env bash
# test.sh [go test flags...]: runs every test of the project against a
# PostgreSQL server of its own (unless RESOLUTE_TEST_DATABASE_URL is set), a
# Kubernetes control plane of its own (unless RESOLUTE_TEST_KUBECONFIG is set;
# see scripts/k8s.sh), object stores of its own (MinIO, fake-gcs-server and
# Azurite, unless RESOLUTE_TEST_S3_ENDPOINT is set; see scripts/objectstores.sh)
# and with the browser tests' driver and Chromium in place.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the run started, stopped in reverse order at exit.
on_exit=()
trap 'for ((i=${#on_exit[@]}-1; i>=0; i--)); do eval "${on_exit[i]}"; done' EXIT

if [ -z "${RESOLUTE_TEST_DATABASE_URL:-}" ]; then
  bin=$(pg_config --bindir 2>/dev/null || true)
  [ -x "$bin/initdb" ] || bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V -r | head -1)
  dir=$(mktemp -d /tmp/resolute-test-pg.XXXXXX)
  chmod 755 "$dir"
  as_pg=()
  if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; as_pg=(runuser -u postgres --); fi
  "${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
    "-c listen_addresses='' -k $dir -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null
  on_exit+=('"${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$dir"')
  export RESOLUTE_TEST_DATABASE_URL="postgres://postgres@/postgres?host=$dir&sslmode=disable"
fi

if [ -z "${RESOLUTE_TEST_KUBECONFIG:-}" ]; then
  k8s_dir=$(mktemp -d /tmp/resolute-test-k8s.XXXXXX)
  on_exit+=('RESOLUTE_K8S_DIR="$k8s_dir/run" scripts/k8s.sh down >/dev/null 2>&1 || true; rm -rf "$k8s_dir"')
  RESOLUTE_K8S_DIR="$k8s_dir/run" scripts/k8s.sh up >/dev/null
  export RESOLUTE_TEST_KUBECONFIG=$k8s_dir/run/kubeconfig
fi

if [ -z "${RESOLUTE_TEST_S3_ENDPOINT:-}" ]; then
  stores_dir=$(mktemp -d /tmp/resolute-test-objectstores.XXXXXX)
  on_exit+=('scripts/objectstores.sh down "$stores_dir/run" >/dev/null 2>&1 || true; rm -rf "$stores_dir"')
  exports=$(scripts/objectstores.sh up "$stores_dir/run") # fails the run when they cannot start
  eval "$exports"
fi

export PLAYWRIGHT_DRIVER_PATH=${PLAYWRIGHT_DRIVER_PATH:-$(scripts/playwright-driver.sh)}
export PLAYWRIGHT_NODEJS_PATH=${PLAYWRIGHT_NODEJS_PATH:-$(command -v node)}
export RESOLUTE_HELM=${RESOLUTE_HELM:-$(scripts/helm.sh)}
# The browser tests keep pictures of the main pages (e2e/screenshots/);
# the run ends naming the ones it took, passed or failed.
started=$(mktemp /tmp/resolute-test-start.XXXXXX)
on_exit+=('find e2e/screenshots -name "*.png" -newer "$started" 2>/dev/null | sort | sed "s/^/screenshot: /"; rm -f "$started"')
# The browser tests together take more than go test's default 10 minutes
# on a 2-core machine.
go test -count=1 -timeout 45m "$@" ./...
