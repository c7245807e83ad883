#!/usr/bin/env bash
# k8s.sh build|up|down|env|status: the project's test Kubernetes control plane.
#
#   build  builds kube-apiserver and kube-scheduler (k8s.io/kubernetes), etcd
#          and kwok from the Go module proxy into the user's cache (skipped
#          when they are there already);
#   up     starts etcd, kube-apiserver, kube-scheduler
#          and kwok on free loopback ports in a state directory, waits until
#          the apiserver is healthy and writes a kubeconfig there;
#   down   stops them and removes the state directory;
#   env    prints `export KUBECONFIG=...` for the running control plane.
#
# There is no kube-controller-manager and no kubelet: kwok plays the kubelets
# of nodes that carry the annotation kwok.x-k8s.io/node=fake, and tests (see
# k8s/k8stest) may run their pods as local processes.
#
# Environment:
#   RESOLUTE_K8S_DIR      state directory (default ~/.cache/resolute/k8s/run)
#   RESOLUTE_K8S_VERSION  Kubernetes version to build (default v1.36.3)
#   RESOLUTE_KWOK_VERSION kwok version to build (default v0.8.0)
#   RESOLUTE_ETCD_VERSION etcd version to build (default v3.6.8)
#   RESOLUTE_K8S_ETCD     an etcd binary to use instead (>= 3.5.13 or 3.4.31:
#                         older ones lack the watch progress requests that
#                         client-go's watch-list informers need)
#   RESOLUTE_K8S_WATCH_PID  up: stop the control plane when this process ends
set -euo pipefail

k8s_version=${RESOLUTE_K8S_VERSION:-v1.36.3}
kwok_version=${RESOLUTE_KWOK_VERSION:-v0.8.0}
etcd_version=${RESOLUTE_ETCD_VERSION:-v3.6.8}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/resolute/k8s
bin=$cache/$k8s_version/bin
state=${RESOLUTE_K8S_DIR:-$cache/run}
here=$(cd "$(dirname "$0")" && pwd)
# etcd and kwok are named after their versions (and kwok after its patches,
# see patch_kwok), so that changing one here rebuilds it.
etcd_bin=$bin/etcd-$etcd_version
kwok_bin=$bin/kwok-$kwok_version-resolute2

die() { echo "k8s.sh: $*" >&2; exit 1; }

built() {
  { [ -n "${RESOLUTE_K8S_ETCD:-}" ] || [ -x "$etcd_bin" ]; } &&
    [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kube-scheduler" ] && [ -x "$kwok_bin" ] &&
    [ -f "$bin/crd/kwok.x-k8s.io_logs.yaml" ] && [ -f "$bin/crd/kwok.x-k8s.io_execs.yaml" ]
}

# build: the binaries, each built in a throwaway module under the cache (never
# the project's go.mod). k8s.io/kubernetes refers to its staging modules as
# ./staging/src/k8s.io/*, so the build module replaces each with its published
# v0.x.y; the proxy's checksum database cannot vouch for k8s.io/kubernetes
# itself, hence GONOSUMDB.
build() {
  built && return 0
  command -v go >/dev/null || die "go is not on PATH"
  mkdir -p "$cache/$k8s_version"
  exec 9>"$cache/$k8s_version/build.lock"
  flock 9 # another build (test.sh, k8stest.Start) may be running
  built && return 0

  local start=$SECONDS src=$cache/$k8s_version/src staging_version=v0.${k8s_version#v1.}
  export GONOSUMDB=k8s.io/kubernetes,k8s.io/controller-manager GOFLAGS=-mod=mod GOWORK=off
  mkdir -p "$src" "$bin"
  if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kube-scheduler" ]; then
    echo "k8s.sh: building kube-apiserver and kube-scheduler $k8s_version into $bin (a few minutes, once)" >&2
    (
      cd "$src"
      rm -f go.mod go.sum
      go mod init resolute.local/k8s-build >/dev/null 2>&1
      local mod
      mod=$(go mod download -json "k8s.io/kubernetes@$k8s_version" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')
      [ -f "$mod" ] || die "cannot download k8s.io/kubernetes@$k8s_version"
      local args=(-require="k8s.io/kubernetes@$k8s_version")
      for m in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$mod"); do
        args+=(-replace="$m=$m@$staging_version")
      done
      go mod edit "${args[@]}"
      cat >tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
EOF
      local minor=${k8s_version#v1.}; minor=${minor%%.*}
      local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version
        -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor
        -X k8s.io/component-base/version.gitTreeState=clean"
      for cmd in kube-apiserver kube-scheduler; do
        go build -trimpath -ldflags "$ldflags" -o "$bin/.$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
        mv "$bin/.$cmd.tmp" "$bin/$cmd"
      done
    ) || die "building Kubernetes $k8s_version failed"
  fi
  # etcd as Kubernetes uses it: Debian's (3.4.23) cannot serve the watch
  # progress requests that client-go's informers rely on, and without them
  # every informer (kwok's, the scheduler's, the tests') falls back after
  # failed watches, with growing back-off: events arrive tens of seconds late.
  if [ -z "${RESOLUTE_K8S_ETCD:-}" ] && [ ! -x "$etcd_bin" ]; then
    echo "k8s.sh: building etcd $etcd_version into $bin" >&2
    mkdir -p "$src/etcd"
    (
      cd "$src/etcd"
      rm -f go.mod go.sum
      go mod init resolute.local/etcd-build >/dev/null 2>&1
      go mod edit -require="go.etcd.io/etcd/server/v3@$etcd_version"
      go build -trimpath -ldflags "-s -w" -o "$bin/.etcd.tmp" go.etcd.io/etcd/server/v3
      mv "$bin/.etcd.tmp" "$etcd_bin"
    ) || die "building etcd $etcd_version failed"
  fi
  if [ ! -x "$kwok_bin" ] || [ ! -f "$bin/crd/kwok.x-k8s.io_logs.yaml" ]; then
    echo "k8s.sh: building kwok $kwok_version into $bin" >&2
    (
      local dir
      dir=$(cd "$src" && go mod download -json "sigs.k8s.io/kwok@$kwok_version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
      [ -d "$dir" ] || die "cannot download sigs.k8s.io/kwok@$kwok_version"
      { [ ! -d "$src/kwok" ] || chmod -R u+w "$src/kwok"; } && rm -rf "$src/kwok" && cp -r "$dir" "$src/kwok" && chmod -R u+w "$src/kwok"
      patch_kwok "$src/kwok"
      mkdir -p "$bin/crd"
      cp "$src/kwok/kustomize/crd/bases/kwok.x-k8s.io_logs.yaml" "$src/kwok/kustomize/crd/bases/kwok.x-k8s.io_execs.yaml" "$bin/crd/"
      cd "$src/kwok" && go build -trimpath -ldflags "-s -w" -o "$bin/.kwok.tmp" ./cmd/kwok
      mv "$bin/.kwok.tmp" "$kwok_bin"
    ) || die "building kwok $kwok_version failed"
  fi
  echo "k8s.sh: built in $((SECONDS - start))s" >&2
}

# patch_kwok makes kwok's kubelet API behave like a kubelet's in two ways
# the tests need:
#   - `logs --follow` ends when the container has exited: kwok has no
#     container runtime, so its CRI log reader believes every container runs
#     and a follow never ends. Patched, the reader asks whether LOGFILE.exited
#     exists (k8stest's pod runner creates it when the process exits).
#   - exec reports the command's exit code (as exec.CodeExitError) instead of
#     an internal error.
patch_kwok() {
  local logs=$1/pkg/kwok/server/debugging_logs.go exec=$1/pkg/kwok/server/debugging_exec.go
  sed -i \
    -e 's|crilogs.ReadLogs(ctx, logsFile, "", opts|crilogs.ReadLogs(ctx, logsFile, logsFile, opts|' \
    -e 's|^\t"io"$|\t"io"\n\t"os"|' \
    -e 's|^func (runtimeServiceStub) ContainerStatus(ctx context.Context, containerID string, verbose bool) (\*runtimeapi.ContainerStatusResponse, error) {$|&\n\tif _, err := os.Stat(containerID + ".exited"); containerID != "" \&\& err == nil {\n\t\treturn \&runtimeapi.ContainerStatusResponse{Status: \&runtimeapi.ContainerStatus{Id: containerID, State: runtimeapi.ContainerState_CONTAINER_EXITED}}, nil\n\t}|' \
    "$logs"
  sed -i \
    -e 's|^\t"context"$|\t"context"\n\t"errors"\n\tosexec "os/exec"|' \
    -e 's|^\t"github.com/emicklei/go-restful/v3"$|&\n\tk8sexec "k8s.io/utils/exec"|' \
    -e 's|^\terr := utilsexec.Exec(ctx, cmd\[0\], cmd\[1:\]...)$|&\n\tif exitErr := (*osexec.ExitError)(nil); errors.As(err, \&exitErr) \&\& exitErr.Exited() {\n\t\terr = k8sexec.CodeExitError{Err: err, Code: exitErr.ExitCode()}\n\t}|' \
    "$exec"
  grep -q 'containerID + ".exited"' "$logs" && grep -q 'ReadLogs(ctx, logsFile, logsFile' "$logs" &&
    grep -q 'k8sexec.CodeExitError' "$exec" && grep -q 'k8sexec "k8s.io/utils/exec"' "$exec" ||
    die "patching kwok failed (kwok changed? see patch_kwok)"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    die "python3 is needed to pick free ports"
}

# running says whether the control plane in $state is up.
running() {
  [ -f "$state/pids" ] || return 1
  local pid
  while read -r _ pid; do kill -0 "$pid" 2>/dev/null || return 1; done <"$state/pids"
}

up() {
  command -v openssl >/dev/null || die "openssl is missing"
  build
  if running; then
    echo "k8s.sh: already running in $state" >&2
    echo "export KUBECONFIG=$state/kubeconfig"
    return 0
  fi
  down >/dev/null 2>&1 || true
  local start=$SECONDS
  # A start that fails stops what it started (its logs stay in $state/logs).
  trap '[ $? = 0 ] || stop_processes' EXIT
  mkdir -p "$state/pki" "$state/logs" "$state/kwok"
  chmod 700 "$state"
  local pki=$state/pki

  # Certificates: a CA, the apiserver's serving cert for 127.0.0.1/localhost,
  # the service-account signing key and an admin client certificate.
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=resolute-test-ca \
      -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default\nextendedKeyUsage=serverAuth\n' >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin" -keyout admin.key -out admin.csr 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >admin.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile admin.ext -out admin.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  ) || die "generating certificates failed"

  local etcd_port etcd_peer api_port sched_port kwok_port
  etcd_port=$(free_port); etcd_peer=$(free_port); api_port=$(free_port)
  sched_port=$(free_port); kwok_port=$(free_port)
  : >"$state/pids"

  "${RESOLUTE_K8S_ETCD:-$etcd_bin}" --name resolute-test --data-dir "$state/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "resolute-test=http://127.0.0.1:$etcd_peer" \
    --unsafe-no-fsync --quota-backend-bytes=4294967296 --log-level=warn \
    >"$state/logs/etcd.log" 2>&1 &
  echo "etcd $!" >>"$state/pids"

  local kubeconfig=$state/kubeconfig
  cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: resolute-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $pki/ca.crt
users:
- name: admin
  user:
    client-certificate: $pki/admin.crt
    client-key: $pki/admin.key
contexts:
- name: resolute-test
  context: {cluster: resolute-test, user: admin, namespace: default}
current-context: resolute-test
EOF

  # Without a kube-controller-manager nobody would remove the not-ready taint
  # that TaintNodesByCondition puts on new nodes, nor create the default
  # service account that the ServiceAccount plugin wants in every namespace.
  "$bin/kube-apiserver" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --kubelet-client-certificate="$pki/admin.crt" --kubelet-client-key="$pki/admin.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-cluster-ip-range=10.0.0.0/24 \
    --authorization-mode=Node,RBAC \
    --disable-admission-plugins=TaintNodesByCondition,ServiceAccount \
    --allow-privileged=true --enable-priority-and-fairness=false \
    --endpoint-reconciler-type=none \
    --profiling=false --v=1 \
    >"$state/logs/kube-apiserver.log" 2>&1 &
  echo "kube-apiserver $!" >>"$state/pids"

  local i
  for i in $(seq 1 1200); do
    if curl -fsk --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
      "https://127.0.0.1:$api_port/readyz" >/dev/null 2>&1; then break; fi
    running || { tail -n 20 "$state/logs/"*.log >&2; die "the control plane stopped while starting (logs in $state/logs)"; }
    sleep 0.1
  done
  [ "$i" -lt 1200 ] || { tail -n 20 "$state/logs/kube-apiserver.log" >&2; die "kube-apiserver did not become ready in 120s"; }

  "$bin/kube-scheduler" --kubeconfig="$kubeconfig" --authentication-kubeconfig="$kubeconfig" \
    --authorization-kubeconfig="$kubeconfig" --bind-address=127.0.0.1 --secure-port="$sched_port" \
    --leader-elect=false --profiling=false --v=1 \
    >"$state/logs/kube-scheduler.log" 2>&1 &
  echo "kube-scheduler $!" >>"$state/pids"

  # kwok serves the fake kubelets' API (logs, exec) on a free port that every
  # node it initializes advertises; pod IPs come from a /24 of loopback
  # addresses picked at random, so two control planes rarely share one.
  local crd
  for crd in "$bin"/crd/*.yaml; do apply_crd "$crd" || die "creating CRD $crd failed"; done
  cp "$here/k8s-kwok.yaml" "$state/kwok/kwok.yaml"
  local cidr="127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).1/24"
  "$kwok_bin" --kubeconfig="$kubeconfig" --config="$state/kwok/kwok.yaml" \
    --enable-crds=Logs,Exec \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr="$cidr" --node-ip=127.0.0.1 --node-port="$kwok_port" \
    --server-address="127.0.0.1:$kwok_port" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    >"$state/logs/kwok.log" 2>&1 &
  echo "kwok $!" >>"$state/pids"

  for i in $(seq 1 600); do
    if curl -fsk "https://127.0.0.1:$kwok_port/healthz" >/dev/null 2>&1 &&
      curl -fsk "https://127.0.0.1:$sched_port/healthz" >/dev/null 2>&1; then break; fi
    running || { tail -n 20 "$state/logs/"*.log >&2; die "the control plane stopped while starting (logs in $state/logs)"; }
    sleep 0.1
  done
  [ "$i" -lt 600 ] || { tail -n 20 "$state/logs/"*.log >&2; die "kwok or kube-scheduler did not become healthy in 60s"; }
  # A test process that starts a control plane of its own names itself in
  # RESOLUTE_K8S_WATCH_PID: when it ends, however it ends, a watcher stops
  # the control plane.
  if [ -n "${RESOLUTE_K8S_WATCH_PID:-}" ]; then
    RESOLUTE_K8S_DIR=$state setsid bash -c \
      'while kill -0 "$1" 2>/dev/null && [ -f "$2/pids" ]; do sleep 1; done; [ -f "$2/pids" ] && "$3" down' \
      _ "$RESOLUTE_K8S_WATCH_PID" "$state" "$here/k8s.sh" </dev/null >/dev/null 2>&1 &
  fi
  cat >"$state/env" <<EOF
KUBECONFIG=$kubeconfig
APISERVER=https://127.0.0.1:$api_port
KWOK_PORT=$kwok_port
POD_CIDR=$cidr
EOF
  echo "k8s.sh: control plane up in $((SECONDS - start))s at https://127.0.0.1:$api_port (state in $state)" >&2
  echo "k8s.sh: use it with: export KUBECONFIG=$kubeconfig  (or eval \"\$(scripts/k8s.sh env)\")" >&2
  echo "export KUBECONFIG=$kubeconfig"
  trap - EXIT
}

# apply_crd creates a CustomResourceDefinition from a YAML file through the
# apiserver (kubectl is not needed) and waits until it is established.
apply_crd() {
  local name
  name=$(sed -n 's/^  name: \(.*\)$/\1/p' "$1" | head -1)
  curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    -H 'Content-Type: application/yaml' --data-binary "@$1" \
    "https://127.0.0.1:$api_port/apis/apiextensions.k8s.io/v1/customresourcedefinitions" >/dev/null || return 1
  for _ in $(seq 1 100); do
    curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
      "https://127.0.0.1:$api_port/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$name" |
      grep -q '"type": "Established"' && return 0
    sleep 0.1
  done
  return 1
}

# stop_processes stops what up started: kwok and the scheduler before the
# apiserver before etcd, SIGKILL for what is left after 5 seconds.
stop_processes() {
  [ -f "$state/pids" ] || return 0
  local name pid alive
  tac "$state/pids" | while read -r name pid; do kill "$pid" 2>/dev/null || true; done
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
  echo "k8s.sh: stopped" >&2
}

case "${1:-}" in
build) build ;;
up) up ;;
down) down ;;
env)
  running || die "not running (scripts/k8s.sh up)"
  echo "export KUBECONFIG=$state/kubeconfig"
  ;;
status)
  if running; then echo "running: KUBECONFIG=$state/kubeconfig"; else echo "not running"; exit 1; fi
  ;;
*) die "usage: k8s.sh build|up|down|env|status" ;;
esac
