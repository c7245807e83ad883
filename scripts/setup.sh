#!/usr/bin/env bash
# setup.sh [run|test]: installs what `make run` (or `make test`) needs and a
# fresh machine lacks. As root it installs Debian and npm packages itself;
# otherwise it prints the exact command to run and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-run}

need_apt=()
pg_bin() {
  local d
  d=$(pg_config --bindir 2>/dev/null || true)
  if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then echo "$d"; return; fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ]; then echo "$d"; return; fi
  done
}
[ -n "$(pg_bin)" ] || need_apt+=(postgresql)
command -v node >/dev/null && command -v npm >/dev/null || need_apt+=(nodejs npm)
if [ "$what" = test ]; then
  [ -x /usr/bin/chromium ] || need_apt+=(chromium)
  # examples/pytorch-digits runs under Debian's Python, as tasks do.
  /usr/bin/python3 -c 'import torch, sklearn' 2>/dev/null || need_apt+=(python3-torch python3-sklearn)
  # The PyTorch Trial API's tests train Determined's MNIST tutorial shape on torchvision.
  /usr/bin/python3 -c 'import torchvision' 2>/dev/null || need_apt+=(python3-torchvision)
  # Checkpoints in buckets: the harness stores to S3 with boto3 and to Azure with its SDK.
  /usr/bin/python3 -c 'import boto3' 2>/dev/null || need_apt+=(python3-boto3)
  /usr/bin/python3 -c 'import azure.storage.blob' 2>/dev/null || need_apt+=(python3-azure)
  # Notebooks run Debian's Jupyter (the classic notebook server).
  /usr/bin/python3 -c 'import notebook' 2>/dev/null || need_apt+=(jupyter-notebook)
  # e2e drives det shell start in a real terminal under tmux.
  command -v tmux >/dev/null || need_apt+=(tmux)
  # SSH into shells: Debian's sshd runs in the shell as its user, reached by
  # the real ssh and scp clients; nss_wrapper names the default uids for it.
  [ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
  [ -x /usr/bin/ssh ] && [ -x /usr/bin/scp ] || need_apt+=(openssh-client)
  ls /usr/lib/*/libnss_wrapper.so >/dev/null 2>&1 || need_apt+=(libnss-wrapper)
  # The Kubernetes tests' control plane (scripts/k8s.sh) makes its certificates
  # with openssl and asks the apiserver with curl.
  command -v openssl >/dev/null || need_apt+=(openssl)
  command -v curl >/dev/null || need_apt+=(curl)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${need_apt[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "setup: missing ${need_apt[*]}; install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
fi

# The front-end libraries, pinned in web/package-lock.json.
if [ ! -f web/static/vendor/htmx.min.js ] || [ web/package-lock.json -nt web/static/vendor/htmx.min.js ]; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error && ./vendor.sh)
fi

# kube-apiserver, kube-scheduler and kwok for the Kubernetes tests, built once
# into the user's cache (minutes the first time).
if [ "$what" = test ]; then
  scripts/k8s.sh build
fi

# MinIO, fake-gcs-server (from the Go module proxy) and Azurite (from npm)
# for the checkpoint storage tests, built once into the user's cache.
if [ "$what" = test ]; then
  scripts/objectstores.sh build
fi

# helm for the chart tests (charts/charttest), built once into the user's
# cache from its Go module (minutes the first time).
if [ "$what" = test ]; then
  scripts/helm.sh >/dev/null
fi

# The Playwright driver for browser tests: the playwright-core version that
# playwright-go pins, from npm (no browser download; Debian's chromium is used).
if [ "$what" = test ]; then
  dir=$(scripts/playwright-driver.sh)
  if [ ! -f "$dir/package/cli.js" ]; then
    version=$(basename "$dir")
    echo "setup: installing playwright-core@$version into $dir" >&2
    mkdir -p "$dir"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --prefix . "playwright-core@$version" >/dev/null \
      && ln -sfn node_modules/playwright-core package)
  fi
fi
