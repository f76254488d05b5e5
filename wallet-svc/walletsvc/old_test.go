package walletsvc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/rules"
)

// oldHands builds an OLD coup from card codes.
func oldHands(t *testing.T, banker string, punters ...string) rules.OldCoup {
	t.Helper()
	parse := func(s string) []rules.Card {
		var out []rules.Card
		for _, code := range strings.Fields(s) {
			c, err := rules.ParseCard(code)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		return out
	}
	c := rules.OldCoup{Banker: parse(banker)}
	for _, p := range punters {
		c.Punters = append(c.Punters, parse(p))
	}
	return c
}

// oldRequest is what a table sends for a coup the rules engine settled:
// the stakes by seat with the engine's nets and split flags.
func oldRequest(t *testing.T, coup string, bank *walletv1.Hold, c rules.OldCoup, stakes ...*walletv1.Hold) *walletv1.SettleOldRequest {
	t.Helper()
	amounts := make([]int64, len(stakes))
	for i, h := range stakes {
		amounts[i] = h.GetAmount()
	}
	st, err := rules.SettleOld(c, bank.GetAmount(), amounts)
	if err != nil {
		t.Fatal(err)
	}
	req := &walletv1.SettleOldRequest{CoupId: coup, BankHoldId: bank.GetHoldId(), BankerNet: st.BankerNet}
	for i, h := range stakes {
		// The two split punters are the ones whose net is not their stake.
		split := st.Split && st.Net[i] != amounts[i] && st.Net[i] != -amounts[i]
		req.Stakes = append(req.Stakes, &walletv1.OldStake{HoldId: h.GetHoldId(), Amount: amounts[i], Net: st.Net[i], Split: split})
	}
	return req
}

// TestSettleOld: a coup of the old game settled as the rules engine says
// (OLD-SETTLE: two punters tie the banker: the three-way split; a third
// beats him), then the next coup of the same bank, where the banker's 19
// takes every stake (OLD-NATURAL). Balances, holds, transfers and the
// bank's new amount are exact; the books stay balanced; a retry returns
// the same answer and moves nothing; another request under a settled coup
// id, by this or another method, is REQUEST_ID_REUSED.
func TestSettleOld(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:banker", 5000)
	for _, p := range []string{"p0", "p1", "p2"} {
		e.deposit("player:"+p, 1000)
	}
	bank := e.hold("player:banker", 1500)
	s0, s1, s2 := e.hold("player:p0", 100), e.hold("player:p1", 300), e.hold("player:p2", 200)
	// Banker 6; punters 6 and 16 (rank 6: ties) and 7. Nobody may draw.
	coup := oldHands(t, "2S 4S", "3H 3D", "KC 6C", "5D 2D")
	req := oldRequest(t, "old-1", bank, coup, s0, s1, s2)
	if !req.Stakes[0].Split || !req.Stakes[1].Split || req.Stakes[2].Split {
		t.Fatalf("the engine's split: %v", req)
	}
	r, err := e.c.SettleOld(as(tableSvc), req)
	if err != nil {
		t.Fatal(err)
	}
	// Source: RULES.md OLD-SETTLE (the pool 3*(100+300) in three: each gets 400)
	if r.GetBankerNet() != -600 || r.GetNewBank() != 900 || len(r.GetResults()) != 3 {
		t.Fatalf("settled: %v", r)
	}
	wantResults := []struct{ lost, won int64 }{{0, 300}, {0, 100}, {0, 200}}
	for i, w := range wantResults {
		if g := r.GetResults()[i]; g.GetHoldId() != req.Stakes[i].HoldId || g.GetLost() != w.lost || g.GetWon() != w.won || g.GetCommission() != 0 {
			t.Fatalf("result %d: %v, want %+v", i, g, w)
		}
	}
	var got []string
	for _, tr := range r.GetTransfers() {
		if tr.GetReference() != "old-1" {
			t.Fatalf("transfer reference %q", tr.GetReference())
		}
		got = append(got, fmt.Sprintf("%s>%s %d %s", tr.GetDebitAccountId(), tr.GetCreditAccountId(), tr.GetAmount(), tr.GetReason()))
	}
	want := []string{"player:banker>player:p0 300 pool_split", "player:banker>player:p1 100 pool_split", "player:banker>player:p2 200 bet_won"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("transfers %v, want %v", got, want)
	}
	e.wantBal("player:banker", 4400, 900)
	e.wantBal("player:p0", 1300, 0)
	e.wantBal("player:p1", 1100, 0)
	e.wantBal("player:p2", 1200, 0)
	st := e.audit()
	for _, h := range []*walletv1.Hold{s0, s1, s2} {
		if st.holds[h.GetHoldId()].GetState() != walletv1.HoldState_HOLD_STATE_SETTLED {
			t.Fatalf("stake hold %s: %v", h.GetHoldId(), st.holds[h.GetHoldId()])
		}
	}
	if b := st.holds[bank.GetHoldId()]; b.GetState() != walletv1.HoldState_HOLD_STATE_OPEN || b.GetAmount() != 900 {
		t.Fatalf("bank hold %v", b)
	}
	if a, err := e.c.AuditLedger(as(auditor), &walletv1.AuditLedgerRequest{}); err != nil || !a.GetBalanced() {
		t.Fatalf("audit: %v, %v", a, err)
	}

	// The retry: the same answer, nothing moves again.
	again, err := e.c.SettleOld(as(tableSvc), req)
	if err != nil || !proto.Equal(again, r) {
		t.Fatalf("retry: %v, %v", again, err)
	}
	if after := e.audit(); !reflect.DeepEqual(after, st) {
		t.Fatal("the retry changed the ledger")
	}
	// Another request under the same coup id: refused, nothing moves.
	other := proto.CloneOf(req)
	other.Stakes[2].Net, other.BankerNet = -200, -200
	_, err = e.c.SettleOld(as(tableSvc), other)
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	_, err = e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: "old-1", BankHoldId: bank.GetHoldId(), Outcome: bankWins})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	if after := e.audit(); !reflect.DeepEqual(after, st) {
		t.Fatal("a refused request changed the ledger")
	}

	// The next coup of the same bank (900): the banker's 19 takes all.
	t0, t1 := e.hold("player:p0", 250), e.hold("player:p2", 200)
	r2, err := e.c.SettleOld(as(tableSvc), oldRequest(t, "old-2", &walletv1.Hold{HoldId: bank.GetHoldId(), Amount: 900},
		oldHands(t, "AS 8S", "9H KD", "4C 4D"), t0, t1))
	if err != nil {
		t.Fatal(err)
	}
	if r2.GetBankerNet() != 450 || r2.GetNewBank() != 1350 {
		t.Fatalf("natural: %v", r2)
	}
	e.wantBal("player:banker", 4850, 1350)
	e.wantBal("player:p0", 1050, 0)
	e.wantBal("player:p2", 1000, 0)
	e.audit()
}

// TestSettleOldRefusals: requests the wallet can tell are wrong without
// the cards, and holds that are not right, are refused with their reason
// and move nothing; then the right request settles.
func TestSettleOldRefusals(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:banker", 5000)
	e.deposit("player:p1", 5000)
	e.deposit("player:p2", 5000)
	bank := e.hold("player:banker", 1000)
	small := e.hold("player:banker", 500)
	own := e.hold("player:banker", 100)
	h1, h2 := e.hold("player:p1", 200), e.hold("player:p2", 100)
	big := e.hold("player:p2", 400)
	voided := e.hold("player:p2", 10)
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "v", HoldId: voided.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	stake := func(h *walletv1.Hold, net int64) *walletv1.OldStake {
		return &walletv1.OldStake{HoldId: h.GetHoldId(), Amount: h.GetAmount(), Net: net}
	}
	// p1 beats the banker (+200), p2 loses (-100): the banker loses 100.
	req := func(mod func(r *walletv1.SettleOldRequest)) *walletv1.SettleOldRequest {
		r := &walletv1.SettleOldRequest{CoupId: "coup", BankHoldId: bank.GetHoldId(),
			Stakes: []*walletv1.OldStake{stake(h1, 200), stake(h2, -100)}, BankerNet: -100}
		mod(r)
		return r
	}
	before := e.audit()
	for name, tc := range map[string]struct {
		req    *walletv1.SettleOldRequest
		code   codes.Code
		reason string
	}{
		"nets do not sum to 0":  {req(func(r *walletv1.SettleOldRequest) { r.BankerNet = 0 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"loses more than stake": {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1].Net, r.BankerNet = -150, -50 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"wins more than stake":  {req(func(r *walletv1.SettleOldRequest) { r.Stakes[0].Net, r.BankerNet = 300, -200 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"push":                  {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1].Net, r.BankerNet = 0, -200 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"one split":             {req(func(r *walletv1.SettleOldRequest) { r.Stakes[0].Split = true }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"split nets not crossed": {req(func(r *walletv1.SettleOldRequest) {
			r.Stakes[0].Split, r.Stakes[1].Split, r.Stakes[1].Net, r.BankerNet = true, true, 100, -300
		}), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"one punter": {req(func(r *walletv1.SettleOldRequest) { r.Stakes, r.BankerNet = r.Stakes[:1], -200 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"seventeen punters": {req(func(r *walletv1.SettleOldRequest) {
			for range 15 {
				r.Stakes = append(r.Stakes, &walletv1.OldStake{HoldId: fmt.Sprint("h", len(r.Stakes)), Amount: 1, Net: -1})
				r.BankerNet++
			}
		}), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"zero stake":            {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1].Amount, r.Stakes[1].Net, r.BankerNet = 0, 0, -200 }), codes.InvalidArgument, "INVALID_AMOUNT"},
		"stake differs":         {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1].Amount, r.Stakes[1].Net, r.BankerNet = 90, -90, -110 }), codes.InvalidArgument, "INVALID_AMOUNT"},
		"bank under double":     {req(func(r *walletv1.SettleOldRequest) { r.BankHoldId = small.GetHoldId() }), codes.InvalidArgument, "BETS_EXCEED_BANK"},
		"stakes exceed half":    {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1], r.BankerNet = stake(big, -400), 200 }), codes.InvalidArgument, "BETS_EXCEED_BANK"},
		"banker's own stake":    {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1] = stake(own, -100) }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"bank hold as stake":    {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1] = stake(bank, -1000); r.BankerNet = 800 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"stake twice":           {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1], r.BankerNet = stake(h1, -200), 0 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"unknown stake hold":    {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1].HoldId = "nope" }), codes.NotFound, "HOLD_NOT_FOUND"},
		"unknown bank hold":     {req(func(r *walletv1.SettleOldRequest) { r.BankHoldId = "nope" }), codes.NotFound, "HOLD_NOT_FOUND"},
		"voided stake":          {req(func(r *walletv1.SettleOldRequest) { r.Stakes[1], r.BankerNet = stake(voided, -10), -190 }), codes.FailedPrecondition, "HOLD_NOT_OPEN"},
		"no coup id":            {req(func(r *walletv1.SettleOldRequest) { r.CoupId = "" }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"no bank hold":          {req(func(r *walletv1.SettleOldRequest) { r.BankHoldId = "" }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"bank hold with spaces": {req(func(r *walletv1.SettleOldRequest) { r.BankHoldId = "a b" }), codes.InvalidArgument, "INVALID_ARGUMENT"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.req.CoupId != "" {
				tc.req.CoupId = "bad-" + strings.ReplaceAll(name, " ", "-")
			}
			_, err := e.c.SettleOld(as(tableSvc), tc.req)
			wantErr(t, err, tc.code, tc.reason)
			_, err = e.c.SettleOld(as(tableSvc), tc.req)
			wantErr(t, err, tc.code, tc.reason)
		})
	}
	// Only the table service settles.
	for _, who := range []auth.Caller{operator, auditor, {Subject: "p1", Role: auth.RolePlayer}} {
		_, err := e.c.SettleOld(as(who), req(func(*walletv1.SettleOldRequest) {}))
		wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	}
	if after := e.audit(); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused settlement changed the ledger")
	}
	r, err := e.c.SettleOld(as(tableSvc), req(func(*walletv1.SettleOldRequest) {}))
	if err != nil || r.GetNewBank() != 900 {
		t.Fatalf("the right request: %v, %v", r, err)
	}
	e.wantBal("player:banker", 4900, 900+500+100)
	e.wantBal("player:p1", 5200, 0)
	e.wantBal("player:p2", 4900, 400)
	e.audit()
}

// TestSettleOldFromOutcomes: the wallet computes the old game's money
// itself from each punter's result against the banker and the natural
// flag, as a table sends them (no nets). The amounts are worked by hand
// from OLD-SETTLE, OLD-NATURAL and OLD-STAKE; deprecated nets sent along
// must agree with what the wallet computes.
func TestSettleOldFromOutcomes(t *testing.T) {
	const (
		tie   = walletv1.CoupOutcome_COUP_OUTCOME_STAND_OFF
		beats = walletv1.CoupOutcome_COUP_OUTCOME_BANK_LOSES // the punter beat the banker
		lost  = walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS
	)
	e := newEnv(t)
	e.deposit("player:banker", 5000)
	for _, p := range []string{"p0", "p1", "p2"} {
		e.deposit("player:"+p, 1000)
	}
	bank := e.hold("player:banker", 1500)
	stake := func(h *walletv1.Hold, o walletv1.CoupOutcome) *walletv1.OldStake {
		return &walletv1.OldStake{HoldId: h.GetHoldId(), Amount: h.GetAmount(), Outcome: o}
	}
	transfers := func(r *walletv1.SettleOldResponse) []string {
		var got []string
		for _, tr := range r.GetTransfers() {
			got = append(got, fmt.Sprintf("%s>%s %d %s", tr.GetDebitAccountId(), tr.GetCreditAccountId(), tr.GetAmount(), tr.GetReason()))
		}
		return got
	}

	// p0 (100) and p1 (300) tie the banker, p2 (200) beats him, no
	// natural: the three-way split. The pool 100 + 300 + 2*100 + 2*300 =
	// 1200 in three: 400 each, so p0 gains 300 and p1 100; p2 gains 200.
	// The banker: -300 -100 -200 = -600; his bank 1500 - 600 = 900.
	s0, s1, s2 := e.hold("player:p0", 100), e.hold("player:p1", 300), e.hold("player:p2", 200)
	r, err := e.c.SettleOld(as(tableSvc), &walletv1.SettleOldRequest{CoupId: "o-1", BankHoldId: bank.GetHoldId(),
		Stakes: []*walletv1.OldStake{stake(s0, tie), stake(s1, tie), stake(s2, beats)}})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetBankerNet() != -600 || r.GetNewBank() != 900 {
		t.Fatalf("split: %v", r)
	}
	if got, want := transfers(r), []string{"player:banker>player:p0 300 pool_split", "player:banker>player:p1 100 pool_split",
		"player:banker>player:p2 200 bet_won"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("transfers %v, want %v", got, want)
	}
	e.wantBal("player:banker", 4400, 900)
	e.wantBal("player:p0", 1300, 0)
	e.wantBal("player:p1", 1100, 0)
	e.wantBal("player:p2", 1200, 0)

	// The same results after a natural (OLD-NATURAL): both ties go to the
	// banker, no split; p2 (50 this time) still wins.
	t0, t1, t2 := e.hold("player:p0", 100), e.hold("player:p1", 300), e.hold("player:p2", 50)
	r, err = e.c.SettleOld(as(tableSvc), &walletv1.SettleOldRequest{CoupId: "o-2", BankHoldId: bank.GetHoldId(), Natural: true,
		Stakes: []*walletv1.OldStake{stake(t0, tie), stake(t1, tie), stake(t2, beats)}})
	if err != nil {
		t.Fatal(err)
	}
	// 2 * (100 + 300 + 50) = 900 <= 900; banker +100 +300 -50 = +350; 1250.
	if r.GetBankerNet() != 350 || r.GetNewBank() != 1250 {
		t.Fatalf("natural: %v", r)
	}
	if got, want := transfers(r), []string{"player:p0>player:banker 100 bet_lost", "player:p1>player:banker 300 bet_lost",
		"player:banker>player:p2 50 bet_won"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("transfers %v, want %v", got, want)
	}
	e.wantBal("player:banker", 4750, 1250)
	e.wantBal("player:p0", 1200, 0)
	e.wantBal("player:p1", 800, 0)
	e.wantBal("player:p2", 1250, 0)

	// Outcomes with the deprecated nets a table may still send: they must
	// be what the wallet computes. p0 (200) loses, p1 (100) wins: the
	// banker +200 -100 = +100.
	u0, u1 := e.hold("player:p0", 200), e.hold("player:p1", 100)
	both := func(id string, mod func(*walletv1.SettleOldRequest)) *walletv1.SettleOldRequest {
		req := &walletv1.SettleOldRequest{CoupId: id, BankHoldId: bank.GetHoldId(), BankerNet: 100, Stakes: []*walletv1.OldStake{
			{HoldId: u0.GetHoldId(), Amount: 200, Outcome: lost, Net: -200}, {HoldId: u1.GetHoldId(), Amount: 100, Outcome: beats, Net: 100}}}
		mod(req)
		return req
	}
	before := e.audit()
	for name, req := range map[string]*walletv1.SettleOldRequest{
		"a net that disagrees":  both("o-bad-1", func(r *walletv1.SettleOldRequest) { r.Stakes[1].Net, r.BankerNet = -100, 300 }),
		"banker_net disagrees":  both("o-bad-2", func(r *walletv1.SettleOldRequest) { r.BankerNet = 0 }),
		"a split that is none":  both("o-bad-3", func(r *walletv1.SettleOldRequest) { r.Stakes[0].Split = true }),
		"outcome on one stake":  both("o-bad-4", func(r *walletv1.SettleOldRequest) { r.Stakes[1].Outcome = 0 }),
		"an unknown outcome":    both("o-bad-5", func(r *walletv1.SettleOldRequest) { r.Stakes[1].Outcome = 7 }),
		"only a deprecated net": both("o-bad-6", func(r *walletv1.SettleOldRequest) { r.Stakes[0].Net, r.BankerNet = 0, 0 }),
	} {
		_, err := e.c.SettleOld(as(tableSvc), req)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	if after := e.audit(); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused settlement changed the ledger")
	}
	r, err = e.c.SettleOld(as(tableSvc), both("o-3", func(*walletv1.SettleOldRequest) {}))
	if err != nil || r.GetBankerNet() != 100 || r.GetNewBank() != 1350 {
		t.Fatalf("outcomes and agreeing nets: %v, %v", r, err)
	}
	e.wantBal("player:banker", 4850, 1350)
	e.wantBal("player:p0", 1000, 0)
	e.wantBal("player:p1", 900, 0)
	e.audit()
}
