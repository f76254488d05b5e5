package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestRoundHistory: after examples/coup.sh on two shards, alice (the
// banker) recalls the coup with ListRounds (fanned out over the shards)
// and reads every step of it with GetRound; bob, a punter in it, reads it
// too; dave, not in it, may neither read it nor list alice's rounds.
func TestRoundHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1}, Shards: 2})
	c := dial(t, st.GatewayAddr)
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", "coup.sh"))
	cmd.Env = append(os.Environ(), "CHEMMY_GATEWAY="+st.GatewayAddr, "GRPCURL="+grpcurlPath(t), "RUN_ID=rounds")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("coup.sh: %v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`(?m)^TABLE=(\S+)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("coup.sh printed no TABLE= line:\n%s", out.String())
	}
	tableID := m[1]
	tbl, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: tableID})
	if err != nil {
		t.Fatal(err)
	}
	last := tbl.GetTable().GetLastCoup()

	list, err := c.table.ListRounds(as(t, "alice"), &tablev1.ListRoundsRequest{PlayerId: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetRounds()) != 1 || list.GetUnreachable() != nil {
		t.Fatalf("alice's rounds: %v", list)
	}
	r := list.GetRounds()[0]
	stakes := map[string]int64{}
	for _, p := range r.GetPlayers() {
		stakes[p.GetPlayerId()] = p.GetStake()
	}
	if r.GetCoupId() != last.GetCoupId() || r.GetTableId() != tableID || r.GetState() != tablev1.RoundState_ROUND_STATE_SETTLED ||
		r.GetOutcome() != last.GetOutcome() || len(stakes) != 3 || stakes["alice"] != 1000 || stakes["bob"] != 600 || stakes["carol"] != 400 {
		t.Fatalf("alice's round %v, want coup %s settled %s with alice 1000, bob 600, carol 400", r, last.GetCoupId(), last.GetOutcome())
	}

	for _, who := range []string{"alice", "bob"} {
		got, err := c.table.GetRound(as(t, who), &tablev1.GetRoundRequest{TableId: tableID, CoupId: r.GetCoupId()})
		if err != nil {
			t.Fatalf("%s's GetRound: %v", who, err)
		}
		bets := map[string]int64{}
		var cards []string
		var resulted, settled bool
		for _, ev := range got.GetEvents() {
			switch {
			case ev.GetBetPlaced() != nil:
				bets[ev.GetBetPlaced().GetPlayerId()] = ev.GetBetPlaced().GetAmount()
			case ev.GetCardDealt() != nil:
				cards = append(cards, ev.GetCardDealt().GetCard().GetCode())
			case ev.GetCoupResulted() != nil:
				resulted = true
			case ev.GetCoupSettled() != nil:
				settled = int32(ev.GetCoupSettled().GetOutcome()) == int32(last.GetOutcome())
			}
		}
		want := len(last.GetPlayerCards()) + len(last.GetBankerCards())
		if bets["bob"] != 600 || bets["carol"] != 400 || len(cards) != want || !resulted || !settled {
			t.Errorf("%s's recall: bets %v, cards %v (want %d), resulted %v, settled %v", who, bets, cards, want, resulted, settled)
		}
		for _, code := range cards {
			if code == "" {
				t.Errorf("%s's recall hides a card: %v", who, cards)
			}
		}
		// The settlement's transfers: his own balances shown, nobody
		// else's.
		moved := last.GetOutcome() != tablev1.Outcome_OUTCOME_STAND_OFF // a shuffled shoe: a stand-off moves nothing
		if moved && len(got.GetTransfers()) == 0 {
			t.Errorf("%s's recall has no transfers", who)
		}
		for _, tr := range got.GetTransfers() {
			for _, side := range []struct {
				acct          string
				before, after int64
			}{{tr.GetDebitAccountId(), tr.GetDebitBalanceBefore(), tr.GetDebitBalanceAfter()},
				{tr.GetCreditAccountId(), tr.GetCreditBalanceBefore(), tr.GetCreditBalanceAfter()}} {
				if own, shown := side.acct == "player:"+who, side.before != 0 || side.after != 0; own != shown {
					t.Errorf("%s's recall of %v: %s's balances shown %v", who, tr, side.acct, shown)
				}
			}
		}
	}
	// The players' nets: what the bank won or lost, less the commission.
	var nets int64
	for _, p := range r.GetPlayers() {
		nets += p.GetNet()
	}
	if nets != -r.GetCommission() || (last.GetOutcome() != tablev1.Outcome_OUTCOME_STAND_OFF) != (r.GetPlayers()[0].GetNet() != 0) {
		t.Errorf("round nets %v sum to %d, want minus the commission %d", r.GetPlayers(), nets, r.GetCommission())
	}

	_, err = c.table.GetRound(as(t, "dave"), &tablev1.GetRoundRequest{TableId: tableID, CoupId: r.GetCoupId()})
	wantReason(t, err, codes.PermissionDenied, "NOT_YOUR_ROUND")
	_, err = c.table.ListRounds(as(t, "dave"), &tablev1.ListRoundsRequest{PlayerId: "alice"})
	wantReason(t, err, codes.PermissionDenied, "NOT_YOURSELF")
	if mine, err := c.table.ListRounds(as(t, "dave"), &tablev1.ListRoundsRequest{PlayerId: "dave"}); err != nil || len(mine.GetRounds()) != 0 {
		t.Errorf("dave's own rounds: %v %v", mine, err)
	}
	// Staff list every round of every shard.
	all, err := c.table.ListRounds(as(t, "auditor"), &tablev1.ListRoundsRequest{})
	if err != nil || len(all.GetRounds()) != 1 {
		t.Errorf("the auditor's list: %v %v", all, err)
	}
}
