#!/usr/bin/env bash
# Plays one chemin de fer coup through the gateway with grpcurl (or curl),
# against a running `make run` (demo tokens of deploy/local/tokens.yaml):
# funds alice, bob and carol with 5000 each, creates a table, seats them,
# alice takes a bank of 1000, bob bets 600 and carol 400 (the bank is
# covered, so the cards are dealt), any draw/stand decision is answered
# "draw" (after printing the croupier's advice, GetAdvice), and the result
# and the balances are printed.
#
# Environment: CHEMMY_TRANSPORT (grpc, the default: grpcurl; http: curl and
# jq), CHEMMY_GATEWAY, CHEMMY_HTTP, GRPCURL, CURL (examples/transport.sh),
# RUN_ID (request-id prefix; default: unique per run, so
# the script may run again against the same stack).
# CHEMMY_WALLET=seamless, against `make run WALLET=seamless`: the players'
# money is in the reference operator wallet (CHEMMY_OPERATOR_WALLET,
# default 127.0.0.1:7090), funded through its admin endpoint with the token
# in CHEMMY_OPERATOR_ADMIN_TOKEN_FILE (default .chemmy/operator/admin-token);
# the balances printed are the operator's, and chemmy's escrow. Against
# your own operator wallet (chemmy run -operator-url), set
# CHEMMY_OPERATOR_ADMIN_TOKEN_FILE=none: fund alice, bob and carol (5000
# each) in your wallet first; the script then only plays.
set -euo pipefail

RUN=${RUN_ID:-run-$(date +%s)-$$}

# call TOKEN METHOD JSON: one RPC through the gateway (grpcurl or curl);
# prints the JSON reply.
. "$(dirname "$0")/transport.sh"
# field NAME: the first string value of "NAME" in the JSON on stdin.
field() {
  sed -n "s/.*\"$1\": \"\\([^\"]*\\)\".*/\\1/p" | head -n 1
}
token_of() { echo "$1-token"; }

OPW=${CHEMMY_OPERATOR_WALLET:-127.0.0.1:7090}
OPW_ADMIN=${CHEMMY_OPERATOR_ADMIN_TOKEN_FILE:-.chemmy/operator/admin-token}
# operator_admin METHOD PATH [JSON]: the reference operator wallet's admin endpoint.
operator_admin() {
  local body=()
  [ $# -lt 3 ] || body=(-H 'Content-Type: application/json' -d "$3")
  ${CURL:-curl} -sS --fail-with-body -X "$1" "${body[@]}" \
    -H "Authorization: Bearer $(cat "$OPW_ADMIN")" "http://$OPW$2"
}

echo "== fund three players (operator)"
for p in alice bob carol; do
  if [ "${CHEMMY_WALLET:-transfer}" = seamless ] && [ "$OPW_ADMIN" = none ]; then
    echo "$p: funded in your operator wallet (not by this script)"
    continue
  elif [ "${CHEMMY_WALLET:-transfer}" = seamless ]; then
    operator_admin POST /admin/players "{\"player_id\":\"$p\",\"balance\":5000}" >/dev/null
    echo "the operator's wallet holds 5000 for $p"
    continue
  fi
  call operator-token chemmy.wallet.v1.WalletService/Deposit \
    "{\"request_id\":\"$RUN-deposit-$p\",\"account_id\":\"player:$p\",\"amount\":5000}" >/dev/null
  echo "deposited 5000 to player:$p"
done

echo "== create a table (croupier)"
TABLE=$(call croupier-token chemmy.table.v1.TableService/CreateTable \
  "{\"request_id\":\"$RUN-table\",\"house_rules\":{\"minimum_bank\":100}}" | field tableId)
echo "table $TABLE"

echo "== seat alice, bob and carol"
for p in alice bob carol; do
  call "$(token_of $p)" chemmy.table.v1.TableService/JoinTable \
    "{\"request_id\":\"$RUN-join-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\"}" >/dev/null
  echo "$p seated"
done

echo "== alice takes the bank with 1000"
call alice-token chemmy.table.v1.TableService/AcceptBank \
  "{\"request_id\":\"$RUN-bank\",\"table_id\":\"$TABLE\",\"player_id\":\"alice\",\"amount\":1000}" >/dev/null

echo "== bob bets 600, carol bets 400"
call bob-token chemmy.table.v1.TableService/PlaceBet \
  "{\"request_id\":\"$RUN-bet-bob\",\"table_id\":\"$TABLE\",\"player_id\":\"bob\",\"amount\":600}" >/dev/null
call carol-token chemmy.table.v1.TableService/PlaceBet \
  "{\"request_id\":\"$RUN-bet-carol\",\"table_id\":\"$TABLE\",\"player_id\":\"carol\",\"amount\":400}" >/dev/null

echo "== play the coup"
for i in 1 2 3 4; do
  STATE=$(call croupier-token chemmy.table.v1.TableService/GetTable "{\"table_id\":\"$TABLE\"}")
  case "$(echo "$STATE" | field state)" in
    TABLE_STATE_DECISION)
      WHO=$(echo "$STATE" | field decisionPlayerId)
      HAND=$(echo "$STATE" | field decisionHand)
      ADVICE=$(call "$(token_of "$WHO")" chemmy.table.v1.TableService/GetAdvice \
        "{\"table_id\":\"$TABLE\",\"player_id\":\"$WHO\"}")
      echo "$WHO must decide for $HAND; the croupier's advice (GetAdvice): draw EV $(echo "$ADVICE" | sed -n 's/.*"drawEv": \([^,]*\).*/\1/p'), stand EV $(echo "$ADVICE" | sed -n 's/.*"standEv": \([^,]*\).*/\1/p')"
      echo "$WHO decides for $HAND: draw (carte)"
      call "$(token_of "$WHO")" chemmy.table.v1.TableService/DecideDraw \
        "{\"request_id\":\"$RUN-decide-$i\",\"table_id\":\"$TABLE\",\"player_id\":\"$WHO\",\"choice\":\"DRAW_CHOICE_DRAW\"}" >/dev/null
      ;;
    *) break ;;
  esac
done

echo "== result"
call croupier-token chemmy.table.v1.TableService/GetTable "{\"table_id\":\"$TABLE\"}" \
  | sed -n '/"lastCoup"/,$p' | awk -F'"' '
      /"playerCards"/ { hand = "player" }
      /"bankerCards"/ { hand = "banker" }
      /"code"/        { cards[hand] = cards[hand] " " $4 }
      /"playerTotal"|"bankerTotal"|"outcome"|"commission"|"bankerNet"/ { v[$2] = $4 != "" ? $4 : $3 }
      END {
        gsub(/[:, ]/, "", v["playerTotal"]); gsub(/[:, ]/, "", v["bankerTotal"])
        printf "player:%s (total %s)\nbanker:%s (total %s)\n", cards["player"], v["playerTotal"] + 0, cards["banker"], v["bankerTotal"] + 0
        printf "outcome %s, commission %s, banker net %s\n", v["outcome"], v["commission"] + 0, v["bankerNet"] + 0
      }'

echo "== balances"
if [ "${CHEMMY_WALLET:-transfer}" = seamless ] && [ "$OPW_ADMIN" != none ]; then
  sleep 1 # the credits go to the operator from wallet-svc's outbox, just after the settlement
  echo "the operator's wallet: $(operator_admin GET /admin/balances | tr -d '\n ')"
  echo "(chemmy's escrow: what a player has held at the table, e.g. alice's bank if she kept it)"
fi
for a in player:alice player:bob player:carol house:commission; do
  BAL=$(call operator-token chemmy.wallet.v1.WalletService/GetAccount "{\"account_id\":\"$a\"}" | field balance)
  echo "$a ${BAL:-0}"
done
COUP=$(call croupier-token chemmy.table.v1.TableService/GetTable "{\"table_id\":\"$TABLE\"}" | sed -n '/"lastCoup"/,$p' | field coupId)
echo "TABLE=$TABLE"
echo "COUP=$COUP"
