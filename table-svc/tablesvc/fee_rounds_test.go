package tablesvc

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestFeeRounds: a seat fee (hourly_fee, CF-BANK-WINS) is a round of the
// history under the round id the wallet sends the operator's wallet
// ("fee-" and the fee's wallet request id, "table/<table>/fee/<n>"):
// GetRound answers it, settled, the player's net minus the fee and the
// fee as the house's commission, number 0 (no coup of the table's
// count); ListRounds lists it. A player reads his own fee round only
// (NOT_YOUR_ROUND), and a croupier of another operator is answered
// NOT_FOUND ROUND_NOT_FOUND.
func TestFeeRounds(t *testing.T) {
	h := newHarness(t)
	h.fund(100000, "alice", "bob")
	id := h.tableWith(&tablev1.HouseRules{HourlyFee: 3600}, 0, []string{"2C", "9H", "3D", "TC"}, "alice", "bob")
	h.clock.Advance(30 * time.Minute)
	h.expire()
	h.acceptBank(id, "bob", 1000)
	h.mustBet(id, "alice", 1000) // the coup settles; 30 minutes at 3600 an hour: 1800 each

	list, err := h.tables.ListRounds(h.as("croupier"), &tablev1.ListRoundsRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	fees := map[string]*tablev1.Round{} // player -> his fee round
	coups := 0
	for _, r := range list.GetRounds() {
		if !strings.HasPrefix(r.GetCoupId(), "fee-table/"+id+"/fee/") {
			coups++
			continue
		}
		if len(r.GetPlayers()) != 1 {
			t.Fatalf("fee round %s names %v, want one player", r.GetCoupId(), r.GetPlayers())
		}
		fees[r.GetPlayers()[0].GetPlayerId()] = r
	}
	if coups != 1 || len(fees) != 2 || fees["alice"] == nil || fees["bob"] == nil {
		t.Fatalf("rounds of the table: %v; want one coup and a fee round each for alice and bob", list.GetRounds())
	}
	for p, r := range fees {
		g, err := h.tables.GetRound(h.as(p), &tablev1.GetRoundRequest{TableId: id, CoupId: r.GetCoupId()})
		if err != nil {
			t.Fatalf("%s reads his fee round %s: %v", p, r.GetCoupId(), err)
		}
		got := g.GetRound()
		if got.GetState() != tablev1.RoundState_ROUND_STATE_SETTLED || got.GetCommission() != 1800 || got.GetNumber() != 0 ||
			got.GetPlayers()[0].GetNet() != -1800 || got.GetTableId() != id || got.GetOperatorId() != DefaultOperator || len(g.GetEvents()) != 0 {
			t.Errorf("%s's fee round: %v, want settled, commission 1800, his net -1800, number 0, no event", p, got)
		}
	}
	_, err = h.tables.GetRound(h.as("alice"), &tablev1.GetRoundRequest{TableId: id, CoupId: fees["bob"].GetCoupId()})
	if status.Code(err) != codes.PermissionDenied || errs.Reason(err) != "NOT_YOUR_ROUND" {
		t.Errorf("alice reads bob's fee round: %v, want PERMISSION_DENIED NOT_YOUR_ROUND", err)
	}
	_, err = h.tables.GetRound(h.asOf("croupier-b", auth.RoleCroupier, "casino-b"), &tablev1.GetRoundRequest{TableId: id, CoupId: fees["bob"].GetCoupId()})
	if status.Code(err) != codes.NotFound || errs.Reason(err) != "ROUND_NOT_FOUND" {
		t.Errorf("casino-b's croupier reads a fee round of the default operator's: %v, want NOT_FOUND ROUND_NOT_FOUND", err)
	}
}
