# Sourced by the example scripts: how they reach the gateway.
#
# call TOKEN METHOD JSON: one RPC (METHOD as package.Service/Method, JSON
# the request in protobuf JSON) with the bearer token TOKEN. It prints the
# answer as indented JSON, one field a line (grpcurl's layout, which the
# scripts read with sed and awk), and fails on an error, printing the error
# (its "reason" included) on stderr.
#
# Environment:
#   CHEMMY_TRANSPORT  grpc (default): grpcurl on the gateway's gRPC port;
#                     http: curl on its HTTP/JSON side (Connect protocol),
#                     the answer indented by jq
#   CHEMMY_GATEWAY    the gRPC address (default localhost:7000)
#   CHEMMY_HTTP       the HTTP address (default localhost:7080)
#   GRPCURL, CURL, JQ the tools (default: grpcurl, curl, jq on PATH)

GW=${CHEMMY_GATEWAY:-localhost:7000}
HTTP=${CHEMMY_HTTP:-localhost:7080}
GRPCURL=${GRPCURL:-grpcurl}
CURL=${CURL:-curl}
JQ=${JQ:-jq}

case ${CHEMMY_TRANSPORT:=grpc} in
grpc)
  call() { "$GRPCURL" -plaintext -H "authorization: Bearer $1" -d "$3" "$GW" "$2"; }
  ;;
http)
  call() {
    local out
    if out=$("$CURL" -sS --fail-with-body -H "authorization: Bearer $1" -H 'content-type: application/json' \
      -d "$3" "http://$HTTP/$2"); then
      printf '%s\n' "$out" | "$JQ" .
    else
      printf '%s\n' "$out" | "$JQ" . >&2 2>/dev/null || printf '%s\n' "$out" >&2
      return 1
    fi
  }
  ;;
*)
  echo "CHEMMY_TRANSPORT=$CHEMMY_TRANSPORT: grpc or http" >&2
  exit 2
  ;;
esac
