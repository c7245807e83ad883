#!/usr/bin/env bash
# chp.sh compares the request rate of Resolute's proxy with JupyterHub's
# configurable-http-proxy (CHP), both in front of the same small Go service on
# loopback, alternating for a few rounds in one run, and prints each round's
# ratio and their median (target: ours ≥ 3× CHP). It uses wrk when
# installed, else proxy/bench/load.
#
#   proxy/bench/chp.sh                    # 3 rounds, 10 s per side, 32 connections
#   DURATION=5 CONNS=64 ROUNDS=5 proxy/bench/chp.sh
#
# Needs node and npm for CHP (installed once into ~/.cache/resolute/chp);
# without them it measures only the service directly and our proxy.
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-32}
CHP_DIR=${CHP_DIR:-$HOME/.cache/resolute/chp}
work=$(mktemp -d)
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# free_port asks the kernel for a free loopback port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_http waits until a URL answers, for up to 20 s.
wait_http() {
  for _ in $(seq 200); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "chp.sh: $1 did not answer" >&2
  return 1
}

# measure prints "requests/s N p99_us N" for a URL.
measure() {
  local url=$1
  if command -v wrk >/dev/null; then
    local out threads=$(( $(nproc) < 4 ? 1 : 2 ))
    out=$(wrk -t"$threads" -c"$CONNS" -d"${DURATION}s" --latency "$url")
    local rps p99
    rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {v=$2; if (v ~ /ms$/) {sub(/ms/,"",v); v*=1000} else if (v ~ /us$/) {sub(/us/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000000}; print v}' <<<"$out")
    errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out")
    [ -n "$errors" ] && echo "  wrk: $errors" >&2
    printf 'requests/s %.0f p99_us %.0f\n' "$rps" "$p99"
  else
    "$work/load" -url "$url" -c "$CONNS" -d "${DURATION}s"
  fi
}

echo "building the service, our proxy and the load generator..." >&2
go build -o "$work/backend" ./proxy/bench/backend
go build -o "$work/ourproxy" ./proxy/bench/ourproxy
go build -o "$work/load" ./proxy/bench/load

backend_port=$(free_port)
"$work/backend" -port "$backend_port" 2>"$work/backend.log" & pids+=($!)
ours_port=$(free_port)
"$work/ourproxy" -port "$ours_port" -target "http://127.0.0.1:$backend_port" 2>"$work/ours.log" & pids+=($!)

chp_port=""
if command -v npm >/dev/null && command -v node >/dev/null; then
  if [ ! -x "$CHP_DIR/node_modules/.bin/configurable-http-proxy" ]; then
    echo "installing configurable-http-proxy@4 into $CHP_DIR..." >&2
    npm install --silent --no-audit --no-fund configurable-http-proxy@4 --prefix "$CHP_DIR" >&2
  fi
  chp_port=$(free_port)
  chp_api=$(free_port)
  CONFIGPROXY_AUTH_TOKEN=bench "$CHP_DIR/node_modules/.bin/configurable-http-proxy" \
    --ip 127.0.0.1 --port "$chp_port" --api-ip 127.0.0.1 --api-port "$chp_api" \
    --default-target "http://127.0.0.1:$backend_port" --log-level warn 2>"$work/chp.log" & pids+=($!)
else
  echo "chp.sh: node or npm not found: measuring without configurable-http-proxy" >&2
fi

path=/proxy/t/api/status
wait_http "http://127.0.0.1:$backend_port$path"
wait_http "http://127.0.0.1:$ours_port$path"
[ -n "$chp_port" ] && wait_http "http://127.0.0.1:$chp_port$path"

tool=$(command -v wrk >/dev/null && echo wrk || echo proxy/bench/load)
echo "load: $tool, $CONNS connections, ${DURATION}s each, $(nproc) cores, $ROUNDS rounds" >&2
# The machine may be shared and noisy: alternate the sides for ROUNDS rounds
# and report each round's ratio and their median.
ratios=()
for round in $(seq "$ROUNDS"); do
  direct=$(measure "http://127.0.0.1:$backend_port$path")
  echo "round $round direct   $direct"
  ours=$(measure "http://127.0.0.1:$ours_port$path")
  echo "round $round ours     $ours"
  if [ -n "$chp_port" ]; then
    chp=$(measure "http://127.0.0.1:$chp_port$path")
    echo "round $round chp      $chp"
    ratio=$(awk -v o="$(awk '{print $2}' <<<"$ours")" -v c="$(awk '{print $2}' <<<"$chp")" 'BEGIN { printf "%.2f", o / c }')
    echo "round $round ours/chp ${ratio}x"
    ratios+=("$ratio")
  fi
done
if [ ${#ratios[@]} -gt 0 ]; then
  median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
  echo "ours/chp median ${median}x over ${#ratios[@]} rounds (target >= 3x)"
fi
