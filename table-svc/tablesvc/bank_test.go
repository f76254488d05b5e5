package tablesvc

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestCFFirstBankerLot: the first bank is offered to a seat drawn by lot,
// then in turn (CF-FIRST-BANKER).
func TestCFFirstBankerLot(t *testing.T) {
	h := newHarness(t)
	seen := map[string]bool{}
	for i := 0; i < 40 && len(seen) < 3; i++ {
		id := h.tableWith(&tablev1.HouseRules{FirstBanker: tablev1.FirstBanker_FIRST_BANKER_LOT}, 0, nil)
		h.join(id, "alice")
		h.join(id, "bob")
		h.join(id, "carol")
		tbl := h.get(id)
		if tbl.GetState() != tablev1.TableState_TABLE_STATE_OFFERING_BANK {
			t.Fatalf("state %v", tbl.GetState())
		}
		seen[tbl.GetOfferedPlayerId()] = true
	}
	// The lot is drawn when the second player sits: alice or bob.
	if !seen["alice"] || !seen["bob"] || seen["carol"] {
		t.Errorf("lots drawn: %v", seen)
	}
}

// TestCFFirstBankerAuction: the highest bank offered wins; outbid bids are
// released; the auction closes when the others pass or its time runs out
// (CF-FIRST-BANKER, CF-BANK-SIZE).
func TestCFFirstBankerAuction(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	hr := &tablev1.HouseRules{FirstBanker: tablev1.FirstBanker_FIRST_BANKER_AUCTION, BankOfferTimeLimitMs: 10000}
	id := h.tableWith(hr, 0, nil, "alice", "bob", "carol")
	if st := h.get(id).GetState(); st != tablev1.TableState_TABLE_STATE_AUCTION {
		t.Fatalf("state %v, want an auction", st)
	}
	bid := func(p string, amount int64) (*tablev1.Table, error) {
		resp, err := h.tables.BidBank(h.as(p), &tablev1.BidBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Amount: amount})
		return resp.GetTable(), err
	}
	_, err := bid("alice", 50)
	wantReason(t, err, codes.FailedPrecondition, reasonBankBelowMinimum)
	if _, err := bid("alice", 500); err != nil {
		t.Fatal(err)
	}
	_, err = bid("bob", 500)
	wantReason(t, err, codes.FailedPrecondition, reasonBidTooLow)
	tbl, err := bid("bob", 800)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.GetHighestBid() != 800 || tbl.GetHighestBidderPlayerId() != "bob" {
		t.Fatalf("auction %v", tbl)
	}
	if _, held := h.account("player:alice"); held != 0 {
		t.Errorf("alice's outbid bid is still held: %d", held)
	}
	_, err = h.tables.DeclineBank(h.as("bob"), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	if _, err := h.tables.DeclineBank(h.as("carol"), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"}); err != nil {
		t.Fatal(err)
	}
	// Alice has not passed: the auction waits for her, until its time runs out.
	h.clock.Advance(10 * time.Second)
	h.expire()
	tbl = h.get(id)
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_BETTING || tbl.GetBankerPlayerId() != "bob" || tbl.GetBank() != 800 {
		t.Fatalf("after the auction: %v", tbl)
	}
	if _, held := h.account("player:bob"); held != 800 {
		t.Errorf("bob's bank held %d, want 800", held)
	}
}

// TestCFPassAuction: under pass_mode auction, a passed bank goes to the
// first other seated player who puts up a bank equal to the one just held;
// when nobody does in time, it is offered in turn (CF-PASS).
func TestCFPassAuction(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(&tablev1.HouseRules{PassMode: tablev1.PassMode_PASS_MODE_AUCTION, BankOfferTimeLimitMs: 5000}, 0, nil, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 700)
	resp, err := h.tables.PassBank(h.as("alice"), &tablev1.PassBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl := resp.GetTable(); tbl.GetOpenOfferAmount() != 700 || tbl.GetOfferedPlayerId() != "" {
		t.Fatalf("after the pass: %v", tbl)
	}
	accept := func(p string, amount int64) error {
		_, err := h.tables.AcceptBank(h.as(p), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Amount: amount})
		return err
	}
	wantReason(t, accept("alice", 700), codes.FailedPrecondition, reasonNotYourTurn)
	wantReason(t, accept("carol", 600), codes.InvalidArgument, reasonInvalidAmount)
	if err := accept("carol", 700); err != nil {
		t.Fatal(err)
	}
	tbl := h.get(id)
	if tbl.GetBankerPlayerId() != "carol" || tbl.GetBank() != 700 {
		t.Fatalf("after carol took it: %v", tbl)
	}
	// Carol passes too; nobody takes it at 700: offered in turn, to alice.
	if _, err := h.tables.PassBank(h.as("carol"), &tablev1.PassBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(5 * time.Second)
	h.expire()
	if tbl := h.get(id); tbl.GetOfferedPlayerId() != "alice" || tbl.GetOpenOfferAmount() != 0 {
		t.Fatalf("after the open offer ran out: %v", tbl)
	}
}

// TestCFFirstCoupExempt: with first_coup_exempt the first coup of each
// banker pays no commission, the next does (CF-BANK-WINS).
func TestCFFirstCoupExempt(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	// Two banker naturals in a row.
	cards := []string{"2C", "9H", "3D", "TC", "2C", "9H", "3D", "TC"}
	id := h.tableWith(&tablev1.HouseRules{FirstCoupExempt: true}, 0, cards, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	tbl := h.mustBet(id, "bob", 1000)
	if c := tbl.GetLastCoup().GetCommission(); c != 0 || tbl.GetBank() != 2000 {
		t.Fatalf("first coup: commission %d, bank %d; want 0, 2000", c, tbl.GetBank())
	}
	tbl = h.mustBet(id, "bob", 1000)
	if c := tbl.GetLastCoup().GetCommission(); c != 50 {
		t.Fatalf("second coup: commission %d, want 50", c)
	}
}
