package walletsvc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

const (
	bankWins  = walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS
	bankLoses = walletv1.CoupOutcome_COUP_OUTCOME_BANK_LOSES
	standOff  = walletv1.CoupOutcome_COUP_OUTCOME_STAND_OFF
)

func bets(hs ...*walletv1.Hold) []*walletv1.CoupBet {
	var out []*walletv1.CoupBet
	for _, h := range hs {
		out = append(out, &walletv1.CoupBet{HoldId: h.GetHoldId(), Amount: h.GetAmount()})
	}
	return out
}

func (e *env) settle(req *walletv1.SettleCoupRequest) *walletv1.SettleCoupResponse {
	e.t.Helper()
	r, err := e.c.SettleCoup(as(tableSvc), req)
	if err != nil {
		e.t.Fatalf("SettleCoup(%s): %v", req.GetCoupId(), err)
	}
	return r
}

type transferWant struct {
	debit, credit string
	amount        int64
	reason        string
}

func transfersOf(r *walletv1.SettleCoupResponse) []transferWant {
	var out []transferWant
	for _, tr := range r.GetTransfers() {
		if tr.GetReference() != r.GetCoupId() {
			panic("transfer reference " + tr.GetReference())
		}
		out = append(out, transferWant{tr.GetDebitAccountId(), tr.GetCreditAccountId(), tr.GetAmount(), tr.GetReason()})
	}
	return out
}

// Source: RULES.md CF-BANK-WINS, CF-BANK-LOSES, CF-STANDOFF, CF-UNCOVERED, CF-BANK-SIZE
func TestSettleCoupOutcomes(t *testing.T) {
	const banker, p1, p2, house = "player:banker", "player:p1", "player:p2", AccountCommission
	type bal struct{ balance, held int64 }
	for _, tc := range []struct {
		name      string
		outcome   walletv1.CoupOutcome
		betAmts   []int64
		payouts   []int64
		winnings  int64
		comm      int64
		net       int64
		newBank   int64
		transfers []transferWant
		after     map[string]bal
	}{
		{
			name: "bank wins full cover", outcome: bankWins, betAmts: []int64{600, 400},
			payouts: []int64{0, 0}, winnings: 1000, comm: 50, net: 950, newBank: 1950,
			transfers: []transferWant{{p1, banker, 600, "bet_lost"}, {p2, banker, 400, "bet_lost"}, {banker, house, 50, "commission"}},
			after:     map[string]bal{banker: {5950, 1950}, p1: {400, 0}, p2: {600, 0}, house: {50, 0}},
		},
		{
			name: "bank loses full cover", outcome: bankLoses, betAmts: []int64{600, 400},
			payouts: []int64{600, 400}, net: -1000, newBank: 0,
			transfers: []transferWant{{banker, p1, 600, "bet_won"}, {banker, p2, 400, "bet_won"}},
			after:     map[string]bal{banker: {4000, 0}, p1: {1600, 0}, p2: {1400, 0}, house: {0, 0}},
		},
		{
			name: "stand-off", outcome: standOff, betAmts: []int64{600, 400},
			payouts: []int64{0, 0}, newBank: 1000,
			after: map[string]bal{banker: {5000, 1000}, p1: {1000, 0}, p2: {1000, 0}, house: {0, 0}},
		},
		{
			name: "bank wins partial cover", outcome: bankWins, betAmts: []int64{300},
			payouts: []int64{0}, winnings: 300, comm: 15, net: 285, newBank: 1285,
			transfers: []transferWant{{p1, banker, 300, "bet_lost"}, {banker, house, 15, "commission"}},
			after:     map[string]bal{banker: {5285, 1285}, p1: {700, 0}, p2: {1000, 0}, house: {15, 0}},
		},
		{
			// The uncovered 700 stays in the bank and with the banker.
			name: "bank loses partial cover", outcome: bankLoses, betAmts: []int64{300},
			payouts: []int64{300}, net: -300, newBank: 700,
			transfers: []transferWant{{banker, p1, 300, "bet_won"}},
			after:     map[string]bal{banker: {4700, 700}, p1: {1300, 0}, p2: {1000, 0}, house: {0, 0}},
		},
		{
			name: "stand-off partial cover", outcome: standOff, betAmts: []int64{300},
			payouts: []int64{0}, newBank: 1000,
			after: map[string]bal{banker: {5000, 1000}, p1: {1000, 0}, p2: {1000, 0}, house: {0, 0}},
		},
		{
			name: "no bets", outcome: bankWins, payouts: []int64{}, newBank: 1000,
			after: map[string]bal{banker: {5000, 1000}, p1: {1000, 0}, p2: {1000, 0}, house: {0, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.deposit(banker, 5000)
			e.deposit(p1, 1000)
			e.deposit(p2, 1000)
			bank := e.hold(banker, 1000)
			var hs []*walletv1.Hold
			for i, amt := range tc.betAmts {
				hs = append(hs, e.hold([]string{p1, p2}[i], amt))
			}
			e.audit()
			req := &walletv1.SettleCoupRequest{CoupId: "coup-1", BankHoldId: bank.GetHoldId(), Bets: bets(hs...),
				Outcome: tc.outcome, CommissionBp: 500, CommissionRounding: walletv1.CommissionRounding_COMMISSION_ROUNDING_DOWN}
			r := e.settle(req)
			if r.GetCoupId() != "coup-1" || r.GetOutcome() != tc.outcome || !slices.Equal(r.GetPayouts(), tc.payouts) ||
				r.GetBankerWinnings() != tc.winnings || r.GetCommission() != tc.comm || r.GetBankerNet() != tc.net || r.GetNewBank() != tc.newBank {
				t.Fatalf("response = %v", r)
			}
			if got := transfersOf(r); !reflect.DeepEqual(got, tc.transfers) {
				t.Fatalf("transfers = %v, want %v", got, tc.transfers)
			}
			for id, b := range tc.after {
				e.wantBal(id, b.balance, b.held)
			}
			st := e.audit()
			if h := st.holds[bank.GetHoldId()]; h.GetState() != walletv1.HoldState_HOLD_STATE_OPEN || h.GetAmount() != tc.newBank {
				t.Fatalf("bank hold after = %v", h)
			}
			for _, bh := range hs {
				if h := st.holds[bh.GetHoldId()]; h.GetState() != walletv1.HoldState_HOLD_STATE_SETTLED {
					t.Fatalf("bet hold after = %v", h)
				}
			}

			// A retry returns the same response and moves nothing.
			if r2 := e.settle(req); !proto.Equal(r, r2) {
				t.Fatalf("retry response differs:\n%v\n%v", r, r2)
			}
			if st2 := e.audit(); !reflect.DeepEqual(st, st2) {
				t.Fatal("retry moved money")
			}
			// The same coup id with another request is refused.
			other := proto.Clone(req).(*walletv1.SettleCoupRequest)
			other.Outcome = bankLoses
			if tc.outcome == bankLoses {
				other.Outcome = bankWins
			}
			_, err := e.c.SettleCoup(as(tableSvc), other)
			wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
			if st2 := e.audit(); !reflect.DeepEqual(st, st2) {
				t.Fatal("refused request moved money")
			}

			// The table releases the bank when it is passed or lost.
			v, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "release", HoldId: bank.GetHoldId()})
			if err != nil || v.GetHold().GetAmount() != tc.newBank {
				t.Fatalf("release bank: %v %v", v, err)
			}
			e.wantBal(banker, tc.after[banker].balance, 0)
			e.audit()
		})
	}
}

// Source: RULES.md CF-BANK-WINS (commission_bp, commission_rounding, first_coup_exempt)
func TestCommissionRounding(t *testing.T) {
	const (
		down   = walletv1.CommissionRounding_COMMISSION_ROUNDING_DOWN
		halfUp = walletv1.CommissionRounding_COMMISSION_ROUNDING_HALF_UP
		up     = walletv1.CommissionRounding_COMMISSION_ROUNDING_UP
		unspec = walletv1.CommissionRounding_COMMISSION_ROUNDING_UNSPECIFIED
	)
	e := newEnv(t)
	e.deposit("player:banker", 100000)
	e.deposit("player:p", 100000)
	for i, tc := range []struct {
		bet      int64
		bp       int64
		rounding walletv1.CommissionRounding
		exempt   bool
		want     int64
	}{
		{1010, 500, down, false, 50}, // 50.5
		{1010, 500, halfUp, false, 51},
		{1010, 500, up, false, 51},
		{1010, 500, unspec, false, 50},
		{1001, 500, down, false, 50}, // 50.05
		{1001, 500, halfUp, false, 50},
		{1001, 500, up, false, 51},
		{1030, 500, halfUp, false, 52}, // 51.5
		{1029, 500, halfUp, false, 51}, // 51.45
		{1000, 500, up, false, 50},     // exact
		{1010, 500, up, true, 0},       // exempt
		{1010, 0, up, false, 0},
		{1010, 10000, down, false, 1010},
		{7, 250, halfUp, false, 0}, // 0.175
		{7, 250, up, false, 1},
	} {
		name := fmt.Sprintf("%d_%dbp_%s_exempt=%v", tc.bet, tc.bp, tc.rounding, tc.exempt)
		t.Run(name, func(t *testing.T) {
			banker0, house0 := e.account("player:banker").GetBalance(), e.account(AccountCommission).GetBalance()
			bank := e.hold("player:banker", 2000)
			bet := e.hold("player:p", tc.bet)
			r := e.settle(&walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("round-%d", i), BankHoldId: bank.GetHoldId(),
				Bets: bets(bet), Outcome: bankWins, CommissionBp: tc.bp, CommissionRounding: tc.rounding, CommissionExempt: tc.exempt})
			if r.GetCommission() != tc.want || r.GetBankerNet() != tc.bet-tc.want || r.GetNewBank() != 2000+tc.bet-tc.want {
				t.Fatalf("commission %d net %d new bank %d, want commission %d", r.GetCommission(), r.GetBankerNet(), r.GetNewBank(), tc.want)
			}
			if got := e.account("player:banker").GetBalance(); got != banker0+tc.bet-tc.want {
				t.Errorf("banker %d, want %d", got, banker0+tc.bet-tc.want)
			}
			if got := e.account(AccountCommission).GetBalance(); got != house0+tc.want {
				t.Errorf("house %d, want %d", got, house0+tc.want)
			}
			if hasCommission := slices.ContainsFunc(r.GetTransfers(), func(tr *walletv1.Transfer) bool { return tr.GetReason() == "commission" }); hasCommission != (tc.want > 0) {
				t.Errorf("commission transfer present = %v", hasCommission)
			}
			if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: fmt.Sprintf("rel-%d", i), HoldId: bank.GetHoldId()}); err != nil {
				t.Fatal(err)
			}
			e.audit()
		})
	}
}

// A banker keeps the bank across coups (CF-HOLD, CF-BANK-SIZE) until the
// table voids it.
func TestBankAcrossCoups(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:b", 1000)
	e.deposit("player:x", 5000)
	bank := e.hold("player:b", 1000)
	r := e.settle(&walletv1.SettleCoupRequest{CoupId: "c1", BankHoldId: bank.GetHoldId(),
		Bets: bets(e.hold("player:x", 1000)), Outcome: bankWins, CommissionBp: 500})
	if r.GetNewBank() != 1950 {
		t.Fatal(r)
	}
	e.wantBal("player:b", 1950, 1950)
	r = e.settle(&walletv1.SettleCoupRequest{CoupId: "c2", BankHoldId: bank.GetHoldId(),
		Bets: bets(e.hold("player:x", 1950)), Outcome: bankLoses, CommissionBp: 500})
	if r.GetNewBank() != 0 || r.GetBankerNet() != -1950 {
		t.Fatal(r)
	}
	e.wantBal("player:b", 0, 0)
	e.wantBal("player:x", 5000-1000+1950, 0)
	// A lost bank cannot be played again: the table voids it.
	_, err := e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: "c3", BankHoldId: bank.GetHoldId(), Outcome: standOff})
	wantErr(t, err, codes.FailedPrecondition, "INVALID_AMOUNT")
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "v", HoldId: bank.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	e.audit()
}

func TestSettleCoupRefusals(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:b", 5000)
	e.deposit("player:p1", 5000)
	e.deposit("player:p2", 5000)
	bank := e.hold("player:b", 1000)
	own := e.hold("player:b", 100)
	h600 := e.hold("player:p1", 600)
	h500 := e.hold("player:p2", 500)
	voided := e.hold("player:p2", 10)
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "v", HoldId: voided.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	voidedBank := e.hold("player:b", 1000)
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "vb", HoldId: voidedBank.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	before := e.audit()
	req := func(mod func(r *walletv1.SettleCoupRequest)) *walletv1.SettleCoupRequest {
		r := &walletv1.SettleCoupRequest{CoupId: "coup", BankHoldId: bank.GetHoldId(), Bets: bets(h600), Outcome: bankWins, CommissionBp: 500}
		mod(r)
		return r
	}
	for name, tc := range map[string]struct {
		req    *walletv1.SettleCoupRequest
		code   codes.Code
		reason string
	}{
		"bets exceed bank":         {req(func(r *walletv1.SettleCoupRequest) { r.Bets = bets(h600, h500) }), codes.InvalidArgument, "BETS_EXCEED_BANK"},
		"amount differs from hold": {req(func(r *walletv1.SettleCoupRequest) { r.Bets[0].Amount = 500 }), codes.InvalidArgument, "INVALID_AMOUNT"},
		"zero bet":                 {req(func(r *walletv1.SettleCoupRequest) { r.Bets[0].Amount = 0 }), codes.InvalidArgument, "INVALID_AMOUNT"},
		"banker bets":              {req(func(r *walletv1.SettleCoupRequest) { r.Bets = bets(own) }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"bank hold as bet":         {req(func(r *walletv1.SettleCoupRequest) { r.Bets = bets(bank) }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"bet twice":                {req(func(r *walletv1.SettleCoupRequest) { r.Bets = bets(h600, h600) }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"unknown bet hold":         {req(func(r *walletv1.SettleCoupRequest) { r.Bets[0].HoldId = "nope" }), codes.NotFound, "HOLD_NOT_FOUND"},
		"unknown bank hold":        {req(func(r *walletv1.SettleCoupRequest) { r.BankHoldId = "nope" }), codes.NotFound, "HOLD_NOT_FOUND"},
		"voided bet":               {req(func(r *walletv1.SettleCoupRequest) { r.Bets = bets(h600, voided) }), codes.FailedPrecondition, "HOLD_NOT_OPEN"},
		"voided bank":              {req(func(r *walletv1.SettleCoupRequest) { r.BankHoldId = voidedBank.GetHoldId() }), codes.FailedPrecondition, "HOLD_NOT_OPEN"},
		"no outcome":               {req(func(r *walletv1.SettleCoupRequest) { r.Outcome = 0 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"bad outcome":              {req(func(r *walletv1.SettleCoupRequest) { r.Outcome = 9 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"commission too high":      {req(func(r *walletv1.SettleCoupRequest) { r.CommissionBp = 10001 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"negative commission":      {req(func(r *walletv1.SettleCoupRequest) { r.CommissionBp = -1 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"bad rounding":             {req(func(r *walletv1.SettleCoupRequest) { r.CommissionRounding = 7 }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"no coup id":               {req(func(r *walletv1.SettleCoupRequest) { r.CoupId = "" }), codes.InvalidArgument, "INVALID_ARGUMENT"},
		"no bank hold":             {req(func(r *walletv1.SettleCoupRequest) { r.BankHoldId = "" }), codes.InvalidArgument, "INVALID_ARGUMENT"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.req.CoupId != "" {
				tc.req.CoupId = "bad-" + strings.ReplaceAll(name, " ", "-") // a failure is stored under its coup id
			}
			_, err := e.c.SettleCoup(as(tableSvc), tc.req)
			wantErr(t, err, tc.code, tc.reason)
			// A retry returns the same failure (stored, or from validation).
			_, err = e.c.SettleCoup(as(tableSvc), tc.req)
			wantErr(t, err, tc.code, tc.reason)
		})
	}
	if after := e.audit(); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused settlement changed the ledger")
	}
	// The failures were stored under their own coup ids: this one is new.
	r := e.settle(req(func(*walletv1.SettleCoupRequest) {}))
	if r.GetNewBank() != 1570 {
		t.Fatal(r)
	}
	// A settled bet cannot be settled or voided again.
	_, err := e.c.SettleCoup(as(tableSvc), req(func(r *walletv1.SettleCoupRequest) { r.CoupId = "coup-2" }))
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	_, err = e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "v600", HoldId: h600.GetHoldId()})
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	e.audit()
}

// Several tables play at once over shared punters, each settlement sent
// twice concurrently; the ledger stays conserved throughout.
func TestConcurrentTables(t *testing.T) {
	e := newEnv(t)
	const tables, coups, punters = 6, 15, 4
	for i := range punters {
		e.deposit(fmt.Sprintf("player:p%d", i), 3000)
	}
	for i := range tables {
		e.deposit(fmt.Sprintf("player:banker%d", i), 2000)
	}
	e.audit()
	var wg sync.WaitGroup
	errc := make(chan error, tables)
	for tb := range tables {
		wg.Go(func() {
			if err := playTable(e, tb, coups); err != nil {
				errc <- err
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	audits := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			e.audit()
			audits++
		}
	}
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	st := e.audit()
	for id, h := range st.held {
		if h != 0 {
			t.Errorf("%s still holds %d", id, h)
		}
	}
	t.Logf("%d audits during play, %d transfers", audits, st.transfers)
}

func playTable(e *env, tb, coups int) error {
	rng := rand.New(rand.NewPCG(uint64(tb), 7))
	svc := as(tableSvc)
	banker := fmt.Sprintf("player:banker%d", tb)
	var bank *walletv1.Hold
	for c := range coups {
		if bank == nil {
			r, err := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: fmt.Sprintf("t%d-bank-%d", tb, c), AccountId: banker, Amount: 500})
			if errs.Reason(err) == "INSUFFICIENT_FUNDS" {
				return nil // the banker is broke: the table closes
			}
			if err != nil {
				return err
			}
			bank = r.GetHold()
		}
		left := bank.GetAmount()
		var hs []*walletv1.Hold
		for p := range 2 {
			amt := min(left, 1+rng.Int64N(400))
			if amt == 0 {
				break
			}
			r, err := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: fmt.Sprintf("t%d-c%d-bet%d", tb, c, p),
				AccountId: fmt.Sprintf("player:p%d", rng.IntN(4)), Amount: amt})
			if errs.Reason(err) == "INSUFFICIENT_FUNDS" {
				continue
			}
			if err != nil {
				return err
			}
			hs = append(hs, r.GetHold())
			left -= amt
		}
		req := &walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("t%d-c%d", tb, c), BankHoldId: bank.GetHoldId(), Bets: bets(hs...),
			Outcome: walletv1.CoupOutcome(1 + rng.IntN(3)), CommissionBp: 500}
		// The table retries concurrently (e.g. after a timeout): both get
		// the same answer and the coup is settled once.
		var r [2]*walletv1.SettleCoupResponse
		var errs [2]error
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() { r[i], errs[i] = e.c.SettleCoup(svc, req) })
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			return fmt.Errorf("settle %s: %v %v", req.GetCoupId(), errs[0], errs[1])
		}
		if !proto.Equal(r[0], r[1]) {
			return fmt.Errorf("settle %s: responses differ", req.GetCoupId())
		}
		bank.Amount = r[0].GetNewBank()
		if bank.GetAmount() == 0 || rng.IntN(4) == 0 { // lost or passed
			if _, err := e.c.VoidHold(svc, &walletv1.VoidHoldRequest{RequestId: fmt.Sprintf("t%d-c%d-release", tb, c), HoldId: bank.GetHoldId()}); err != nil {
				return err
			}
			bank = nil
		}
	}
	if bank != nil {
		_, err := e.c.VoidHold(svc, &walletv1.VoidHoldRequest{RequestId: fmt.Sprintf("t%d-final-release", tb), HoldId: bank.GetHoldId()})
		return err
	}
	return nil
}

func BenchmarkSettleCoupGRPC(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		e := newEnv(b)
		e.deposit("player:banker", 1000)
		e.deposit("player:p", int64(b.N)*10+10)
		bank := e.hold("player:banker", 1000)
		hs := make([]*walletv1.Hold, b.N)
		for i := range hs {
			hs[i] = e.hold("player:p", 10)
		}
		svc := as(tableSvc)
		b.ResetTimer()
		for i := range b.N {
			if _, err := e.c.SettleCoup(svc, &walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("c%d", i), BankHoldId: bank.GetHoldId(),
				Bets: bets(hs[i]), Outcome: bankWins, CommissionBp: 500}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Many tables at once: each iteration is a bet hold and a settlement.
	b.Run("parallel-tables", func(b *testing.B) {
		e := newEnv(b)
		var table int64
		var mu sync.Mutex
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			mu.Lock()
			table++
			tb := table
			mu.Unlock()
			svc := as(tableSvc)
			banker, punter := fmt.Sprintf("player:b%d", tb), fmt.Sprintf("player:p%d", tb)
			op := as(operator)
			_, err1 := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: banker, AccountId: banker, Amount: 1000})
			_, err2 := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: punter, AccountId: punter, Amount: 1 << 40})
			br, err3 := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: banker + "-bank", AccountId: banker, Amount: 1000})
			if err := errors.Join(err1, err2, err3); err != nil {
				b.Error(err)
				return
			}
			bank := br.GetHold()
			for i := 0; pb.Next(); i++ {
				hr, err := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: fmt.Sprintf("t%d-h%d", tb, i), AccountId: punter, Amount: 10})
				if err != nil {
					b.Error(err)
					return
				}
				h := hr.GetHold()
				if _, err := e.c.SettleCoup(svc, &walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("t%d-c%d", tb, i), BankHoldId: bank.GetHoldId(),
					Bets: bets(h), Outcome: bankWins, CommissionBp: 500}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
