package tablesvc

import (
	"testing"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

func (h *harness) setLimits(player string, l *walletv1.PlayerLimits) {
	h.t.Helper()
	if _, err := h.wallets.SetPlayerLimits(h.as("op"), &walletv1.SetPlayerLimitsRequest{RequestId: h.rid(), AccountId: "player:" + player, Limits: l}); err != nil {
		h.t.Fatal(err)
	}
}

// lostTheBank fails unless alice no longer banks at table id and has
// nothing held.
func (h *harness) lostTheBank(id string) *tablev1.Table {
	h.t.Helper()
	tb := h.get(id)
	if tb.GetBankerPlayerId() == "alice" {
		h.t.Fatalf("alice still banks %d: %v", tb.GetBank(), tb)
	}
	if _, held := h.account("player:alice"); held != 0 {
		h.t.Fatalf("alice still has %d held", held)
	}
	return tb
}

// TestBanqueBankerOverHisLimitsPassesTheBank: alice's banque bank grows
// from 2000 to 2900 past her maximum stake of 2500: after the coup she
// passes it (BQ-BANK) and it is auctioned again.
func TestBanqueBankerOverHisLimitsPassesTheBank(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	h.setLimits("alice", &walletv1.PlayerLimits{MaxStake: 2500})
	id := h.banqueTable(2000, "2C", "7H", "4C", "3D", "KS", "5H")
	if err := h.banqueBet(id, "carol", tablev1.BanqueSide_BANQUE_SIDE_CHEVAL, 400); err != nil {
		t.Fatal(err)
	}
	if err := h.banqueBet(id, "bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT, 500); err != nil {
		t.Fatal(err)
	}
	if tb := h.lostTheBank(id); tb.GetState() != tablev1.TableState_TABLE_STATE_AUCTION {
		t.Fatalf("after the pass: state %s, want the bank's auction", tb.GetState())
	}
	if b, _ := h.account("player:alice"); b != 10850 {
		t.Fatalf("alice has %d, want her bank and winnings back: 10850", b)
	}
}

// TestBanqueAuctionFeeOverTheLossLimit: alice's bid of 2000 fits her
// session loss limit of 2030, but with its fee of 50 (a loss) it would
// not: the fee is refused, her bid released, the auction reopened.
func TestBanqueAuctionFeeOverTheLossLimit(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	h.setLimits("alice", &walletv1.PlayerLimits{SessionLossLimit: 2030})
	id := h.banqueSeated("2C", "7H", "4C", "3D", "KS", "5H")
	if _, err := h.tables.BidBank(h.as("alice"), &tablev1.BidBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: 2000}); err != nil {
		t.Fatal(err)
	}
	h.banqueDeclined(id)
	if tb := h.lostTheBank(id); tb.GetState() != tablev1.TableState_TABLE_STATE_AUCTION {
		t.Fatalf("after the refused fee: state %s, want the auction again", tb.GetState())
	}
	if b, _ := h.account("player:alice"); b != 10000 {
		t.Fatalf("alice has %d, want 10000: no fee taken", b)
	}
}

// TestOldBankerOverHisLimitsLeaves: alice's bank in the old game grows
// from 10000 to 13000 past her maximum stake of 12000; the banker gives
// up the bank only by leaving (OLD-BACCARAT), so she is stood up.
func TestOldBankerOverHisLimitsLeaves(t *testing.T) {
	h := newHarness(t)
	h.fund(20000, "alice", "bob", "carol")
	h.setLimits("alice", &walletv1.PlayerLimits{MaxStake: 12000})
	id := h.oldTable(10000, "QH", "QS", "2C", "7H", "4C", "KS", "3D", "5D")
	h.oldNaturalCoup(id)
	tb := h.lostTheBank(id)
	for _, st := range tb.GetSeats() {
		if st.GetPlayerId() == "alice" {
			t.Fatalf("alice still seated: %v", tb.GetSeats())
		}
	}
	if b, _ := h.account("player:alice"); b != 23000 {
		t.Fatalf("alice has %d, want 23000", b)
	}
}
