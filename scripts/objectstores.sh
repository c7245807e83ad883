#!/usr/bin/env bash
# objectstores.sh build|up|down|env|status [DIR]: the project's test object
# stores, real servers for S3, GCS and Azure Blob Storage.
#
#   build  builds MinIO and fake-gcs-server from the Go module proxy and
#          installs Azurite from npm into the user's cache (skipped when they
#          are there already);
#   up     starts MinIO (S3), fake-gcs-server (GCS's JSON API) and Azurite's
#          blob service on free loopback ports with their data in the state
#          directory DIR, waits until each answers, and prints the export
#          lines that name them (eval "$(scripts/objectstores.sh up)");
#   down   stops them and removes DIR;
#   env    prints the export lines for the servers running in DIR;
#   status says whether they run.
#
# The export lines: RESOLUTE_TEST_S3_ENDPOINT, RESOLUTE_TEST_S3_ACCESS_KEY,
# RESOLUTE_TEST_S3_SECRET_KEY (MinIO, region us-east-1),
# RESOLUTE_TEST_GCS_ENDPOINT (what STORAGE_EMULATOR_HOST takes) and
# RESOLUTE_TEST_AZURE_BLOB_ENDPOINT (the blob service's URL for Azurite's
# well-known account devstoreaccount1). storage/storagetest makes a fresh
# bucket on them per test.
#
# Each tool is built in a throwaway module (never the project's go.mod) and
# kept under ~/.cache/resolute/objectstores/NAME-VERSION, so that changing a
# version here builds the new one. MinIO publishes no semver tags: its
# version is the pseudo-version of a commit. It is a test server only, run as
# a separate process; no code of it is linked into the project.
#
# Environment:
#   RESOLUTE_OBJECTSTORES_DIR        state directory when DIR is not given
#                                    (default ~/.cache/resolute/objectstores/run)
#   RESOLUTE_MINIO_VERSION           github.com/minio/minio version
#   RESOLUTE_FAKE_GCS_VERSION        github.com/fsouza/fake-gcs-server version
#   RESOLUTE_AZURITE_VERSION         azurite version on npm
#   RESOLUTE_OBJECTSTORES_WATCH_PID  up: stop the servers when this process ends
set -euo pipefail

minio_version=${RESOLUTE_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}
fake_gcs_version=${RESOLUTE_FAKE_GCS_VERSION:-v1.56.1}
azurite_version=${RESOLUTE_AZURITE_VERSION:-3.37.0}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/resolute/objectstores
state=${2:-${RESOLUTE_OBJECTSTORES_DIR:-$cache/run}}
here=$(cd "$(dirname "$0")" && pwd)
minio_bin=$cache/minio-$minio_version/minio
fake_gcs_bin=$cache/fake-gcs-server-$fake_gcs_version/fake-gcs-server
azurite_dir=$cache/azurite-$azurite_version
azurite_bin=$azurite_dir/node_modules/azurite/dist/src/blob/main.js

# The servers' credentials: MinIO's root user, and Azurite's well-known
# development account (public, in Azure's docs).
s3_access_key=resolute-test
s3_secret_key=resolute-test-secret
azure_account=devstoreaccount1

die() { echo "objectstores.sh: $*" >&2; exit 1; }

built() { [ -x "$minio_bin" ] && [ -x "$fake_gcs_bin" ] && [ -f "$azurite_bin" ]; }

# go_build MODULE@VERSION PACKAGE OUT builds a Go command from the module
# proxy in a throwaway module under the cache.
go_build() {
  local mod=$1 pkg=$2 out=$3 src
  mkdir -p "$(dirname "$out")"
  src=$(mktemp -d "$cache/build.XXXXXX")
  (
    cd "$src"
    export GOFLAGS=-mod=mod GOWORK=off
    go mod init resolute.local/objectstores-build >/dev/null 2>&1
    go get "$mod" >&2
    go build -trimpath -ldflags "-s -w" -o "$out.tmp" "$pkg" >&2
  ) || { rm -rf "$src"; return 1; }
  rm -rf "$src"
  mv "$out.tmp" "$out"
}

build() {
  built && return 0
  mkdir -p "$cache"
  exec 9>"$cache/build.lock"
  flock 9 # another build (setup.sh, a test process) may be running
  built && return 0
  local start=$SECONDS
  if [ ! -x "$minio_bin" ]; then
    command -v go >/dev/null || die "go is not on PATH"
    echo "objectstores.sh: building MinIO $minio_version into $(dirname "$minio_bin") (minutes, once)" >&2
    go_build "github.com/minio/minio@$minio_version" github.com/minio/minio "$minio_bin" ||
      die "building MinIO $minio_version failed"
  fi
  if [ ! -x "$fake_gcs_bin" ]; then
    command -v go >/dev/null || die "go is not on PATH"
    echo "objectstores.sh: building fake-gcs-server $fake_gcs_version into $(dirname "$fake_gcs_bin")" >&2
    go_build "github.com/fsouza/fake-gcs-server@$fake_gcs_version" github.com/fsouza/fake-gcs-server "$fake_gcs_bin" ||
      die "building fake-gcs-server $fake_gcs_version failed"
  fi
  if [ ! -f "$azurite_bin" ]; then
    command -v npm >/dev/null || die "npm is not on PATH"
    echo "objectstores.sh: installing azurite@$azurite_version into $azurite_dir" >&2
    rm -rf "$azurite_dir.tmp"
    mkdir -p "$azurite_dir.tmp"
    npm install --prefix "$azurite_dir.tmp" --no-audit --no-fund --omit=dev --loglevel=error \
      "azurite@$azurite_version" >&2 || die "installing azurite@$azurite_version failed"
    rm -rf "$azurite_dir"
    mv "$azurite_dir.tmp" "$azurite_dir"
    # npm records absolute paths nowhere that matters here; main.js is
    # started with node directly.
  fi
  echo "objectstores.sh: built in $((SECONDS - start))s" >&2
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    die "python3 is needed to pick free ports"
}

# running says whether the servers in $state are up.
running() {
  [ -f "$state/pids" ] && [ -f "$state/env" ] || return 1
  local pid
  while read -r _ pid; do kill -0 "$pid" 2>/dev/null || return 1; done <"$state/pids"
}

# answers NAME URL says whether a server answers HTTP at URL (any status:
# Azurite refuses an unsigned request, which is an answer).
answers() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$2" 2>/dev/null) || true
  [ -n "$code" ] && [ "$code" != 000 ]
}

up() {
  command -v curl >/dev/null || die "curl is missing"
  command -v node >/dev/null || die "node is missing"
  build
  if running; then
    echo "objectstores.sh: already running in $state" >&2
    cat "$state/env"
    return 0
  fi
  stop_processes
  local start=$SECONDS
  # A start that fails stops what it started (its logs stay in $state/logs).
  trap '[ $? = 0 ] || stop_processes' EXIT
  mkdir -p "$state/minio" "$state/gcs" "$state/azurite" "$state/logs"
  chmod 700 "$state"
  local s3_port console_port gcs_port azure_port
  s3_port=$(free_port); console_port=$(free_port); gcs_port=$(free_port); azure_port=$(free_port)
  : >"$state/pids"

  MINIO_ROOT_USER=$s3_access_key MINIO_ROOT_PASSWORD=$s3_secret_key \
    MINIO_BROWSER=off MINIO_UPDATE=off MINIO_CALLHOME_ENABLE=off \
    "$minio_bin" server --quiet --anonymous \
    --address "127.0.0.1:$s3_port" --console-address "127.0.0.1:$console_port" \
    "$state/minio" >"$state/logs/minio.log" 2>&1 &
  echo "minio $!" >>"$state/pids"

  "$fake_gcs_bin" -scheme http -host 127.0.0.1 -port "$gcs_port" \
    -public-host "127.0.0.1:$gcs_port" -external-url "http://127.0.0.1:$gcs_port" \
    -backend filesystem -filesystem-root "$state/gcs" -log-level warn \
    >"$state/logs/fake-gcs-server.log" 2>&1 &
  echo "fake-gcs-server $!" >>"$state/pids"

  node "$azurite_bin" --blobHost 127.0.0.1 --blobPort "$azure_port" --location "$state/azurite" \
    --loose --skipApiVersionCheck --disableProductStyleUrl --disableTelemetry --silent \
    >"$state/logs/azurite.log" 2>&1 &
  echo "azurite $!" >>"$state/pids"

  local i
  for i in $(seq 1 1200); do
    if curl -fs --max-time 2 "http://127.0.0.1:$s3_port/minio/health/live" >/dev/null 2>&1 &&
      curl -fs --max-time 2 "http://127.0.0.1:$gcs_port/storage/v1/b" >/dev/null 2>&1 &&
      answers azurite "http://127.0.0.1:$azure_port/$azure_account?comp=list"; then break; fi
    running_pids || { tail -n 20 "$state/logs/"*.log >&2; die "a server stopped while starting (logs in $state/logs)"; }
    sleep 0.1
  done
  [ "$i" -lt 1200 ] || { tail -n 20 "$state/logs/"*.log >&2; die "the servers did not answer in 120s (logs in $state/logs)"; }

  # A test process that starts servers of its own names itself in
  # RESOLUTE_OBJECTSTORES_WATCH_PID: when it ends, however it ends, a watcher
  # stops them and removes the state directory.
  if [ -n "${RESOLUTE_OBJECTSTORES_WATCH_PID:-}" ]; then
    setsid bash -c \
      'while kill -0 "$1" 2>/dev/null && [ -f "$2/pids" ]; do sleep 1; done; [ -f "$2/pids" ] && "$3" down "$2"' \
      _ "$RESOLUTE_OBJECTSTORES_WATCH_PID" "$state" "$here/objectstores.sh" </dev/null >/dev/null 2>&1 &
  fi
  cat >"$state/env" <<EOF
export RESOLUTE_TEST_S3_ENDPOINT=http://127.0.0.1:$s3_port
export RESOLUTE_TEST_S3_ACCESS_KEY=$s3_access_key
export RESOLUTE_TEST_S3_SECRET_KEY=$s3_secret_key
export RESOLUTE_TEST_GCS_ENDPOINT=http://127.0.0.1:$gcs_port
export RESOLUTE_TEST_AZURE_BLOB_ENDPOINT=http://127.0.0.1:$azure_port/$azure_account
EOF
  echo "objectstores.sh: MinIO, fake-gcs-server and Azurite up in $((SECONDS - start))s (state in $state)" >&2
  echo "objectstores.sh: use them with: eval \"\$(scripts/objectstores.sh env${2:+ $state})\"" >&2
  cat "$state/env"
  trap - EXIT
}

# running_pids says whether every process up started is alive.
running_pids() {
  local pid
  while read -r _ pid; do kill -0 "$pid" 2>/dev/null || return 1; done <"$state/pids"
}

# stop_processes stops what up started, with SIGKILL for what is left after
# 5 seconds.
stop_processes() {
  [ -f "$state/pids" ] || return 0
  local name pid alive
  while read -r name pid; do kill "$pid" 2>/dev/null || true; done <"$state/pids"
  for _ in $(seq 1 50); do
    alive=0
    while read -r name pid; do kill -0 "$pid" 2>/dev/null && alive=1; done <"$state/pids"
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  while read -r name pid; do kill -9 "$pid" 2>/dev/null || true; done <"$state/pids"
  rm -f "$state/pids"
}

down() {
  stop_processes
  rm -rf "$state"
  echo "objectstores.sh: stopped" >&2
}

case "${1:-}" in
build) build ;;
up) up "$@" ;;
down) down ;;
env)
  running || die "not running in $state (scripts/objectstores.sh up${2:+ $state})"
  cat "$state/env"
  ;;
status)
  if running; then echo "running in $state"; else echo "not running"; exit 1; fi
  ;;
*) die "usage: objectstores.sh build|up|down|env|status [DIR]" ;;
esac
