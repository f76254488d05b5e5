#!/usr/bin/env bash
# examples/coup.sh with curl instead of grpcurl: one coup through the
# gateway's HTTP/JSON side (Connect protocol: POST /<service>/<method>,
# Content-Type application/json), against a running `make run`. Same story:
# alice, bob and carol are funded with 5000 each, seated, alice banks 1000,
# bob bets 600 and carol 400, any draw/stand decision is answered "draw"
# after printing the croupier's advice; then an error to show its reason,
# the result and the balances.
#
# Environment: CHEMMY_HTTP (default localhost:7080), CURL (default curl),
# RUN_ID (request-id prefix; default: unique per run).
set -euo pipefail

HTTP=${CHEMMY_HTTP:-localhost:7080}
CURL=${CURL:-curl}
RUN=${RUN_ID:-run-$(date +%s)-$$}

# call TOKEN METHOD JSON: one RPC; prints the JSON reply, fails on an error.
call() {
  "$CURL" -sS --fail-with-body -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
    -d "$3" "http://$HTTP/$2"
}
# field NAME: the first string value of "NAME" in the JSON on stdin.
field() {
  sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" | head -n 1
}

echo "== fund three players (operator)"
for p in alice bob carol; do
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
  call "$p-token" chemmy.table.v1.TableService/JoinTable \
    "{\"request_id\":\"$RUN-join-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\"}" >/dev/null
  echo "$p seated"
done

echo "== alice takes the bank with 1000"
call alice-token chemmy.table.v1.TableService/AcceptBank \
  "{\"request_id\":\"$RUN-bank\",\"table_id\":\"$TABLE\",\"player_id\":\"alice\",\"amount\":1000}" >/dev/null

echo "== carol tries to bet before bob: an error, as JSON with its reason"
"$CURL" -sS -w ' (HTTP %{http_code})\n' -H 'Authorization: Bearer carol-token' -H 'Content-Type: application/json' \
  -d "{\"request_id\":\"$RUN-early-carol\",\"table_id\":\"$TABLE\",\"player_id\":\"carol\",\"amount\":400}" \
  "http://$HTTP/chemmy.table.v1.TableService/PlaceBet"

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
      ADVICE=$(call "$WHO-token" chemmy.table.v1.TableService/GetAdvice \
        "{\"table_id\":\"$TABLE\",\"player_id\":\"$WHO\"}")
      echo "$WHO must decide for $HAND; the croupier's advice (GetAdvice): $ADVICE"
      echo "$WHO decides for $HAND: draw (carte)"
      call "$WHO-token" chemmy.table.v1.TableService/DecideDraw \
        "{\"request_id\":\"$RUN-decide-$i\",\"table_id\":\"$TABLE\",\"player_id\":\"$WHO\",\"choice\":\"DRAW_CHOICE_DRAW\"}" >/dev/null
      ;;
    *) break ;;
  esac
done

echo "== the table's first lines, as a stream (WatchTable, one JSON message per line)"
"$CURL" -sS -N --max-time 2 -H 'Authorization: Bearer bob-token' -H 'Content-Type: application/json' \
  -d "{\"table_id\":\"$TABLE\"}" "http://$HTTP/chemmy.table.v1.TableService/WatchTable" 2>/dev/null | head -c 300 || true
echo

echo "== result"
echo "outcome $(call croupier-token chemmy.table.v1.TableService/GetTable "{\"table_id\":\"$TABLE\"}" | field outcome)"

echo "== balances"
for a in player:alice player:bob player:carol house:commission; do
  BAL=$(call operator-token chemmy.wallet.v1.WalletService/GetAccount "{\"account_id\":\"$a\"}" | field balance)
  echo "$a ${BAL:-0}"
done
echo "TABLE=$TABLE"
