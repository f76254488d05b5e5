#!/usr/bin/env bash
# A chemin de fer table through the gateway with grpcurl (or curl), against
# a running `make run` (demo tokens of deploy/local/tokens.yaml): three
# punters, a banco, a pass of the bank and a loss of the bank.
#
# So that the walk-through always tells the same story, the operator loads
# a certification shoe whose cards come out in a known order
# (CreateShoeFromOrder) and opens the table on it:
#   coup 1: player 2C 3D (5), banker 9H TC (9, a natural): the bank wins;
#   coup 2: player 2S 3H (5), banker 9D TS (9): bob's banco loses;
#   coup 3: player 4C 5D (9, a natural), banker 3S 5H (8): the bank loses.
#
# Environment: CHEMMY_TRANSPORT (grpc, the default: grpcurl; http: curl and
# jq), CHEMMY_GATEWAY, CHEMMY_HTTP, GRPCURL, CURL (examples/transport.sh),
# RUN_ID (request-id prefix; default unique per run).
set -euo pipefail

RUN=${RUN_ID:-walk-$(date +%s)-$$}

. "$(dirname "$0")/transport.sh" # call TOKEN METHOD JSON: one RPC, grpcurl or curl
field() { sed -n "s/.*\"$1\": \"\\{0,1\\}\\([^\",]*\\)\"\\{0,1\\},\\{0,1\\}$/\\1/p" | head -n 1; }
table() { call croupier-token chemmy.table.v1.TableService/GetTable "{\"table_id\":\"$TABLE\"}"; }
say() { echo; echo "== $*"; }
show() { # the table's own fields sit four spaces in
  local t; t=$(table | grep -E '^    "[a-zA-Z]+": [^{[]')
  echo "state $(echo "$t" | field state), banker $(echo "$t" | field bankerPlayerId), bank $(echo "$t" | field bank), offered to $(echo "$t" | field offeredPlayerId)"
}
last() {
  table | sed -n '/"lastCoup"/,$p' | awk -F'"' '
    /"playerCards"/ { hand = "player" } /"bankerCards"/ { hand = "banker" } /"bets"/ { hand = "" }
    /"code"/ && hand != "" { cards[hand] = cards[hand] " " $4 }
    /"outcome"|"commission"|"banco"/ { v[$2] = $4 != "" ? $4 : $3 }
    END { gsub(/[:, ]/, "", v["commission"]); gsub(/[:, ]/, "", v["banco"])
          printf "last coup: player%s, banker%s: %s, commission %s%s\n", cards["player"], cards["banker"], v["outcome"], v["commission"] + 0, v["banco"] == "true" ? " (banco)" : "" }'
}
balances() {
  for p in alice bob carol dave; do
    printf "%s %s  " "$p" "$(call operator-token chemmy.wallet.v1.WalletService/GetAccount "{\"account_id\":\"player:$p\"}" | field balance)"
  done
  local house; house=$(call operator-token chemmy.wallet.v1.WalletService/GetAccount '{"account_id":"house:commission"}' | field balance)
  echo "house ${house:-0}"
}
act() { # act PLAYER METHOD EXTRA-JSON
  call "$1-token" "chemmy.table.v1.TableService/$2" \
    "{\"request_id\":\"$RUN-$1-$2-$((++N))\",\"table_id\":\"$TABLE\",\"player_id\":\"$1\"$3}" >/dev/null
}
N=0

say "fund alice, bob, carol and dave with 10000 each"
for p in alice bob carol dave; do
  call operator-token chemmy.wallet.v1.WalletService/Deposit \
    "{\"request_id\":\"$RUN-deposit-$p\",\"account_id\":\"player:$p\",\"amount\":10000}" >/dev/null
done
balances

say "the operator loads a certification shoe and opens the table on it"
CARDS='"2C","9H","3D","TC", "2S","9D","3H","TS", "4C","3S","5D","5H"'
for _ in $(seq 20); do CARDS="$CARDS,\"KD\""; done
SHOE=$(call operator-token chemmy.shoe.v1.ShoeService/CreateShoeFromOrder \
  "{\"request_id\":\"$RUN-shoe\",\"cards\":[$CARDS],\"test_shoe\":true}" | field shoeId)
TABLE=$(call operator-token chemmy.table.v1.TableService/CreateTable \
  "{\"request_id\":\"$RUN-table\",\"shoe_id\":\"$SHOE\",\"house_rules\":{\"certification_real_money\":true}}" | field tableId)
echo "shoe $SHOE, table $TABLE"

say "four players sit down; the bank is offered from seat 1: alice puts up 1000"
for p in alice bob carol dave; do act $p JoinTable ""; done
act alice AcceptBank ',"amount":1000'
show

say "coup 1: three punters bet in turn from the banker's right: bob 300, carol 300, dave 400"
act bob PlaceBet ',"amount":300'
act carol PlaceBet ',"amount":300'
act dave PlaceBet ',"amount":400'
last
show
balances

say "coup 2: bob calls banco on the whole bank of 1950"
act bob CallBanco ""
last
show
balances

say "alice passes the bank between coups (CF-PASS); it is offered to bob, who puts up 500"
act alice PassBank ""
show
act bob AcceptBank ',"amount":500'
show

say "coup 3: carol covers the whole bank; the player's natural beats the banker's 8: bob loses the bank (CF-LOSE)"
act carol PlaceBet ',"amount":500'
last
show
balances
echo "TABLE=$TABLE"
