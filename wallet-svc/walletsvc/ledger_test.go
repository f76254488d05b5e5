package walletsvc

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

// auditRPC runs the auditor's check and fails on any discrepancy.
func (e *env) auditRPC() *walletv1.AuditLedgerResponse {
	e.t.Helper()
	r, err := e.c.AuditLedger(as(auditor), &walletv1.AuditLedgerRequest{})
	if err != nil {
		e.t.Fatalf("AuditLedger: %v", err)
	}
	if !r.GetBalanced() {
		e.t.Fatalf("books do not balance: %v", r.GetDiscrepancies())
	}
	return r
}

func TestPostHold(t *testing.T) {
	e := newEnv(t)
	svc := as(tableSvc)
	e.deposit("player:alice", 1000)
	e.deposit("player:bob", 1)
	h := e.hold("player:alice", 400)
	req := &walletv1.PostHoldRequest{RequestId: "post-1", HoldId: h.GetHoldId(), Amount: 150, ToAccountId: "player:bob"}
	r1, err := e.c.PostHold(svc, req)
	if err != nil {
		t.Fatal(err)
	}
	if r1.GetHold().GetState() != walletv1.HoldState_HOLD_STATE_POSTED || r1.GetHold().GetPostedAmount() != 150 || r1.GetTransfer().GetAmount() != 150 {
		t.Fatalf("posted: %v", r1)
	}
	e.wantBal("player:alice", 850, 0) // 150 moved, 250 released
	e.wantBal("player:bob", 151, 0)
	r2, err := e.c.PostHold(svc, req)
	if err != nil || !proto.Equal(r1, r2) {
		t.Fatalf("retry: %v %v", err, r2)
	}
	// A hold resolves exactly once.
	_, err = e.c.PostHold(svc, &walletv1.PostHoldRequest{RequestId: "post-2", HoldId: h.GetHoldId(), ToAccountId: "player:bob"})
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	if !strings.Contains(err.Error(), "POSTED") {
		t.Errorf("the error does not say how the hold was resolved: %v", err)
	}
	_, err = e.c.VoidHold(svc, &walletv1.VoidHoldRequest{RequestId: "void-1", HoldId: h.GetHoldId()})
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	h2 := e.hold("player:alice", 100)
	_, err = e.c.PostHold(svc, &walletv1.PostHoldRequest{RequestId: "post-3", HoldId: h2.GetHoldId(), Amount: 101, ToAccountId: "player:bob"})
	wantErr(t, err, codes.InvalidArgument, "AMOUNT_EXCEEDS_HOLD")
	// The failure is stored: the same id fails the same way.
	_, err = e.c.PostHold(svc, &walletv1.PostHoldRequest{RequestId: "post-3", HoldId: h2.GetHoldId(), Amount: 101, ToAccountId: "player:bob"})
	wantErr(t, err, codes.InvalidArgument, "AMOUNT_EXCEEDS_HOLD")
	_, err = e.c.PostHold(svc, &walletv1.PostHoldRequest{RequestId: "post-3", HoldId: h2.GetHoldId(), Amount: 100, ToAccountId: "player:bob"})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	// Whole hold to the house.
	r, err := e.c.PostHold(svc, &walletv1.PostHoldRequest{RequestId: "post-4", HoldId: h2.GetHoldId(), ToAccountId: AccountHouseBank})
	if err != nil || r.GetTransfer().GetAmount() != 100 {
		t.Fatalf("post whole: %v %v", err, r)
	}
	e.wantBal("player:alice", 750, 0)
	// The transfer's reason: "hold_posted" unless the request gives one
	// (PostHoldRequest.reason).
	if got := r1.GetTransfer().GetReason(); got != "hold_posted" {
		t.Errorf("default reason %q, want hold_posted", got)
	}
	h3 := e.hold("player:alice", 10)
	r, err = e.c.PostHold(svc, &walletv1.PostHoldRequest{RequestId: "post-5", HoldId: h3.GetHoldId(), ToAccountId: AccountHouseBank, Reason: "tip"})
	if err != nil || r.GetTransfer().GetReason() != "tip" {
		t.Fatalf("post with a reason: %v %v", err, r)
	}
	// A player's account is not created by a post to it: it must exist.
	h4 := e.hold("player:alice", 10)
	_, err = e.c.PostHold(svc, &walletv1.PostHoldRequest{RequestId: "post-6", HoldId: h4.GetHoldId(), ToAccountId: "player:nobody"})
	wantErr(t, err, codes.NotFound, "ACCOUNT_NOT_FOUND")
	e.audit()
	e.auditRPC()
}

func TestHoldExpiry(t *testing.T) {
	e := newEnv(t)
	svc := as(tableSvc)
	e.deposit("player:alice", 1000)
	r, err := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: "h", AccountId: "player:alice", Amount: 300, Ttl: durationpb.New(50 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	h := r.GetHold()
	if h.GetExpireTime() == nil {
		t.Fatal("no expire_time")
	}
	e.wantBal("player:alice", 1000, 300)
	time.Sleep(80 * time.Millisecond)
	// Due but perhaps not swept yet: it can no longer be resolved.
	_, err = e.c.PostHold(svc, &walletv1.PostHoldRequest{RequestId: "p", HoldId: h.GetHoldId(), ToAccountId: AccountHouseBank})
	if reason := errReason(err); reason != "HOLD_EXPIRED" && reason != "HOLD_NOT_OPEN" {
		t.Fatalf("post of an expired hold: %v", err)
	}
	if _, err := e.c.ExpireHolds(as(operator), &walletv1.ExpireHoldsRequest{RequestId: "sweep"}); err != nil {
		t.Fatal(err)
	}
	e.wantBal("player:alice", 1000, 0)
	_, err = e.c.VoidHold(svc, &walletv1.VoidHoldRequest{RequestId: "v", HoldId: h.GetHoldId()})
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	if !strings.Contains(err.Error(), "EXPIRED") {
		t.Errorf("want EXPIRED in %v", err)
	}
	// The background sweep expires holds by itself.
	if _, err := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: "h2", AccountId: "player:alice", Amount: 100, Ttl: durationpb.New(time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.account("player:alice").GetHeld() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sweep did not expire the hold")
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.audit()
	e.auditRPC()
}

func errReason(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	for _, r := range []string{"HOLD_EXPIRED", "HOLD_NOT_OPEN"} {
		if strings.Contains(s, "expired") && r == "HOLD_EXPIRED" {
			return r
		}
		if strings.Contains(s, "already resolved") && r == "HOLD_NOT_OPEN" {
			return r
		}
	}
	return s
}

func TestStatementPagesAndAudit(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:alice", 5000)
	e.deposit("player:bob", 5000)
	bank := e.hold("player:alice", 1000)
	for i := range 3 {
		bet := e.hold("player:bob", 100)
		e.settle(&walletv1.SettleCoupRequest{CoupId: e.id("coup"), BankHoldId: bank.GetHoldId(), Bets: bets(bet),
			Outcome: []walletv1.CoupOutcome{bankWins, walletv1.CoupOutcome_COUP_OUTCOME_BANK_LOSES, bankWins}[i], CommissionBp: 500})
	}
	var all []*walletv1.StatementEntry
	tok := ""
	for pages := 0; ; pages++ {
		r, err := e.c.ListStatement(as(auth.Caller{Subject: "alice", Role: auth.RolePlayer}),
			&walletv1.ListStatementRequest{AccountId: "player:alice", PageSize: 2, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r.GetEntries()...)
		if tok = r.GetNextPageToken(); tok == "" {
			if r.GetAccount().GetBalance() != all[len(all)-1].GetBalanceAfter() {
				t.Fatalf("last balance_after %d, account %d", all[len(all)-1].GetBalanceAfter(), r.GetAccount().GetBalance())
			}
			break
		}
		if pages > 10 {
			t.Fatal("too many pages")
		}
	}
	// deposit, 2x (bet_lost + commission), bet_won
	if len(all) != 6 {
		t.Fatalf("%d entries: %v", len(all), all)
	}
	var bal int64
	for _, en := range all {
		bal += en.GetAmount()
		if en.GetBalanceAfter() != bal || en.GetTransfer().GetCurrencyCode() != DefaultCurrency || en.GetTransfer().GetSequence() == 0 {
			t.Fatalf("entry %v: running balance %d", en, bal)
		}
	}
	_, err := e.c.ListStatement(as(auth.Caller{Subject: "bob", Role: auth.RolePlayer}), &walletv1.ListStatementRequest{AccountId: "player:alice"})
	wantErr(t, err, codes.PermissionDenied, "NOT_YOUR_ACCOUNT")
	_, err = e.c.ListStatement(as(auditor), &walletv1.ListStatementRequest{AccountId: "player:alice", PageToken: "x"})
	wantErr(t, err, codes.InvalidArgument, "INVALID_PAGE_TOKEN")
	_, err = e.c.AuditLedger(as(auth.Caller{Subject: "alice", Role: auth.RolePlayer}), &walletv1.AuditLedgerRequest{})
	if status := codes.PermissionDenied; err == nil || !strings.Contains(err.Error(), status.String()) {
		t.Fatalf("player audit: %v", err)
	}
	a := e.auditRPC()
	if a.GetTransfersReplayed() != 7 || a.GetCurrencies()[0].GetInWallet() != 10000 || a.GetOpenHolds() != 1 {
		t.Fatalf("audit: %v", a)
	}
	// One outbox event per transfer, a transaction's transfers one
	// message (version 2): subject chemmy.wallet.<its first event>.v2,
	// Nats-Msg-Id that event's id; the ledger's sequence 1..7 in order.
	evs := e.outboxEvents()
	if len(evs) != 7 {
		t.Fatalf("%d events, want 7", len(evs))
	}
	msgs := map[string]int{}
	for i, o := range evs {
		tr := o.ev.GetTransferRecorded()
		if o.ev.GetSequence() != uint64(i+1) || tr.GetTransferId() != o.ev.GetEventId() || tr.GetCurrencyCode() == "" || o.ev.GetOccurTime() == nil {
			t.Fatalf("event %d: %v", i, o.ev)
		}
		if o.msg.Subject != "chemmy.wallet."+o.msg.ID+".v2" || o.msg.Headers().Get(outbox.TypeHeader) != "" {
			t.Fatalf("subject %q id %q headers %v", o.msg.Subject, o.msg.ID, o.msg.Headers())
		}
		if msgs[o.msg.ID] == 0 && o.msg.ID != o.ev.GetEventId() {
			t.Fatalf("message %q begins with event %s", o.msg.ID, o.ev.GetEventId())
		}
		msgs[o.msg.ID]++
	}
	if len(msgs) >= 7 {
		t.Errorf("%d messages for 7 transfers, want a transaction's in one: %v", len(msgs), msgs)
	}
	// Still balanced after a restart.
	e.restart()
	e.auditRPC()
}

func TestBankLimitAndUncovered(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:b", 5000)
	e.deposit("player:p", 5000)
	bank := e.hold("player:b", 1000)
	bet := e.hold("player:p", 600)
	r := e.settle(&walletv1.SettleCoupRequest{CoupId: "c1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankWins,
		CommissionBp: 500, BankLimit: 1200})
	// Source: RULES.md CF-UNCOVERED, CF-BANK-LIMIT: 400 uncovered never
	// moved; 1000 + 600 - 30 = 1570, 370 set aside.
	if r.GetUncovered() != 400 || r.GetNewBank() != 1200 || r.GetSetAside() != 370 || r.GetCommission() != 30 {
		t.Fatalf("%v", r)
	}
	e.wantBal("player:b", 5570, 1200)
	e.audit()
}

func TestPuntoBanco(t *testing.T) {
	e := newEnv(t)
	op := as(operator)
	if _, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "float", AccountId: AccountHouseBank, Amount: 100000}); err != nil {
		t.Fatal(err)
	}
	e.net.Add(100000)
	e.deposit("player:p", 10000)
	type bt = walletv1.PuntoBancoBetType
	const (
		bank    = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_BANK
		player  = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_PLAYER
		tie     = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_TIE
		natural = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_BANK_NATURAL
	)
	for _, tc := range []struct {
		name    string
		outcome walletv1.PuntoBancoOutcome
		natural bool
		typ     bt
		net     int64 // the punter's gain
	}{
		{"bank wins, bank bet", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_BANK_WINS, false, bank, 95},
		{"bank wins, player bet", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_BANK_WINS, false, player, -100},
		{"player wins, player bet", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_PLAYER_WINS, false, player, 100},
		{"player wins, bank bet", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_PLAYER_WINS, false, bank, -100},
		{"tie, bank bet pushes", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_TIE, false, bank, 0},
		{"tie, player bet pushes", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_TIE, false, player, 0},
		{"tie, tie bet 8:1", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_TIE, false, tie, 800},
		{"no tie, tie bet", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_BANK_WINS, false, tie, -100},
		{"natural 9:1", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_BANK_WINS, true, natural, 900},
		{"no natural", walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_BANK_WINS, false, natural, -100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.account("player:p").GetBalance()
			h := e.hold("player:p", 100)
			r, err := e.c.SettlePuntoBanco(as(tableSvc), &walletv1.SettlePuntoBancoRequest{CoupId: e.id("pb"), Outcome: tc.outcome,
				BankNatural: tc.natural, CommissionBp: 500,
				Bets: []*walletv1.PuntoBancoBet{{HoldId: h.GetHoldId(), Amount: 100, Type: tc.typ}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.account("player:p").GetBalance() - before; got != tc.net {
				t.Fatalf("punter gained %d, want %d (%v)", got, tc.net, r)
			}
			e.audit()
		})
	}
	// The house bank cannot pay more than it has.
	e.deposit("player:q", 1<<40)
	h := e.hold("player:q", 1<<38)
	_, err := e.c.SettlePuntoBanco(as(tableSvc), &walletv1.SettlePuntoBancoRequest{CoupId: "broke", Outcome: walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_TIE,
		Bets: []*walletv1.PuntoBancoBet{{HoldId: h.GetHoldId(), Amount: 1 << 38, Type: tie}}})
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	e.audit()
	e.auditRPC()
}

// TestPuntoBancoHouseRules settles the punto banco house rules the request
// carries: the no-commission game and its half pay on 6 (rounded down,
// the PB-BANK reading), the tie, bank natural and pair prices, the pair
// bets; each coup moves exactly its results between the bettor, house:bank
// and house:commission, the books stay balanced, a retry with the same
// coup id is answered from the first settlement, and bad house rules are
// refused before anything moves.
func TestPuntoBancoHouseRules(t *testing.T) {
	e := newEnv(t)
	e.deposit(AccountHouseBank, 100000)
	e.deposit("player:p", 100000)
	const (
		bank       = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_BANK
		player     = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_PLAYER
		tie        = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_TIE
		natural    = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_BANK_NATURAL
		playerPair = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_PLAYER_PAIR
		bankPair   = walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_BANK_PAIR
		bankWins   = walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_BANK_WINS
		playerWins = walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_PLAYER_WINS
		tieOut     = walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_TIE
	)
	type bet struct {
		typ    walletv1.PuntoBancoBetType
		amount int64
	}
	balances := func() (p, b, c int64) {
		return e.account("player:p").GetBalance(), e.account(AccountHouseBank).GetBalance(), e.account(AccountCommission).GetBalance()
	}
	// request holds the bets and returns a settlement request for them.
	request := func(bets []bet, set func(r *walletv1.SettlePuntoBancoRequest)) *walletv1.SettlePuntoBancoRequest {
		r := &walletv1.SettlePuntoBancoRequest{CoupId: e.id("pb"), CommissionBp: 500}
		for _, b := range bets {
			h := e.hold("player:p", b.amount)
			r.Bets = append(r.Bets, &walletv1.PuntoBancoBet{HoldId: h.GetHoldId(), Amount: b.amount, Type: b.typ})
		}
		set(r)
		return r
	}
	for _, tc := range []struct {
		name       string
		bets       []bet
		set        func(r *walletv1.SettlePuntoBancoRequest)
		won, lost  []int64 // per bet
		commission int64
	}{
		{"no commission, bank wins on 7: 1 to 1", []bet{{bank, 1000}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.NoCommission, r.Outcome, r.BankTotal = true, bankWins, 7
		}, []int64{1000}, []int64{0}, 0},
		{"no commission, bank wins on 6: half", []bet{{bank, 1000}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.NoCommission, r.Outcome, r.BankTotal = true, bankWins, 6
		}, []int64{500}, []int64{0}, 0},
		{"no commission, bank wins on 6: half rounded down", []bet{{bank, 1001}, {bank, 1}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.NoCommission, r.Outcome, r.BankTotal = true, bankWins, 6
		}, []int64{500, 0}, []int64{0, 0}, 0},
		{"no commission, player wins against 6", []bet{{bank, 1000}, {player, 1000}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.NoCommission, r.Outcome, r.BankTotal = true, playerWins, 6
		}, []int64{0, 1000}, []int64{1000, 0}, 0},
		{"no commission, tie on 6 pushes", []bet{{bank, 1000}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.NoCommission, r.Outcome, r.BankTotal = true, tieOut, 6
		}, []int64{0}, []int64{0}, 0},
		{"commission game ignores the bank total", []bet{{bank, 1000}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.Outcome, r.BankTotal = bankWins, 6
		}, []int64{1000}, []int64{0}, 50},
		{"prices: tie 9, natural 8", []bet{{tie, 100}, {natural, 100}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.Outcome, r.BankNatural, r.BankTotal, r.TiePays, r.BankNaturalPays = tieOut, true, 8, 9, 8
		}, []int64{900, 800}, []int64{0, 0}, 0},
		{"pairs at the default 11", []bet{{playerPair, 100}, {bankPair, 100}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.Outcome, r.BankTotal, r.PlayerPair = bankWins, 7, true
		}, []int64{1100, 0}, []int64{0, 100}, 0},
		{"pairs at 5, a bank pair in a bank loss", []bet{{playerPair, 100}, {bankPair, 100}, {bank, 200}}, func(r *walletv1.SettlePuntoBancoRequest) {
			r.Outcome, r.BankTotal, r.BankPair, r.PairPays = playerWins, 2, true, 5
		}, []int64{0, 500, 0}, []int64{100, 0, 200}, 0},
		{"everything at once, no commission", []bet{{bank, 300}, {player, 200}, {tie, 100}, {natural, 100}, {playerPair, 50}, {bankPair, 50}},
			func(r *walletv1.SettlePuntoBancoRequest) {
				r.NoCommission, r.Outcome, r.BankTotal, r.BankNatural, r.PlayerPair, r.BankPair = true, bankWins, 9, true, true, true
				r.TiePays, r.BankNaturalPays, r.PairPays = 8, 9, 25
			}, []int64{300, 0, 0, 900, 1250, 1250}, []int64{0, 200, 100, 0, 0, 0}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(tc.bets, tc.set)
			p0, b0, c0 := balances()
			before := e.audit().transfers
			r, err := e.c.SettlePuntoBanco(as(tableSvc), req)
			if err != nil {
				t.Fatal(err)
			}
			var won, lost int64
			for i, res := range r.GetResults() {
				if res.GetWon() != tc.won[i] || res.GetLost() != tc.lost[i] {
					t.Errorf("bet %d (%v): won %d lost %d, want %d %d", i, tc.bets[i].typ, res.GetWon(), res.GetLost(), tc.won[i], tc.lost[i])
				}
				won, lost = won+res.GetWon(), lost+res.GetLost()
			}
			if len(r.GetResults()) != len(tc.bets) || r.GetCommission() != tc.commission || r.GetHouseNet() != lost-won {
				t.Fatalf("%v", r)
			}
			// Conservation: what the player gains, house:bank and
			// house:commission lose, and the other way round.
			p1, b1, c1 := balances()
			if p1-p0 != won-lost-tc.commission || b1-b0 != lost-won || c1-c0 != tc.commission {
				t.Errorf("player %+d, house:bank %+d, house:commission %+d; want %+d, %+d, %+d",
					p1-p0, b1-b0, c1-c0, won-lost-tc.commission, lost-won, tc.commission)
			}
			e.wantBal("player:p", p1, 0)
			after := e.audit().transfers
			// The retry with the same coup id moves nothing and gets the
			// same answer, also after a restart.
			for range 2 {
				again, err := e.c.SettlePuntoBanco(as(tableSvc), req)
				if err != nil || !proto.Equal(again, r) {
					t.Fatalf("retry: %v %v, want %v", again, err, r)
				}
				if p, b, c := balances(); p != p1 || b != b1 || c != c1 || e.audit().transfers != after {
					t.Fatal("a retry moved money")
				}
				e.restart()
			}
			if after-before != len(r.GetTransfers()) {
				t.Errorf("%d transfers logged, the answer lists %d", after-before, len(r.GetTransfers()))
			}
			// The same coup id with other house rules is another request.
			other := proto.Clone(req).(*walletv1.SettlePuntoBancoRequest)
			other.PairPays = 7
			_, err = e.c.SettlePuntoBanco(as(tableSvc), other)
			wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
		})
	}

	// Bad house rules and results: refused before anything moves, the
	// holds stay open.
	for name, set := range map[string]func(r *walletv1.SettlePuntoBancoRequest){
		"tie_pays negative":          func(r *walletv1.SettlePuntoBancoRequest) { r.TiePays = -1 },
		"tie_pays above 1000":        func(r *walletv1.SettlePuntoBancoRequest) { r.TiePays = 1001 },
		"bank_natural_pays negative": func(r *walletv1.SettlePuntoBancoRequest) { r.BankNaturalPays = -9 },
		"pair_pays above 1000":       func(r *walletv1.SettlePuntoBancoRequest) { r.PairPays = 1001 },
		"bank_total above 9":         func(r *walletv1.SettlePuntoBancoRequest) { r.BankTotal = 10 },
		"bank_total negative":        func(r *walletv1.SettlePuntoBancoRequest) { r.BankTotal = -1 },
		"no commission, bank wins on 0": func(r *walletv1.SettlePuntoBancoRequest) {
			r.NoCommission, r.BankTotal = true, 0
		},
		"unknown bet type": func(r *walletv1.SettlePuntoBancoRequest) { r.Bets[0].Type = bankPair + 1 },
	} {
		t.Run(name, func(t *testing.T) {
			req := request([]bet{{bank, 100}, {playerPair, 100}}, func(r *walletv1.SettlePuntoBancoRequest) {
				r.Outcome, r.BankTotal, r.PlayerPair = bankWins, 5, true
			})
			set(req)
			before := e.audit().transfers
			_, err := e.c.SettlePuntoBanco(as(tableSvc), req)
			wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
			if e.audit().transfers != before {
				t.Fatal("a refused settlement moved money")
			}
			e.wantBal("player:p", e.account("player:p").GetBalance(), 200)
			for _, b := range req.GetBets() {
				if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: e.id("void"), HoldId: b.GetHoldId()}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	// A pair payout beyond int64 is INVALID_AMOUNT.
	e.deposit("player:q", 1<<62)
	h := e.hold("player:q", 1<<62)
	_, err := e.c.SettlePuntoBanco(as(tableSvc), &walletv1.SettlePuntoBancoRequest{CoupId: "pair-overflow", Outcome: bankWins, BankPair: true,
		Bets: []*walletv1.PuntoBancoBet{{HoldId: h.GetHoldId(), Amount: 1 << 62, Type: bankPair}}})
	wantErr(t, err, codes.InvalidArgument, "INVALID_AMOUNT")
	e.audit()
	e.auditRPC()
}

func TestBanque(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:b", 10000)
	for _, p := range []string{"r", "l", "c"} {
		e.deposit("player:"+p, 1000)
	}
	wins, loses, off := bankWins, walletv1.CoupOutcome_COUP_OUTCOME_BANK_LOSES, walletv1.CoupOutcome_COUP_OUTCOME_STAND_OFF
	bank := e.hold("player:b", 2000)
	newBank := int64(2000)
	for _, tc := range []struct {
		right, left   walletv1.CoupOutcome
		r, l, c       int64 // punters' gains
		commissionBP  int64
		wantCommision int64
	}{
		{wins, wins, -100, -100, -100, 0, 0},
		{loses, loses, 100, 100, 100, 0, 0},
		{wins, loses, -100, 100, 0, 0, 0}, // à cheval returned
		{off, wins, 0, -100, 0, 500, 5},   // à cheval returned; 100 won, 5% commission
	} {
		before := map[string]int64{}
		for _, p := range []string{"r", "l", "c"} {
			before[p] = e.account("player:" + p).GetBalance()
		}
		hr, hl, hc := e.hold("player:r", 100), e.hold("player:l", 100), e.hold("player:c", 100)
		res, err := e.c.SettleBanque(as(tableSvc), &walletv1.SettleBanqueRequest{CoupId: e.id("bq"), BankHoldId: bank.GetHoldId(),
			Right: tc.right, Left: tc.left, CommissionBp: tc.commissionBP, Bets: []*walletv1.BanqueBet{
				{HoldId: hr.GetHoldId(), Amount: 100, Side: walletv1.BanqueSide_BANQUE_SIDE_RIGHT},
				{HoldId: hl.GetHoldId(), Amount: 100, Side: walletv1.BanqueSide_BANQUE_SIDE_LEFT},
				{HoldId: hc.GetHoldId(), Amount: 100, Side: walletv1.BanqueSide_BANQUE_SIDE_CHEVAL}}})
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]int64{"r": tc.r, "l": tc.l, "c": tc.c} {
			if got := e.account("player:"+p).GetBalance() - before[p]; got != want {
				t.Errorf("%v/%v: %s gained %d, want %d", tc.right, tc.left, p, got, want)
			}
		}
		uncovered := newBank - 300 // BQ-BANK: not at risk
		newBank += -(tc.r + tc.l + tc.c) - tc.wantCommision
		if res.GetNewBank() != newBank || res.GetCommission() != tc.wantCommision || res.GetUncovered() != uncovered {
			t.Errorf("%v", res)
		}
		e.audit()
	}
	e.auditRPC()
}

func TestFees(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:a", 1000)
	svc := as(tableSvc)
	// Source: RULES.md BQ-BANK: 2.5% of a bid of 1000.
	r, err := e.c.ChargeFee(svc, &walletv1.ChargeFeeRequest{RequestId: "auction", AccountId: "player:a", FeeType: walletv1.FeeType_FEE_TYPE_BANK_AUCTION, Bid: 1000})
	if err != nil || r.GetFee() != 25 || r.GetTransfer().GetCreditAccountId() != AccountCommission {
		t.Fatalf("%v %v", err, r)
	}
	// 2.5% of 999 = 24.975: down 24, half-up 25.
	r, err = e.c.ChargeFee(svc, &walletv1.ChargeFeeRequest{RequestId: "auction2", AccountId: "player:a", FeeType: walletv1.FeeType_FEE_TYPE_BANK_AUCTION, Bid: 999,
		Rounding: walletv1.CommissionRounding_COMMISSION_ROUNDING_HALF_UP})
	if err != nil || r.GetFee() != 25 {
		t.Fatalf("%v %v", err, r)
	}
	// 120 per seat-hour for 90 minutes.
	r, err = e.c.ChargeFee(svc, &walletv1.ChargeFeeRequest{RequestId: "hourly", AccountId: "player:a", FeeType: walletv1.FeeType_FEE_TYPE_HOURLY, HourlyFee: 120, SeatSeconds: 5400})
	if err != nil || r.GetFee() != 180 {
		t.Fatalf("%v %v", err, r)
	}
	e.wantBal("player:a", 1000-25-25-180, 0)
	e.wantBal(AccountCommission, 230, 0)
	_, err = e.c.ChargeFee(svc, &walletv1.ChargeFeeRequest{RequestId: "too-much", AccountId: "player:a", FeeType: walletv1.FeeType_FEE_TYPE_BANK_AUCTION, Bid: 1 << 40})
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	e.audit()
}

func TestCurrencies(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:a@USD", 1000)
	e.deposit("player:b", 1000)
	e.wantBal("external:funding@USD", -1000, 0)
	e.wantBal(AccountExternal, -1000, 0)
	if c := e.account("player:a@USD").GetCurrencyCode(); c != "USD" {
		t.Fatalf("currency %q", c)
	}
	bank := e.hold("player:b", 500)
	bet := e.hold("player:a@USD", 100)
	_, err := e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: "mixed", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankWins})
	wantErr(t, err, codes.FailedPrecondition, "CURRENCY_MISMATCH")
	_, err = e.c.Deposit(as(operator), &walletv1.DepositRequest{RequestId: "x", AccountId: "player:a@EUR", Amount: 1})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ACCOUNT")
	a := e.auditRPC()
	if len(a.GetCurrencies()) != 2 || a.GetCurrencies()[1].GetCurrencyCode() != "USD" || a.GetCurrencies()[1].GetInWallet() != 1000 {
		t.Fatalf("%v", a.GetCurrencies())
	}
}

// TestResizeHold: a hold grows out of the available balance or shrinks
// releasing the difference (CF-BANK-RAISE); retries are harmless.
func TestResizeHold(t *testing.T) {
	e := newEnv(t)
	svc := as(tableSvc)
	e.deposit("player:alice", 1000)
	h := e.hold("player:alice", 400)
	grow := &walletv1.ResizeHoldRequest{RequestId: "resize-1", HoldId: h.GetHoldId(), Amount: 900}
	for i := 0; i < 2; i++ {
		r, err := e.c.ResizeHold(svc, grow)
		if err != nil || r.GetHold().GetAmount() != 900 {
			t.Fatalf("grow: %v %v", err, r)
		}
	}
	e.wantBal("player:alice", 1000, 900)
	_, err := e.c.ResizeHold(svc, &walletv1.ResizeHoldRequest{RequestId: "resize-2", HoldId: h.GetHoldId(), Amount: 1001})
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	// 1000 - 900 held = 100 available, 1001 - 900 = 101 more needed.
	if msg := err.Error(); !strings.Contains(msg, "has 100 available") || !strings.Contains(msg, "needs 101 more") {
		t.Errorf("the refusal does not say what is available and needed: %v", err)
	}
	e.wantBal("player:alice", 1000, 900)
	if _, err := e.c.ResizeHold(svc, &walletv1.ResizeHoldRequest{RequestId: "resize-3", HoldId: h.GetHoldId(), Amount: 250}); err != nil {
		t.Fatal(err)
	}
	e.wantBal("player:alice", 1000, 250)
	_, err = e.c.ResizeHold(svc, &walletv1.ResizeHoldRequest{RequestId: "resize-4", HoldId: h.GetHoldId(), Amount: 0})
	wantErr(t, err, codes.InvalidArgument, "INVALID_AMOUNT")
	_, err = e.c.ResizeHold(as(operator), &walletv1.ResizeHoldRequest{RequestId: "resize-5", HoldId: h.GetHoldId(), Amount: 300})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	if _, err := e.c.VoidHold(svc, &walletv1.VoidHoldRequest{RequestId: "void-r", HoldId: h.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.ResizeHold(svc, &walletv1.ResizeHoldRequest{RequestId: "resize-6", HoldId: h.GetHoldId(), Amount: 300})
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	e.wantBal("player:alice", 1000, 0)
	e.audit()
	e.auditRPC()
}
