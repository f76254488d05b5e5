#!/usr/bin/env bash
# Plays a few coups of the old baccarat (two decks, aces at eleven,
# RULES.md OLD-*) through the gateway with grpcurl (or curl), against a
# running `make run` (demo tokens of deploy/local/tokens.yaml).
#
# The operator funds alice, bob, carol and dave with 10000 each; the
# croupier opens an old baccarat table (minimum bank 2000, every time limit
# 5 s); the four sit down and, once three are seated, the bank is
# auctioned: alice bids 6000 and the others decline (OLD-BANKER). Each
# coup: every punter stakes against the bank (alice 400 when she is not
# the banker, bob 500, carol 300, dave 200), less when the bank could not
# cover twice the stakes (OLD-STAKE); on a fresh shoe the banker announces
# that he moves MOVE cards from the top of the shoe to its bottom
# (OLD-CUT); each hand is dealt face down to its holder, and whoever the
# table asks to draw or stand (OLD-DRAW) looks at his own hand (GetTable
# with his own token) and draws when the last digit of his points is below
# DRAW_BELOW. A punter whose hand ends on baccarat is offered the bank
# (OLD-BACCARAT) and takes it with 4000. The shoe is shuffled, so every
# run plays other coups: the script follows whatever the table asks. It
# prints each coup's hands, results and what each player's balance moved,
# then the balances.
#
# Environment: CHEMMY_TRANSPORT (grpc, the default: grpcurl; http: curl and
# jq), CHEMMY_GATEWAY, CHEMMY_HTTP, GRPCURL, CURL (examples/transport.sh),
# RUN_ID (request-id prefix; default: unique per run, so
# the script may run again against the same stack), COUPS (settled coups
# to play, default 3), MOVE (cards the banker moves after the cut, 0..10,
# default 3), DRAW_BELOW (default 3).
set -euo pipefail

RUN=${RUN_ID:-old-$(date +%s)-$$}
COUPS=${COUPS:-3}
MOVE=${MOVE:-3}
DRAW_BELOW=${DRAW_BELOW:-3}
T=chemmy.table.v1.TableService
PLAYERS=(alice bob carol dave)
declare -A STAKE=([alice]=400 [bob]=500 [carol]=300 [dave]=200)
BID=6000       # alice's bid for the bank
TAKE=4000      # the bank a punter puts up when his baccarat takes it
MIN_STAKE=100  # the table's min_stake (its default)

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
# ready: the table takes stakes for the next coup (true), or the script
# does what it waits for first: an auction of the bank (alice bids, the
# others decline, OLD-BANKER) or the bank offered to a punter who showed
# baccarat (he takes it, OLD-BACCARAT).
ready() {
  local tb state p r hb
  tb=$(view croupier)
  state=$(echo "$tb" | get table.state)
  case $state in
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
  TABLE_STATE_OFFERING_BANK)
    p=$(echo "$tb" | get table.offeredPlayerId)
    N=$((N + 1))
    r=$(act "$p" AcceptBank "{\"request_id\":\"$RUN-take-$N\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\",\"amount\":$TAKE}" | get refused)
    if [ -z "$r" ]; then
      echo "$p showed baccarat and takes the bank with $TAKE (OLD-BACCARAT); the old banker's bank is released to him"
    else
      act "$p" DeclineBank "{\"request_id\":\"$RUN-leave-$N\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\"}" >/dev/null
      echo "$p could not take the bank ($r): the banker keeps it"
    fi
    ;;
  esac
  return 1
}

# stakes: every punter stakes his amount, or what the bank still covers
# twice (OLD-STAKE), or sits the coup out; sets COUP (the coup's id) and
# BANKER.
stakes() {
  local tb p amount room staked r
  tb=$(view croupier)
  BANKER=$(echo "$tb" | get table.bankerPlayerId)
  echo "banker $BANKER, bank $(echo "$tb" | get table.bank)"
  COUP=""
  for p in "${PLAYERS[@]}"; do
    [ "$p" = "$BANKER" ] && continue
    staked=$(echo "$tb" | sed -n 's/^table\.coup\.bets\.[0-9]*\.amount=//p' | awk '{s += $1} END {print s + 0}')
    room=$(($(echo "$tb" | get table.bank) / 2 - staked))
    amount=$((STAKE[$p] < room ? STAKE[$p] : room))
    if ((amount >= MIN_STAKE)); then
      tb=$(act "$p" PlaceBet "{\"request_id\":\"$RUN-c$C-stake-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\",\"amount\":$amount}")
      r=$(echo "$tb" | get refused)
    else
      r="the bank covers no more"
    fi
    if [ -n "$r" ]; then
      act "$p" DeclineBet "{\"request_id\":\"$RUN-c$C-pass-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\"}" >/dev/null
      echo "$p sits this coup out ($r)"
      tb=$(view croupier)
    else
      echo "$p stakes $amount"
      # The first stake opens the coup; a stake that closes the staking
      # may return it played already, as the last coup.
      [ -n "$COUP" ] || COUP=$(echo "$tb" | get table.coup.coupId)
      [ -n "$COUP" ] || COUP=$(echo "$tb" | get table.lastCoup.coupId)
    fi
  done
  if [ -z "$COUP" ]; then
    echo "nobody staked" >&2
    return 1
  fi
}

# step: one look at the coup in play, doing what it waits for: the
# banker's announcement after the cut (OLD-CUT) or a draw decision
# (OLD-DRAW). True once the coup is the table's last, settled or voided.
MOVED=""
step() {
  local tb state who mine i points cards choice r
  tb=$(view croupier)
  if [ "$(echo "$tb" | get table.lastCoup.coupId)" = "$COUP" ]; then
    [ "$(echo "$tb" | get table.lastCoup.settled)" = true ] || [ "$(echo "$tb" | get table.lastCoup.voided)" = true ]
    return
  fi
  [ "$(echo "$tb" | get table.coup.coupId)" = "$COUP" ] || return 1
  state=$(echo "$tb" | get table.state)
  case $state in
  TABLE_STATE_DEALING)
    # Dealing stands still, with a time limit, only for the cut's announcement.
    if [ -n "$(echo "$tb" | get table.turnDeadline)" ] && [ "$MOVED" != "$COUP" ]; then
      MOVED=$COUP
      r=$(act "$BANKER" MoveTopCards "{\"request_id\":\"$RUN-c$C-move\",\"table_id\":\"$TABLE\",\"player_id\":\"$BANKER\",\"count\":$MOVE}" | get refused)
      if [ -z "$r" ]; then
        echo "a fresh shoe: the banker, $BANKER, moves $MOVE cards from its top to its bottom (OLD-CUT)"
      else
        echo "(no move: $r)"
      fi
    fi
    ;;
  TABLE_STATE_DECISION)
    who=$(echo "$tb" | get table.coup.decisionPlayerId)
    [ -n "$who" ] || return 1
    mine=$(view "$who")
    if [ "$who" = "$(echo "$mine" | get table.coup.bankerPlayerId)" ]; then
      points=$(echo "$mine" | get table.coup.bankerTotal)
      cards=$(echo "$mine" | sed -n 's/^table\.coup\.bankerCards\.[0-9]*\.code=//p' | tr '\n' ' ')
    else
      i=$(echo "$mine" | sed -n "s/^table\.coup\.hands\.\([0-9]*\)\.holderPlayerId=$who\$/\1/p")
      points=$(echo "$mine" | get "table\.coup\.hands\.$i\.total")
      cards=$(echo "$mine" | sed -n "s/^table\.coup\.hands\.$i\.cards\.[0-9]*\.code=//p" | tr '\n' ' ')
    fi
    points=${points:-0}
    choice=STAND
    ((points % 10 < DRAW_BELOW)) && choice=DRAW
    N=$((N + 1))
    r=$(act "$who" DecideDraw "{\"request_id\":\"$RUN-c$C-decide-$N\",\"table_id\":\"$TABLE\",\"player_id\":\"$who\",\"choice\":\"DRAW_CHOICE_$choice\"}" | get refused)
    if [ -z "$r" ]; then
      echo "$who may draw on ${cards}($points points): $(echo "$choice" | tr 'A-Z' 'a-z')s"
    fi
    ;;
  esac
  return 1
}

# report: the last coup of the flattened table on stdin: each hand, its
# points and result, the banker's net.
report() {
  awk -F= '
    { v[$1] = substr($0, length($1) + 2) }
    function cards(pre,   i, s) { for (i = 0; (pre i ".code") in v; i++) s = s " " v[pre i ".code"]; return s }
    function res(o) { return o == "OUTCOME_BANK_WINS" ? "the bank wins" : o == "OUTCOME_BANK_LOSES" ? "the punter wins" : o == "OUTCOME_STAND_OFF" ? "a tie" : o }
    # what a hand is: a natural (two cards, 8, 9, 18 or 19), a baccarat (10, 20, 30)
    function what(pre, p,   n) {
      for (n = 0; (pre n ".code") in v; n++);
      if (n == 2 && (p % 10 == 8 || p % 10 == 9)) return ", a natural"
      return p % 10 == 0 ? ", baccarat" : ""
    }
    END {
      c = "table.lastCoup."
      if (v[c "voided"] == "true") { printf "  the coup was voided: %s\n", v[c "voidReason"]; exit }
      if (v[c "natural"] == "true") print "  a natural was shown: nobody draws (OLD-NATURAL)"
      printf "  banker %-6s%s (%d points%s)\n", v[c "bankerPlayerId"], cards(c "bankerCards."), v[c "bankerTotal"], what(c "bankerCards.", v[c "bankerTotal"])
      for (i = 0; (c "hands." i ".holderPlayerId") in v; i++) {
        h = c "hands." i "."
        printf "  punter %-6s%s (%d points%s), staked %d: %s\n", v[h "holderPlayerId"], cards(h "cards."), v[h "total"], what(h "cards.", v[h "total"]),
          v[c "bets." i ".amount"], res(v[h "outcome"])
      }
      printf "  the banker nets %+d\n", v[c "bankerNet"]
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

echo "== create an old baccarat table (croupier)"
RULES='{"minimum_bank":2000,"min_stake":100,"max_move_top":10,"auction_window_ms":5000,"staking_window_ms":5000,"cut_time_limit_ms":5000,"decision_time_limit_ms":5000,"bank_offer_time_limit_ms":5000}'
TABLE=$(call croupier-token $T/CreateTable \
  "{\"request_id\":\"$RUN-table\",\"variant\":\"VARIANT_OLD_BACCARAT\",\"old_baccarat_rules\":$RULES}" | flat | get table.tableId)
echo "table $TABLE: $RULES"

echo "== alice, bob, carol and dave sit down; with three seated the bank is auctioned"
for p in "${PLAYERS[@]}"; do
  call "$p-token" $T/JoinTable \
    "{\"request_id\":\"$RUN-join-$p\",\"table_id\":\"$TABLE\",\"player_id\":\"$p\"}" >/dev/null
  echo "$p seated"
done

C=0
SETTLED=0
while ((SETTLED < COUPS)); do
  C=$((C + 1))
  if ((C > COUPS + 3)); then
    echo "gave up: $C coups tried, $SETTLED settled" >&2
    exit 1
  fi
  wait_for "the staking to open" 40 ready
  echo "== coup $C"
  declare -A WAS=()
  for p in "${PLAYERS[@]}"; do WAS[$p]=$(balance "player:$p"); done
  stakes
  wait_for "coup $COUP to be settled" 60 step
  view croupier | report
  if [ "$(view croupier | get table.lastCoup.settled)" = true ]; then
    SETTLED=$((SETTLED + 1))
    MONEY=""
    for p in "${PLAYERS[@]}"; do MONEY="$MONEY $p $(printf %+d $(($(balance "player:$p") - WAS[$p])))"; done
    echo "  money:$MONEY"
  fi
done
# A baccarat in the last coup: the offer is answered before the end.
wait_for "the table to settle down" 40 ready

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
