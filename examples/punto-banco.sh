#!/usr/bin/env bash
# Plays a few coups of punto banco through the gateway with grpcurl (or
# curl), against a running `make run` (demo tokens of deploy/local/tokens.yaml).
#
# The operator funds alice, bob and carol with 5000 each and the house's
# float (house:bank, which pays the winning bets) with 100000; the croupier
# opens a punto banco table (short betting window of 2 s, result shown for
# 1 s, pair bets on). alice and carol take seats, bob bets from behind
# without one. Each coup: alice bets 500 on the bank and 100 on the bank
# pair, bob 300 on the player and 100 on the player pair, carol 100 on the
# tie; alice's bet starts the betting window; when it runs out the table
# deals by the fixed tableau and settles with nobody acting, and the script
# prints the cards, the result and what each bet won or lost. Then the
# roads (GetRoads) and the balances.
#
# Environment: CHEMMY_TRANSPORT (grpc, the default: grpcurl; http: curl and
# jq), CHEMMY_GATEWAY, CHEMMY_HTTP, GRPCURL, CURL (examples/transport.sh),
# RUN_ID (request-id prefix; default: unique per run, so
# the script may run again against the same stack), COUPS (default 3).
set -euo pipefail

RUN=${RUN_ID:-pb-$(date +%s)-$$}
COUPS=${COUPS:-3}
T=chemmy.table.v1.TableService

# call TOKEN METHOD JSON: one RPC through the gateway (grpcurl or curl);
# prints the JSON reply.
. "$(dirname "$0")/transport.sh"
# field NAME: the first value (string, number or boolean) of "NAME" in the
# JSON on stdin.
field() {
  sed -n "s/.*\"$1\": \"\\{0,1\\}\\([^\",]*\\)\"\\{0,1\\},\\{0,1\\}$/\\1/p" | head -n 1
}
table() { call croupier-token $T/GetTable "{\"table_id\":\"$TABLE\"}"; }
# own: the table's own fields (four spaces in), not those of its coups.
own() { grep -E '^    "[a-zA-Z]+": [^{[]' || true; }
# bet PLAYER SPOT AMOUNT: a stake on the layout; prints the table.
bet() {
  call "$1-token" $T/PlaceBet \
    "{\"request_id\":\"$RUN-c$C-$1-$2\",\"table_id\":\"$TABLE\",\"player_id\":\"$1\",\"spot\":\"BET_SPOT_$2\",\"amount\":$3}"
}

# wait_for WHAT SECONDS COMMAND...: runs COMMAND every 0.25 s until it
# succeeds; fails after SECONDS.
wait_for() {
  local what=$1 limit=$2 start=$SECONDS
  shift 2
  until "$@"; do
    if ((SECONDS - start > limit)); then
      echo "gave up after ${limit}s waiting for $what" >&2
      table | own >&2
      exit 1
    fi
    sleep 0.25
  done
}
betting_open() { [ "$(table | own | field state)" = TABLE_STATE_BETTING ]; }
# settled COUP: the table's last coup is COUP and it is settled.
settled() {
  local last
  last=$(table | sed -n '/^    "lastCoup": {/,/^    }/p')
  [ "$(echo "$last" | field coupId)" = "$1" ] && [ "$(echo "$last" | field settled)" = true ]
}

# report: the last coup of the table JSON on stdin: cards, result, bets.
report() {
  sed -n '/^    "lastCoup": {/,/^    }/p' | awk -F'"' '
    function val(v) { v = $4; if (v == "") { v = $3; gsub(/[:, ]/, "", v) } return v }
    { match($0, /^ */); ind = RLENGTH }
    ind == 6 && $2 == "bets"        { sec = "bets"; next }
    ind == 6 && $2 == "playerCards" { sec = "player"; next }
    ind == 6 && $2 == "bankerCards" { sec = "banker"; next }
    ind == 6 && $2 != ""            { sec = ""; c[$2] = val(); next }
    ind == 10 && sec == "bets" && $2 == "playerId" { n++ }
    ind == 10 && sec == "bets" && $2 != ""         { b[n, $2] = val() }
    ind == 10 && $2 == "code"                      { cards[sec] = cards[sec] " " $4 }
    END {
      printf "player:%s (total %d)\nbanker:%s (total %d)\n", cards["player"], c["playerTotal"], cards["banker"], c["bankerTotal"]
      o = c["outcome"]
      o = o == "OUTCOME_BANK_WINS" ? "the bank wins" : o == "OUTCOME_BANK_LOSES" ? "the player wins" : o == "OUTCOME_STAND_OFF" ? "a tie" : o
      printf "%s%s%s%s; house net %d, commission %d\n", o, c["natural"] == "true" ? " (a natural)" : "",
        c["playerPair"] == "true" ? ", player pair" : "", c["bankerPair"] == "true" ? ", bank pair" : "", c["houseNet"], c["commission"]
      for (i = 1; i <= n; i++) {
        s = tolower(b[i, "spot"]); sub(/^bet_spot_/, "", s); gsub(/_/, " ", s)
        if (b[i, "won"] + 0 > 0) r = sprintf("won %d%s", b[i, "won"], b[i, "commission"] + 0 > 0 ? sprintf(", commission %d", b[i, "commission"]) : "")
        else if (b[i, "lost"] + 0 > 0) r = sprintf("lost %d", b[i, "lost"])
        else r = "push (stake returned)"
        printf "  %-6s %4d on %-12s %s\n", b[i, "playerId"], b[i, "amount"], s, r
      }
    }'
}

# roads: the GetRoads JSON on stdin, in short: the bead plate in order,
# the big road's columns, the derived roads' marks and the counts.
roads() {
  awk -F'"' '
    function val(v) { v = $4; if (v == "") { v = $3; gsub(/[:, ]/, "", v) } return v }
    function letter(w) { return w == "ROAD_WINNER_BANK" ? "B" : w == "ROAD_WINNER_PLAYER" ? "P" : "T" }
    { match($0, /^ */); ind = RLENGTH }
    ind == 4 && $2 != "" { sec = $2; if ($4 != "" || $3 !~ /[[{]/) r[$2] = val(); next }
    ind == 6 && /\{/     { delete f; next }
    ind == 8 && $2 != "" { f[$2] = val(); next }
    ind == 6 && /\}/ {
      if (sec == "beadPlate") {
        bead = bead " " letter(f["winner"]) (f["total"] + 0) (f["natural"] == "true" ? "n" : "") (f["playerPair"] == "true" ? "p" : "") (f["bankerPair"] == "true" ? "b" : "")
        beads++
      } else if (sec == "bigRoad") {
        sep = cells == 0 ? " " : (f["logicalCol"] + 0 != lastCol ? " | " : " ")
        big = big sep letter(f["winner"]) (f["ties"] + 0 > 0 ? "/" f["ties"] : "")
        lastCol = f["logicalCol"] + 0; cells++
      } else {
        marks[sec] = marks[sec] (f["red"] == "true" ? "R" : "b")
      }
    }
    END {
      printf "shoe #%d: bank %d, player %d, ties %d\n", r["shoeNumber"], r["bankWins"], r["playerWins"], r["ties"]
      printf "bead plate (%d coups, in order; n natural, p player pair, b bank pair):%s\n", beads, bead
      printf "big road (%d cells, columns split by |, /N: N ties counted on the cell):%s\n", cells, big
      printf "big eye boy %s, small road %s, cockroach pig %s (R red, b blue)\n",
        marks["bigEyeBoy"] == "" ? "-" : marks["bigEyeBoy"], marks["smallRoad"] == "" ? "-" : marks["smallRoad"], marks["cockroachPig"] == "" ? "-" : marks["cockroachPig"]
    }'
}

# balance ACCOUNT: its balance, 0 for an account not opened yet.
balance() {
  local out b
  if out=$(call operator-token chemmy.wallet.v1.WalletService/GetAccount "{\"account_id\":\"$1\"}" 2>&1); then
    b=$(echo "$out" | field balance)
    echo "${b:-0}"
  elif echo "$out" | grep -q ACCOUNT_NOT_FOUND; then
    echo 0
  else
    echo "$out" >&2
    return 1
  fi
}
ACCOUNTS=(player:alice player:bob player:carol house:bank house:commission)
BEFORE=()
for a in "${ACCOUNTS[@]}"; do BEFORE+=("$(balance "$a")"); done

echo "== fund three players and the house's float (operator)"
for p in alice bob carol; do
  call operator-token chemmy.wallet.v1.WalletService/Deposit \
    "{\"request_id\":\"$RUN-deposit-$p\",\"account_id\":\"player:$p\",\"amount\":5000}" >/dev/null
  echo "deposited 5000 to player:$p"
done
call operator-token chemmy.wallet.v1.WalletService/Deposit \
  "{\"request_id\":\"$RUN-deposit-house\",\"account_id\":\"house:bank\",\"amount\":100000}" >/dev/null
echo "deposited 100000 to house:bank (the float that pays winning bets)"

echo "== create a punto banco table (croupier)"
RULES='{"min_bet":100,"max_bet":1000,"house_limit":5000,"pair_bets":true,"betting_window_ms":2000,"result_pause_ms":1000}'
TABLE=$(call croupier-token $T/CreateTable \
  "{\"request_id\":\"$RUN-table\",\"variant\":\"VARIANT_PUNTO_BANCO\",\"punto_banco_rules\":$RULES}" | field tableId)
echo "table $TABLE: $RULES"

echo "== alice and carol take seats; bob bets from behind without one"
for p in alice carol; do
  call "$p-token" $T/JoinTable \
    "{\"request_id\":\"$RUN-join-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\"}" >/dev/null
  echo "$p seated"
done

for C in $(seq 1 "$COUPS"); do
  echo "== coup $C"
  wait_for "the betting to open" 30 betting_open
  OPENED=$(bet alice BANK 500)
  COUP=$(echo "$OPENED" | sed -n '/^    "coup": {/,/^    }/p' | field coupId)
  echo "alice 500 on the bank: her bet starts the betting window, which closes at $(echo "$OPENED" | own | field turnDeadline)"
  bet alice BANK_PAIR 100 >/dev/null
  bet bob PLAYER 300 >/dev/null
  bet bob PLAYER_PAIR 100 >/dev/null
  bet carol TIE 100 >/dev/null
  echo "alice 100 on the bank pair, bob 300 on the player and 100 on the player pair, carol 100 on the tie"
  echo "waiting for the window to run out, the deal and the settlement (a settlement waits while house:bank cannot pay)"
  wait_for "coup $COUP to be settled" 60 settled "$COUP"
  table | report
done

echo "== the roads of the shoe (GetRoads)"
call bob-token $T/GetRoads "{\"table_id\":\"$TABLE\"}" | roads

echo "== balances (and what this run changed)"
MOVED=0
for i in "${!ACCOUNTS[@]}"; do
  NOW=$(balance "${ACCOUNTS[$i]}")
  printf "%-17s %7d  (%+d)\n" "${ACCOUNTS[$i]}" "$NOW" $((NOW - BEFORE[i]))
  MOVED=$((MOVED + NOW - BEFORE[i]))
done
echo "the changes add up to $MOVED, the 115000 deposited (the table moves money, it makes none)"
echo "TABLE=$TABLE"
