#!/usr/bin/env bash
# Plays a few coups of baccarat banque (baccarat à deux tableaux, RULES.md
# BQ-*) through the gateway with grpcurl (or curl), against a running
# `make run` (demo tokens of deploy/local/tokens.yaml).
#
# The operator funds alice, bob, carol and dave with 10000 each; the
# croupier opens a banque table (minimum bank 2000, every time limit 5 s);
# alice and bob sit on the right side, carol and dave on the left
# (BQ-BETS). The bank is auctioned (BQ-BANK): alice bids 3000, the others
# decline, and she pays the house its 2.5% of the bid. Each coup the
# punters bet in turn, as the table names them (coup.turn_player_id): bob
# 500 on the right, carol 400 on the left, dave 300 à cheval (BQ-CHEVAL),
# alice 300 on the right when she is not the banker, less when the bank
# does not cover that much. Three hands are dealt (BQ-HANDS); whoever the
# table asks to draw or stand (a hand's player on 5, then the banker,
# BQ-PLAY) looks at his own hand (GetTable with his own token) and draws
# when his total is below DRAW_BELOW. The shoe is shuffled, so every run
# plays other coups: the script follows whatever the table asks. It prints
# each coup's hands, results and bets and what each balance moved, then
# the balances.
#
# Environment: CHEMMY_TRANSPORT (grpc, the default: grpcurl; http: curl and
# jq), CHEMMY_GATEWAY, CHEMMY_HTTP, GRPCURL, CURL (examples/transport.sh),
# RUN_ID (request-id prefix; default: unique per run, so
# the script may run again against the same stack), COUPS (settled coups
# to play, default 3), DRAW_BELOW (default 5).
set -euo pipefail

RUN=${RUN_ID:-bq-$(date +%s)-$$}
COUPS=${COUPS:-3}
DRAW_BELOW=${DRAW_BELOW:-5}
T=chemmy.table.v1.TableService
PLAYERS=(alice bob carol dave)
declare -A SIDE=([alice]=RIGHT [bob]=RIGHT [carol]=LEFT [dave]=LEFT)
declare -A BET=([alice]=300 [bob]=500 [carol]=400 [dave]=300)
declare -A ON=([alice]=RIGHT [bob]=RIGHT [carol]=LEFT [dave]=CHEVAL)
BID=3000     # alice's bid for the bank
MIN_BET=100  # the table's min_bet (its default)

# call TOKEN METHOD JSON: one RPC through the gateway (grpcurl or curl);
# prints the JSON reply.
. "$(dirname "$0")/transport.sh"
# flat: call's JSON on stdin as one "path=value" line per value, e.g.
# table.coup.hands.0.holderPlayerId=bob (arrays by 0-based index).
flat() {
  awk '{
    line = $0; sub(/^[ \t]+/, "", line); sub(/,$/, "", line)
    if (line == "" || line == "{}" || line == "[]") next
    key = ""
    if (match(line, /^"[^"]*": /)) { key = substr(line, 2, RLENGTH - 4); line = substr(line, RLENGTH + 1) }
    else if (arr[d]) key = n[d]++
    if (line == "{" || line == "[") { d++; k[d] = key; arr[d] = (line == "["); n[d] = 0; next }
    if (line == "}" || line == "]") { d--; next }
    if (line == "{}" || line == "[]") next
    sub(/^"/, "", line); sub(/"$/, "", line)
    p = ""; for (i = 2; i <= d; i++) p = p k[i] "."
    print p key "=" line
  }'
}
# get PATH: the value at PATH in the flattened JSON on stdin (empty if none).
get() { sed -n "s/^$1=//p" | head -n 1; }
# view WHO: the table as WHO sees it (a player sees his own face-down
# cards; the croupier sees none until the showdown), flattened.
view() { call "$1-token" $T/GetTable "{\"table_id\":\"$TABLE\"}" | flat; }
# act WHO METHOD JSON: WHO's call; prints the table it returns, flattened,
# or "refused=REASON" when the table refuses it (the script then follows
# what the table says); fails on anything else.
act() {
  local out reason
  if out=$(call "$1-token" "$T/$2" "$3" 2>&1); then
    echo "$out" | flat
    return
  fi
  reason=$(echo "$out" | sed -n 's/.*"reason": "\([A-Z_]*\)".*/\1/p' | head -n 1)
  if [ -z "$reason" ]; then
    echo "$2 for $1: $out" >&2
    return 1
  fi
  echo "refused=$reason"
}

# balance ACCOUNT: its balance, 0 for an account not opened yet.
balance() {
  local out b
  if out=$(call operator-token chemmy.wallet.v1.WalletService/GetAccount "{\"account_id\":\"$1\"}" 2>&1); then
    b=$(echo "$out" | flat | get account.balance)
    echo "${b:-0}"
  elif echo "$out" | grep -q ACCOUNT_NOT_FOUND; then
    echo 0
  else
    echo "$out" >&2
    return 1
  fi
}

# wait_for WHAT SECONDS COMMAND...: runs COMMAND every 0.25 s until it
# succeeds; fails after SECONDS.
wait_for() {
  local what=$1 limit=$2 start=$SECONDS
  shift 2
  until "$@"; do
    if ((SECONDS - start > limit)); then
      echo "gave up after ${limit}s waiting for $what" >&2
      view croupier | grep -E '^table\.(state|bankerPlayerId|bank|offeredPlayerId|turnDeadline|coup\.[a-zA-Z]+)=' >&2
      exit 1
    fi
    sleep 0.25
  done
}

N=0 # a counter for request ids of repeated steps
# ready: the table takes bets (true), or the script does what it waits
# for first: an auction of the bank (alice bids, the others decline,
# BQ-BANK).
ready() {
  local tb p r hb
  tb=$(view croupier)
  case $(echo "$tb" | get table.state) in
  TABLE_STATE_BETTING) return 0 ;;
  TABLE_STATE_AUCTION)
    N=$((N + 1))
    hb=$(echo "$tb" | get table.highestBidderPlayerId)
    # alice bids, or the next player when she cannot afford it.
    for p in "${PLAYERS[@]}"; do
      [ -z "$hb" ] || break
      r=$(act "$p" BidBank "{\"request_id\":\"$RUN-bid-$N-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\",\"amount\":$BID}" | get refused)
      if [ -z "$r" ]; then
        hb=$p
        echo "the bank is auctioned: $p bids $BID"
      else
        echo "$p cannot bid $BID ($r)"
      fi
    done
    for p in "${PLAYERS[@]}"; do
      [ "$p" = "$hb" ] && continue
      r=$(act "$p" DeclineBank "{\"request_id\":\"$RUN-nobid-$N-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\"}" | get refused)
      [ -z "$r" ] && echo "$p declines to bid"
    done
    ;;
  esac
  return 1
}

# bets: the punters bet in turn, each when the table names him, his
# amount on his side or what the bank still covers (BQ-BANK), or pass;
# sets COUP (the coup's id) and BANKER.
bets() {
  local tb turn amount room covered r start=$SECONDS
  tb=$(view croupier)
  COUP=$(echo "$tb" | get table.coup.coupId)
  BANKER=$(echo "$tb" | get table.bankerPlayerId)
  echo "banker $BANKER, bank $(echo "$tb" | get table.bank)"
  if [ -n "$(echo "$tb" | get table.rightHandPlayerId)$(echo "$tb" | get table.leftHandPlayerId)" ]; then
    echo "the right hand is $(echo "$tb" | get table.rightHandPlayerId)'s to play, the left $(echo "$tb" | get table.leftHandPlayerId)'s (BQ-PLAY)"
  fi
  while [ "$(echo "$tb" | get table.state)" = TABLE_STATE_BETTING ] && [ "$(echo "$tb" | get table.coup.coupId)" = "$COUP" ]; do
    if ((SECONDS - start > 60)); then
      echo "gave up after 60s of betting" >&2
      exit 1
    fi
    turn=$(echo "$tb" | get table.coup.turnPlayerId)
    if [ -z "$turn" ]; then
      sleep 0.25
      tb=$(view croupier)
      continue
    fi
    covered=$(echo "$tb" | sed -n 's/^table\.coup\.bets\.[0-9]*\.amount=//p' | awk '{s += $1} END {print s + 0}')
    room=$(($(echo "$tb" | get table.bank) - covered))
    amount=$((BET[$turn] < room ? BET[$turn] : room))
    N=$((N + 1))
    r="the bank covers no more"
    if ((amount >= MIN_BET)); then
      tb=$(act "$turn" PlaceBet "{\"request_id\":\"$RUN-c$C-bet-$N\",\"table_id\":\"$TABLE\",\"player_id\":\"$turn\",\"side\":\"BANQUE_SIDE_${ON[$turn]}\",\"amount\":$amount}")
      r=$(echo "$tb" | get refused)
    fi
    if [ -z "$r" ]; then
      echo "$turn bets $amount $(words "${ON[$turn]}")"
      continue
    fi
    r2=$(act "$turn" DeclineBet "{\"request_id\":\"$RUN-c$C-pass-$N\",\"table_id\":\"$TABLE\",\"player_id\":\"$turn\"}" | get refused)
    [ -z "$r2" ] && echo "$turn passes ($r)"
    tb=$(view croupier)
  done
}

# words SIDE: a bet's side in words.
words() {
  case $1 in
  RIGHT) echo "on the right" ;;
  LEFT) echo "on the left" ;;
  CHEVAL) echo "à cheval (both hands)" ;;
  esac
}

# step: one look at the coup in play, answering a draw decision
# (BQ-PLAY). True once the coup is the table's last, settled or voided.
step() {
  local tb who hand mine i total cards choice r
  tb=$(view croupier)
  if [ "$(echo "$tb" | get table.lastCoup.coupId)" = "$COUP" ]; then
    [ "$(echo "$tb" | get table.lastCoup.settled)" = true ] || [ "$(echo "$tb" | get table.lastCoup.voided)" = true ]
    return
  fi
  [ "$(echo "$tb" | get table.coup.coupId)" = "$COUP" ] || return 1
  [ "$(echo "$tb" | get table.state)" = TABLE_STATE_DECISION ] || return 1
  who=$(echo "$tb" | get table.coup.decisionPlayerId)
  hand=$(echo "$tb" | get table.coup.decisionHand)
  [ -n "$who" ] || return 1
  mine=$(view "$who")
  if [ "$hand" = HAND_BANKER ]; then
    total=$(echo "$mine" | get table.coup.bankerTotal)
    cards=$(echo "$mine" | sed -n 's/^table\.coup\.bankerCards\.[0-9]*\.code=//p' | tr '\n' ' ')
    what="the bank's hand"
  else
    i=$(echo "$mine" | sed -n "s/^table\.coup\.hands\.\([0-9]*\)\.hand=$hand\$/\1/p")
    total=$(echo "$mine" | get "table\.coup\.hands\.$i\.total")
    cards=$(echo "$mine" | sed -n "s/^table\.coup\.hands\.$i\.cards\.[0-9]*\.code=//p" | tr '\n' ' ')
    what="the $(echo "${hand#HAND_}" | tr 'A-Z' 'a-z') hand"
  fi
  total=${total:-0}
  choice=STAND
  ((total < DRAW_BELOW)) && choice=DRAW
  N=$((N + 1))
  r=$(act "$who" DecideDraw "{\"request_id\":\"$RUN-c$C-decide-$N\",\"table_id\":\"$TABLE\",\"player_id\":\"$who\",\"hand\":\"$hand\",\"choice\":\"DRAW_CHOICE_$choice\"}" | get refused)
  [ -z "$r" ] && echo "$who, playing $what, holds ${cards}($total): $(echo "$choice" | tr 'A-Z' 'a-z')s"
  return 1
}

# report: the last coup of the flattened table on stdin: the hands, their
# results against the bank, every bet and what it won or lost.
report() {
  awk -F= -v sides="$(for p in "${PLAYERS[@]}"; do printf '%s=%s ' "$p" "${ON[$p]}"; done)" '
    { v[$1] = substr($0, length($1) + 2) }
    function cards(pre,   i, s) { for (i = 0; (pre i ".code") in v; i++) s = s " " v[pre i ".code"]; return s }
    function nat(pre, t,   n) { for (n = 0; (pre n ".code") in v; n++); return n == 2 && t >= 8 ? ", a natural" : "" }
    function res(o) { return o == "OUTCOME_BANK_WINS" ? "the bank wins" : o == "OUTCOME_BANK_LOSES" ? "the bank loses" : o == "OUTCOME_STAND_OFF" ? "a stand-off" : o }
    BEGIN {
      n = split(sides, s, " ")
      for (i = 1; i <= n; i++) { split(s[i], kv, "="); side[kv[1]] = kv[2] == "CHEVAL" ? "à cheval" : "on the " tolower(kv[2]) }
    }
    END {
      c = "table.lastCoup."
      if (v[c "voided"] == "true") { printf "  the coup was voided: %s\n", v[c "voidReason"]; exit }
      for (i = 0; (c "hands." i ".hand") in v; i++) {
        h = c "hands." i "."
        who = v[h "holderPlayerId"] == "" ? "the tableau" : v[h "holderPlayerId"]
        printf "  %-5s hand (%s):%s (%d%s): %s\n", tolower(substr(v[h "hand"], 6)), who, cards(h "cards."), v[h "total"], nat(h "cards.", v[h "total"]), res(v[h "outcome"])
      }
      printf "  the bank:%s (%d%s)\n", cards(c "bankerCards."), v[c "bankerTotal"], nat(c "bankerCards.", v[c "bankerTotal"])
      for (i = 0; (c "bets." i ".playerId") in v; i++) {
        b = c "bets." i "."
        r = v[b "won"] + 0 > 0 ? "won " v[b "won"] : v[b "lost"] + 0 > 0 ? "lost " v[b "lost"] : "returned"
        printf "  %-6s %4d %s: %s\n", v[b "playerId"], v[b "amount"], side[v[b "playerId"]], r
      }
      printf "  the banker nets %+d (commission %d)\n", v[c "bankerNet"], v[c "commission"]
    }'
}

ACCOUNTS=(player:alice player:bob player:carol player:dave house:commission)
BEFORE=()
for a in "${ACCOUNTS[@]}"; do BEFORE+=("$(balance "$a")"); done

echo "== fund four players (operator)"
for p in "${PLAYERS[@]}"; do
  call operator-token chemmy.wallet.v1.WalletService/Deposit \
    "{\"request_id\":\"$RUN-deposit-$p\",\"account_id\":\"player:$p\",\"amount\":10000}" >/dev/null
  echo "deposited 10000 to player:$p"
done

echo "== create a baccarat banque table (croupier)"
RULES='{"minimum_bank":2000,"min_bet":100,"auction_time_limit_ms":5000,"bet_time_limit_ms":5000,"decision_time_limit_ms":5000}'
TABLE=$(call croupier-token $T/CreateTable \
  "{\"request_id\":\"$RUN-table\",\"variant\":\"VARIANT_BACCARAT_BANQUE\",\"banque_rules\":$RULES}" | flat | get table.tableId)
echo "table $TABLE: $RULES"

echo "== alice and bob sit on the right, carol and dave on the left"
for p in "${PLAYERS[@]}"; do
  call "$p-token" $T/JoinTable \
    "{\"request_id\":\"$RUN-join-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\",\"side\":\"BANQUE_SIDE_${SIDE[$p]}\"}" >/dev/null
  echo "$p seated on the $(echo "${SIDE[$p]}" | tr 'A-Z' 'a-z')"
done

C=0
SETTLED=0
FEES=$(balance house:commission)
while ((SETTLED < COUPS)); do
  C=$((C + 1))
  if ((C > COUPS + 3)); then
    echo "gave up: $C coups tried, $SETTLED settled" >&2
    exit 1
  fi
  wait_for "the betting to open" 40 ready
  if ((NOW_FEES = $(balance house:commission), NOW_FEES != FEES)); then
    echo "the bank goes to $(view croupier | get table.bankerPlayerId), who pays the house $((NOW_FEES - FEES)) (2.5% of the bid, BQ-BANK)"
  fi
  echo "== coup $C"
  declare -A WAS=()
  for p in "${PLAYERS[@]}"; do WAS[$p]=$(balance "player:$p"); done
  bets
  wait_for "coup $COUP to be settled" 60 step
  TB=$(view croupier)
  echo "$TB" | report
  FEES=$(balance house:commission)
  if [ "$(echo "$TB" | get table.lastCoup.settled)" = true ]; then
    SETTLED=$((SETTLED + 1))
    MONEY=""
    for p in "${PLAYERS[@]}"; do MONEY="$MONEY $p $(printf %+d $(($(balance "player:$p") - WAS[$p])))"; done
    if [ "$(echo "$TB" | get table.state)" = TABLE_STATE_AUCTION ]; then
      echo "  money:$MONEY; the bank is exhausted: it goes back to the banker and is auctioned again (BQ-BANK)"
    else
      echo "  money:$MONEY; the bank is now $(echo "$TB" | get table.bank)"
    fi
  fi
done

echo "== balances (and what this run changed)"
MOVED_SUM=0
for i in "${!ACCOUNTS[@]}"; do
  NOW=$(balance "${ACCOUNTS[$i]}")
  printf "%-17s %7d  (%+d)\n" "${ACCOUNTS[$i]}" "$NOW" $((NOW - BEFORE[i]))
  MOVED_SUM=$((MOVED_SUM + NOW - BEFORE[i]))
done
TB=$(view croupier)
echo "held at the table: the bank of the banker, $(echo "$TB" | get table.bankerPlayerId), $(echo "$TB" | get table.bank)"
echo "the changes add up to $MOVED_SUM, the 40000 deposited (the table moves money, it makes none)"
echo "TABLE=$TABLE"
