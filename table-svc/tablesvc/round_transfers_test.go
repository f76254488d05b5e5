package tablesvc

import (
	"testing"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// checkRoundMoney checks the money of a settled round as reader (one of
// its players) and an auditor recall it: each player's net (RoundPlayer.
// net, in ListRounds and GetRound) is want's and the sum of his
// transfers; every balance before and after is consistent with the
// amount, and a player's last balance is his account's now; the reader
// sees his own balances only, the auditor every one.
func checkRoundMoney(t *testing.T, h *harness, table, coup, reader string, want map[string]int64) {
	t.Helper()
	nets := func(r *tablev1.Round) map[string]int64 {
		out := map[string]int64{}
		for _, p := range r.GetPlayers() {
			if p.GetNet() != 0 {
				out[p.GetPlayerId()] = p.GetNet()
			}
		}
		return out
	}
	same := func(what string, got map[string]int64) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: nets %v, want %v", what, got, want)
		}
		for p, w := range want {
			if got[p] != w {
				t.Errorf("%s: %s's net %d, want %d", what, p, got[p], w)
			}
		}
	}
	listed := h.mustListRounds(reader, &tablev1.ListRoundsRequest{PlayerId: reader})
	if len(listed) == 0 || listed[0].GetCoupId() != coup {
		t.Fatalf("%s's rounds %v, want %s first", reader, listed, coup)
	}
	same("ListRounds", nets(listed[0]))

	staff, err := h.getRound("auditor", table, coup)
	if err != nil {
		t.Fatal(err)
	}
	same("GetRound (auditor)", nets(staff.GetRound()))
	if len(staff.GetTransfers()) == 0 {
		t.Fatal("no transfers in the recall")
	}
	sums, last := map[string]int64{}, map[string]int64{}
	for _, tr := range staff.GetTransfers() {
		if tr.GetDebitBalanceBefore()-tr.GetAmount() != tr.GetDebitBalanceAfter() ||
			tr.GetCreditBalanceBefore()+tr.GetAmount() != tr.GetCreditBalanceAfter() || tr.GetTransferId() == "" || tr.GetReason() == "" {
			t.Errorf("inconsistent transfer %v", tr)
		}
		if p := accountPlayer(tr.GetDebitAccountId()); p != "" {
			sums[p] -= tr.GetAmount()
			last[tr.GetDebitAccountId()] = tr.GetDebitBalanceAfter()
		}
		if p := accountPlayer(tr.GetCreditAccountId()); p != "" {
			sums[p] += tr.GetAmount()
			last[tr.GetCreditAccountId()] = tr.GetCreditBalanceAfter()
		}
	}
	same("sum of the transfers", sums)
	for acct, b := range last {
		if now, _ := h.account(acct); now != b {
			t.Errorf("%s: last balance after %d in the recall, %d in the wallet", acct, b, now)
		}
	}

	mine, err := h.getRound(reader, table, coup)
	if err != nil {
		t.Fatal(err)
	}
	same("GetRound ("+reader+")", nets(mine.GetRound()))
	if len(mine.GetTransfers()) != len(staff.GetTransfers()) {
		t.Fatalf("%s sees %d transfers, the auditor %d", reader, len(mine.GetTransfers()), len(staff.GetTransfers()))
	}
	for i, tr := range mine.GetTransfers() {
		all := staff.GetTransfers()[i]
		own := accountPlayer(tr.GetDebitAccountId()) == reader
		if shown := tr.GetDebitBalanceAfter() == all.GetDebitBalanceAfter() && tr.GetDebitBalanceBefore() == all.GetDebitBalanceBefore(); own != shown && all.GetDebitBalanceBefore() != 0 {
			t.Errorf("%s's view of %v: debit side balances shown %v, his own %v", reader, tr, shown, own)
		}
		if !own && (tr.GetDebitBalanceAfter() != 0 || tr.GetDebitBalanceBefore() != 0) {
			t.Errorf("%s sees %s's balances: %v", reader, tr.GetDebitAccountId(), tr)
		}
		own = accountPlayer(tr.GetCreditAccountId()) == reader
		if !own && (tr.GetCreditBalanceAfter() != 0 || tr.GetCreditBalanceBefore() != 0) {
			t.Errorf("%s sees %s's balances: %v", reader, tr.GetCreditAccountId(), tr)
		}
		if own && tr.GetCreditBalanceAfter() != all.GetCreditBalanceAfter() {
			t.Errorf("%s's own credit balance hidden: %v", reader, tr)
		}
	}
}

// TestRoundTransfersCheminDeFer: bob's 9 beats alice's 8: alice's bank
// pays his 500.
func TestRoundTransfersCheminDeFer(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"4C", "3H", "5D", "5S"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	coup := h.mustBet(id, "bob", 500).GetLastCoup().GetCoupId()
	checkRoundMoney(t, h, id, coup, "bob", map[string]int64{"alice": -500, "bob": 500})
	checkRoundMoney(t, h, id, coup, "alice", map[string]int64{"alice": -500, "bob": 500})
	h.restartTable()
	checkRoundMoney(t, h, id, coup, "bob", map[string]int64{"alice": -500, "bob": 500})
}

// TestRoundTransfersPuntoBanco: alice's bank bet loses its 1000 to
// house:bank, whose balance she does not see.
func TestRoundTransfersPuntoBanco(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(5000, "alice")
	id := h.pbTable(nil, 0, "2C", "KD", "3D", "5H", "4S", "9C")
	h.join(id, "alice")
	coup := h.mustPBBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 1000).GetCoup().GetCoupId()
	h.closeWindow(id)
	checkRoundMoney(t, h, id, coup, "alice", map[string]int64{"alice": -1000})
}

// TestRoundTransfersBanque: the banker's natural takes carol's à cheval
// 400 and bob's 500 (the auction's fee is not the round's).
func TestRoundTransfersBanque(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.banqueTable(2000, "2C", "7H", "4C", "3D", "KS", "5H")
	if err := h.banqueBet(id, "carol", tablev1.BanqueSide_BANQUE_SIDE_CHEVAL, 400); err != nil {
		t.Fatal(err)
	}
	if err := h.banqueBet(id, "bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT, 500); err != nil {
		t.Fatal(err)
	}
	coup := h.get(id).GetLastCoup().GetCoupId()
	checkRoundMoney(t, h, id, coup, "carol", map[string]int64{"alice": 900, "bob": -500, "carol": -400})
}

// TestRoundTransfersOldBaccarat: the banker's 9 takes every stake
// (OLD-NATURAL).
func TestRoundTransfersOldBaccarat(t *testing.T) {
	h := newHarness(t)
	h.fund(20000, "alice", "bob", "carol")
	id := h.oldTable(10000, "QH", "QS", "2C", "7H", "4C", "KS", "3D", "5D")
	h.oldNaturalCoup(id)
	coup := h.get(id).GetLastCoup().GetCoupId()
	checkRoundMoney(t, h, id, coup, "bob", map[string]int64{"alice": 3000, "bob": -1000, "carol": -2000})
}

// oldNaturalCoup plays the coup of oldTable's cards "QH", "QS", "2C",
// "7H", "4C", "KS", "3D", "5D": bob stakes 1000, carol 2000, alice moves
// two cards to the bottom, and her 9 takes both stakes (OLD-NATURAL).
func (h *harness) oldNaturalCoup(id string) {
	h.t.Helper()
	for _, s := range []struct {
		p      string
		amount int64
	}{{"bob", 1000}, {"carol", 2000}} {
		if err := h.stake(id, s.p, s.amount); err != nil {
			h.t.Fatal(err)
		}
	}
	if _, err := h.tables.MoveTopCards(h.as("alice"), &tablev1.MoveTopCardsRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Count: 2}); err != nil {
		h.t.Fatal(err)
	}
}
