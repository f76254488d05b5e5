package walletsvc

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// sent is one request sent, with the result it got first: a retry must get
// exactly the same.
type sent struct {
	call func() (proto.Message, error)
	resp proto.Message
	err  error
}

func sameResult(a, b sent) bool {
	if (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err != nil {
		return status.Code(a.err) == status.Code(b.err) && errs.Reason(a.err) == errs.Reason(b.err)
	}
	return proto.Equal(a.resp, b.resp)
}

// TestPropertyConservation runs concurrent clients that send random
// deposits, withdrawals, holds (some with a ttl), posts, voids,
// settlements of all three games, fees and retries of earlier requests,
// over shared accounts. After every step the auditor's check must find the
// books closed (conservation, held <= balance, the log replays to the
// balances); every retry must return the first result; at the end the
// money in the wallet is exactly what was deposited minus what was
// withdrawn.
func TestPropertyConservation(t *testing.T) {
	e := newEnv(t)
	players := []string{"player:a", "player:b", "player:c", "player:d", "player:e@USD"}
	workers, steps := 4, 120
	if testing.Short() {
		steps = 30
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := propertyWorker(e, uint64(w), players, steps); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	a := e.auditRPC()
	var in int64
	for _, c := range a.GetCurrencies() {
		in += c.GetInWallet()
	}
	if in != e.net.Load() {
		t.Fatalf("in wallet %d, deposits - withdrawals %d", in, e.net.Load())
	}
	e.audit()
}

func propertyWorker(e *env, seed uint64, players []string, steps int) error {
	rng := rand.New(rand.NewPCG(seed, 42))
	svc, op := as(tableSvc), as(operator)
	var history []sent
	var holds []*walletv1.Hold // holds this worker placed, maybe resolved since
	pick := func() string { return players[rng.IntN(len(players))] }
	id := func(kind string) string { return fmt.Sprintf("w%d-%s-%d", seed, kind, rng.Uint64()) }
	for step := range steps {
		var s sent
		switch k := rng.IntN(10); {
		case k == 0 && len(history) > 0: // retry an earlier request
			old := history[rng.IntN(len(history))]
			r, err := old.call()
			if !sameResult(old, sent{resp: r, err: err}) {
				return fmt.Errorf("step %d: retry got %v / %v, first %v / %v", step, r, err, old.resp, old.err)
			}
			continue
		case k <= 2:
			req := &walletv1.DepositRequest{RequestId: id("dep"), AccountId: pick(), Amount: 1 + rng.Int64N(2000)}
			s.call = func() (proto.Message, error) { return e.c.Deposit(op, req) }
			if s.resp, s.err = s.call(); s.err == nil {
				e.net.Add(req.Amount)
			}
		case k == 3:
			req := &walletv1.WithdrawRequest{RequestId: id("wd"), AccountId: pick(), Amount: 1 + rng.Int64N(500)}
			s.call = func() (proto.Message, error) { return e.c.Withdraw(op, req) }
			if s.resp, s.err = s.call(); s.err == nil {
				e.net.Add(-req.Amount)
			}
		case k <= 5:
			req := &walletv1.PlaceHoldRequest{RequestId: id("hold"), AccountId: pick(), Amount: 1 + rng.Int64N(300)}
			s.call = func() (proto.Message, error) { return e.c.PlaceHold(svc, req) }
			if s.resp, s.err = s.call(); s.err == nil {
				holds = append(holds, s.resp.(*walletv1.PlaceHoldResponse).GetHold())
			}
		case k == 6 && len(holds) > 0:
			h := holds[rng.IntN(len(holds))]
			if rng.IntN(2) == 0 {
				req := &walletv1.VoidHoldRequest{RequestId: id("void"), HoldId: h.GetHoldId()}
				s.call = func() (proto.Message, error) { return e.c.VoidHold(svc, req) }
			} else {
				to := []string{AccountHouseBank, "player:a", "player:b"}[rng.IntN(3)]
				req := &walletv1.PostHoldRequest{RequestId: id("post"), HoldId: h.GetHoldId(), Amount: rng.Int64N(h.GetAmount() + 2), ToAccountId: to}
				s.call = func() (proto.Message, error) { return e.c.PostHold(svc, req) }
			}
			s.resp, s.err = s.call()
		case k == 7 && len(holds) > 1: // a chemin de fer coup over two of my holds
			bank, bet := holds[rng.IntN(len(holds))], holds[rng.IntN(len(holds))]
			req := &walletv1.SettleCoupRequest{CoupId: id("coup"), BankHoldId: bank.GetHoldId(),
				Bets:    []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: bet.GetAmount()}},
				Outcome: walletv1.CoupOutcome(1 + rng.IntN(3)), CommissionBp: 500, BankLimit: rng.Int64N(2) * 400}
			s.call = func() (proto.Message, error) { return e.c.SettleCoup(svc, req) }
			s.resp, s.err = s.call()
		case k == 8 && len(holds) > 0:
			h := holds[rng.IntN(len(holds))]
			req := &walletv1.SettlePuntoBancoRequest{CoupId: id("pb"), Outcome: walletv1.PuntoBancoOutcome(1 + rng.IntN(3)),
				BankNatural: rng.IntN(3) == 0, CommissionBp: 500,
				NoCommission: rng.IntN(2) == 0, BankTotal: int32(1 + rng.IntN(9)), PairPays: rng.Int64N(12),
				PlayerPair: rng.IntN(4) == 0, BankPair: rng.IntN(4) == 0,
				Bets: []*walletv1.PuntoBancoBet{{HoldId: h.GetHoldId(), Amount: h.GetAmount(), Type: walletv1.PuntoBancoBetType(1 + rng.IntN(6))}}}
			s.call = func() (proto.Message, error) { return e.c.SettlePuntoBanco(svc, req) }
			s.resp, s.err = s.call()
		case k == 9 && len(holds) > 1:
			bank, bet := holds[rng.IntN(len(holds))], holds[rng.IntN(len(holds))]
			req := &walletv1.SettleBanqueRequest{CoupId: id("bq"), BankHoldId: bank.GetHoldId(),
				Right: walletv1.CoupOutcome(1 + rng.IntN(3)), Left: walletv1.CoupOutcome(1 + rng.IntN(3)),
				Bets: []*walletv1.BanqueBet{{HoldId: bet.GetHoldId(), Amount: bet.GetAmount(), Side: walletv1.BanqueSide(1 + rng.IntN(3))}}}
			s.call = func() (proto.Message, error) { return e.c.SettleBanque(svc, req) }
			s.resp, s.err = s.call()
		default:
			req := &walletv1.ChargeFeeRequest{RequestId: id("fee"), AccountId: pick(), FeeType: walletv1.FeeType_FEE_TYPE_HOURLY,
				HourlyFee: 1 + rng.Int64N(100), SeatSeconds: 1 + rng.Int64N(7200)}
			s.call = func() (proto.Message, error) { return e.c.ChargeFee(svc, req) }
			s.resp, s.err = s.call()
		}
		if s.call == nil {
			continue
		}
		if s.err != nil && errs.Reason(s.err) == "" {
			return fmt.Errorf("step %d: error without a reason: %v", step, s.err)
		}
		history = append(history, s)
		r, err := e.c.AuditLedger(as(auditor), &walletv1.AuditLedgerRequest{})
		if err != nil {
			return err
		}
		if !r.GetBalanced() {
			return fmt.Errorf("step %d: the books do not balance: %v", step, r.GetDiscrepancies())
		}
	}
	return nil
}
