#!/usr/bin/env bash
# make load: many tables playing coups at once through the gateway of a
# fresh local stack (temporary data directory, embedded NATS), with the
# chemmy load client: coups per second and PlaceBet latency.
#
# Environment: TABLES (default 16), DURATION (default 20s), PORT (the
# gateway's port, default a random one). The run is bounded in time and
# talks only to 127.0.0.1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TABLES=${TABLES:-16}
DURATION=${DURATION:-20s}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
WORK=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
cd "$ROOT"
go build -o "$WORK/chemmy" ./cmd/chemmy
"$WORK/chemmy" run -data-dir "$WORK/data" -listen 127.0.0.1:$PORT -nats-port -1 \
  -tokens deploy/local/tokens.yaml -log-level error > "$WORK/run.log" 2>&1 &
PID=$!
for _ in $(seq 100); do grep -q "chemmy is running" "$WORK/run.log" && break; sleep 0.1; done
echo "== $TABLES tables for $DURATION through the gateway at 127.0.0.1:$PORT"
"$WORK/chemmy" load -gateway 127.0.0.1:$PORT -tables "$TABLES" -duration "$DURATION"
