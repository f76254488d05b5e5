package tablesvc

import (
	"testing"

	"google.golang.org/grpc/codes"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestCFBetBeforeAndAgainst: punters bet only against the bank, the banker
// never against himself (CF-BET-AGAINST), and every bet is made before any
// card is dealt (CF-BET-BEFORE).
func TestCFBetBeforeAndAgainst(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	_, err := h.bet(id, "alice", 100)
	wantReason(t, err, codes.FailedPrecondition, reasonBankerCannotBet)
	h.mustBet(id, "bob", 500)
	h.mustBet(id, "carol", 500) // the bank is covered: the cards are dealt
	if st := h.get(id).GetState(); st != tablev1.TableState_TABLE_STATE_DECISION {
		t.Fatalf("state %v", st)
	}
	_, err = h.bet(id, "carol", 1)
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	_, err = h.tables.CallBanco(h.as("carol"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
}

// TestCFBankNoWithdraw: while the banker holds the bank he can take none
// of it out: the wallet refuses to pay it out, and he cannot leave or pass
// with a coup in play (CF-BANK-NO-WITHDRAW).
func TestCFBankNoWithdraw(t *testing.T) {
	h := newHarness(t)
	h.fund(1000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	_, err := h.wallets.Withdraw(h.as("op"), &walletv1.WithdrawRequest{RequestId: h.rid(), AccountId: "player:alice", Amount: 1})
	wantReason(t, err, codes.FailedPrecondition, reasonInsufficientFunds)
	h.mustBet(id, "bob", 500) // the coup waits for bob's decision on 5
	_, err = h.tables.PassBank(h.as("alice"), &tablev1.PassBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	_, err = h.tables.LeaveTable(h.as("alice"), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
}

// TestCFBancoFreedomAtTable: in a banco coup under banco_free_play the
// banco player chooses at any total, then the banker (CF-BANCO-FREEDOM).
func TestCFBancoFreedomAtTable(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	// Player 2C 2D = 4 (the tableau would draw); banker TH 7S = 7.
	id := h.tableWith(&tablev1.HouseRules{BancoFreePlay: true}, 0, []string{"2C", "TH", "2D", "7S", "9H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	resp, err := h.tables.CallBanco(h.as("bob"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	tbl := resp.GetTable()
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION || tbl.GetCoup().GetDecisionPlayerId() != "bob" {
		t.Fatalf("free play: want bob's choice on 4, got %v", tbl)
	}
	tbl, err = h.decide(id, "bob", false) // stands on 4
	if err != nil {
		t.Fatal(err)
	}
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION || tbl.GetCoup().GetDecisionPlayerId() != "alice" {
		t.Fatalf("free play: want the banker's choice on 7, got %v", tbl)
	}
	tbl, err = h.decide(id, "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	if last := tbl.GetLastCoup(); last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS || len(last.GetPlayerCards()) != 2 {
		t.Fatalf("coup %v", last)
	}
}
