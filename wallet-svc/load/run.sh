#!/usr/bin/env bash
# Load run of wallet-svc (make load-wallet): settlements per second and p99
# through gRPC with ghz, next to a no-op RPC (grpc.health.v1.Health/Check)
# measured by the same ghz in the same run, and the machine's raw bbolt
# commit rate (BenchmarkBoltCommit) and the Go-client figure
# (BenchmarkSettleCoupParallel).
#
# Environment: N (settlements, default 20000), C (ghz concurrency, default
# 50), GHZ (default ./bin/ghz at the repo root).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${N:-20000}
C=${C:-50}
GHZ=${GHZ:-$ROOT/bin/ghz}
WORK=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
cd "$ROOT"
go build -o "$WORK/wallet-svc" ./wallet-svc
go build -o "$WORK/prepare" ./wallet-svc/load/prepare
PORT=$((20000 + RANDOM % 20000))
"$WORK/wallet-svc" -listen 127.0.0.1:$PORT -data-dir "$WORK/data" -log-level error &
PID=$!
for _ in $(seq 50); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
"$WORK/prepare" -addr 127.0.0.1:$PORT -n "$N" -out "$WORK/settle.json"
MD='{"x-chemmy-role":"service","x-chemmy-subject":"ghz"}'
echo "== ghz: SettleCoup, $N settlements, -c $C"
"$GHZ" --insecure --call chemmy.wallet.v1.WalletService/SettleCoup --data-file "$WORK/settle.json" \
  --metadata "$MD" -n "$N" -c "$C" 127.0.0.1:$PORT | sed -n '/Summary/,/Latency distribution/p;/99 %/p;/Status code distribution/,$p'
echo "== ghz: grpc.health.v1.Health/Check (no-op), $N calls, -c $C"
"$GHZ" --insecure --call grpc.health.v1.Health/Check -d '{}' -n "$N" -c "$C" 127.0.0.1:$PORT \
  | sed -n '/Summary/,/Latency distribution/p;/99 %/p'
kill $PID; wait $PID 2>/dev/null || true
echo "== go bench: SettleCoup through gRPC (Go client) and raw bbolt commits"
go test -run '^$' -bench 'SettleCoupParallel|BoltCommit' -benchtime 3s ./wallet-svc/walletsvc | grep -E 'Benchmark|ok'
