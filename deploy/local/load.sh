#!/usr/bin/env bash
# make load: many tables playing coups at once through the gateway of a
# fresh local stack (temporary data directory, embedded NATS), with the
# chemmy load client: coups per second and PlaceBet latency.
#
# By default it plays twice in one run, on two fresh stacks one after the
# other: as in production (mutual TLS between the services, caller
# assertions signed by the gateway and verified by every backend) and in
# plaintext development mode (-insecure), so the cost of the trust
# boundary on the coup path reads from one run. The gateway's rate limit
# is off (one client plays every table).
#
# Before playing, chemmy load measures the gateway's no-op RPC (GetCaller)
# at the same concurrency, and a no-op forwarded through it (the wallet's
# GetCurrency); it sets the tables up outside the measured window. From
# the stack's one /metrics (chemmy run -metrics-addr MPORT: every
# service's, with each store's commit and fsync counters, the gRPC
# servers' counters, the embedded NATS's and the process's CPU and
# allocation) it reports per coup: the durable writes (store writer calls) of each
# store, the internal RPCs, the events published and stored bytes, the
# bytes allocated and the stack's CPU; its last line is the coup's CPU
# against the transport floor (the hops it made, each at the CPU of a
# no-op hop of its kind): "cpu per coup / transport floor: R (cpu A ms,
# floor B ms)".
#
# Mode "idle" (make load-idle: MODES=idle TABLES=1000) measures seated
# idle tables instead, on the secure stack: chemmy load -idle seats two
# players at each of TABLES tables whose bank offers nobody takes, each
# timing out every OFFER (default 3s: 1000 tables at 3 s time out as
# often as 10,000 at the default 30 s), and reports over DURATION the
# fsyncs per second of each store and the stack's CPU (% of a core).
#
# PACE (make load PACE=60s TABLES=N) plays at a human pace instead: each
# table starts a coup every PACE (±10%, open loop) for DURATION (default
# then 3 minutes), on the secure stack; the report gives each action's
# p50/p99, whether every p99 is under 100 ms, and the CPU per live table.
#
# Environment: TABLES (default 16), DURATION (default 20s), MODES
# (default "secure insecure"; or "idle"), OFFER (idle: default 3s), PACE
# (default none), PORT (the gateway's port, default a random one), MPORT
# (the metrics port, default PORT+1).
# The run is bounded in time and talks only to 127.0.0.1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TABLES=${TABLES:-16}
PACE=${PACE:-}
if [ -n "$PACE" ]; then
  DURATION=${DURATION:-3m}
  MODES=${MODES:-secure}
fi
DURATION=${DURATION:-20s}
MODES=${MODES:-secure insecure}
OFFER=${OFFER:-3s}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
MPORT=${MPORT:-$((PORT + 1))}
WORK=$(mktemp -d)
PID=
trap 'if [ -n "$PID" ]; then kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; fi; rm -rf "$WORK"' EXIT
cd "$ROOT"
go build -o "$WORK/chemmy" ./cmd/chemmy
for mode in $MODES; do
  flags=() play=() tok=()
  [ "$mode" = insecure ] && flags=(-insecure)
  [ "$mode" = idle ] && play=(-idle -idle-offer "$OFFER" -noop 0) tok=(-idle)
  [ -n "$PACE" ] && [ "$mode" != idle ] && play=(-pace "$PACE")
  rm -rf "$WORK/data"
  # Each player plays with his own token (a player's moves are his alone).
  prefix=load-$mode-$(date +%s)
  "$WORK/chemmy" load -write-tokens "$WORK/tokens.yaml" -write-tokens-from deploy/local/tokens.yaml \
    -player-token '%s-token' -prefix "$prefix" -tables "$TABLES" "${tok[@]}"
  "$WORK/chemmy" run -data-dir "$WORK/data" -listen 127.0.0.1:$PORT -nats-port -1 \
    -tokens "$WORK/tokens.yaml" -log-level error -rate-limit -1 -metrics-addr 127.0.0.1:$MPORT -http "" "${flags[@]}" > "$WORK/run.log" 2>&1 &
  PID=$!
  for _ in $(seq 100); do grep -q "chemmy is running" "$WORK/run.log" && break; sleep 0.1; done
  echo "== $mode: $TABLES tables for $DURATION through the gateway at 127.0.0.1:$PORT"
  "$WORK/chemmy" load -gateway 127.0.0.1:$PORT -tables "$TABLES" -duration "$DURATION" \
    -prefix "$prefix" -player-token '%s-token' -metrics 127.0.0.1:$MPORT "${play[@]}"
  kill -INT $PID; wait $PID || true; PID=
done
