#!/usr/bin/env bash
# The tokens of one load run (deploy/README.md, "The load Job"): a fresh
# prefix (the run's table, player and request ids), a random player
# token format, and then, in namespace NS:
#   - the Secret gateway-tokens: the token file BASE_TOKENS plus one
#     player token per player of TABLES tables (chemmy load -write-tokens);
#     the gateway reads it again within 10s (-reload-interval);
#   - the Secret chemmy-load the Job reads: prefix, player-token,
#     croupier-token, operator-token.
# A later run starts again from BASE_TOKENS, so the players of the
# previous run lose their tokens.
#
# Environment: BASE_TOKENS (required: the gateway's token file without
# load players; locally deploy/k8s/overlays/local/tokens.yaml), NS
# (default chemmy), TABLES (default 16: at least the Job's -tables),
# CROUPIER_TOKEN and OPERATOR_TOKEN (tokens of BASE_TOKENS with those
# roles; default the local demo's croupier-token and operator-token),
# CHEMMY (the chemmy CLI; default: built from this repository).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
: "${BASE_TOKENS:?set BASE_TOKENS to the gateway token file without load players}"
NS=${NS:-chemmy}
TABLES=${TABLES:-16}
CROUPIER_TOKEN=${CROUPIER_TOKEN:-croupier-token}
OPERATOR_TOKEN=${OPERATOR_TOKEN:-operator-token}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
umask 077
if [ -z "${CHEMMY:-}" ]; then
  (cd "$ROOT" && go build -o "$WORK/chemmy" ./cmd/chemmy)
  CHEMMY=$WORK/chemmy
fi
prefix=load-$(date +%s)
player="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')-%s"
"$CHEMMY" load -write-tokens "$WORK/tokens.yaml" -write-tokens-from "$BASE_TOKENS" \
  -player-token "$player" -prefix "$prefix" -tables "$TABLES"
kubectl -n "$NS" create secret generic gateway-tokens --from-file=tokens.yaml="$WORK/tokens.yaml" \
  --dry-run=client -o yaml | kubectl apply -f -
kubectl -n "$NS" create secret generic chemmy-load --from-literal=prefix="$prefix" \
  --from-literal=player-token="$player" --from-literal=croupier-token="$CROUPIER_TOKEN" \
  --from-literal=operator-token="$OPERATOR_TOKEN" --dry-run=client -o yaml | kubectl apply -f -
echo "load run $prefix: $TABLES tables' players have tokens; wait 10s for the gateway to read them, then start the Job"
