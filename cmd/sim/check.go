package sim

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// Bounds of the invariants that allow for time.
const (
	// stuckBound: steps a table may stay in DEALING or SETTLING while
	// every service runs (the retry pass runs once a step; a fault hits a
	// call with probability at most 0.24).
	stuckBound = 25
	// Held money no live bet or bank explains must be released within
	// holdBoundSteps steps with table-svc and wallet-svc up and holdBound
	// of simulated time (escrow intents wait 30 s for the client's retry).
	holdBoundSteps = 30
	holdBound      = 60 * time.Second
)

// limitOf is the time limit of the turn a table waits for.
func limitOf(v *tablev1.Table) time.Duration {
	if pr := v.GetPuntoBancoRules(); pr != nil {
		// The betting window, or the result's pause.
		if v.GetState() == stResult {
			return time.Duration(pr.GetResultPauseMs()) * time.Millisecond
		}
		return time.Duration(pr.GetBettingWindowMs()) * time.Millisecond
	}
	hr := v.GetHouseRules()
	ms := hr.GetBetTimeLimitMs()
	switch v.GetState() {
	case stOffering, stAuction:
		ms = hr.GetBankOfferTimeLimitMs()
	case stDecision, stRaise:
		ms = hr.GetDecisionTimeLimitMs()
	}
	return time.Duration(ms) * time.Millisecond
}

// checkTimeouts compares each table before and after a retry pass: a turn
// that ended in the pass timed out, which it may do only once its holder
// has had the whole time limit while table-svc was running; a turn whose
// deadline had passed must have ended in the pass.
func (s *sim) checkTimeouts(mid []snap) {
	if !s.cl.isUp(svcTable) {
		return
	}
	for _, m := range mid {
		t := m.t
		if m.view == nil || m.waitKey == "" || t.view == nil {
			continue
		}
		if waitKeyOf(t.view) != m.waitKey {
			if t.core() {
				continue // not judged there (games.go)
			}
			served, limit := s.clock.up()-m.waitStart, limitOf(m.view)
			if served < limit {
				s.violate("turn-time-limit", m.waitKey, "t%d: the turn of %s timed out after %v of service time; its limit is %v (%s)",
					t.n, waiter(m.view), served, limit, brief(m.view))
			}
			continue
		}
		if dl := m.view.GetTurnDeadline().AsTime(); !s.clock.Now().Before(dl) {
			s.violate("turn-deadline", m.waitKey, "t%d: the turn of %s ran out %v ago and the retry pass did not apply it (%s)",
				t.n, waiter(m.view), s.clock.Now().Sub(dl), brief(m.view))
		}
	}
}

// waiter is who a table waits for.
func waiter(v *tablev1.Table) string {
	switch v.GetState() {
	case stOffering:
		if v.GetOfferedPlayerId() == "" {
			return "the seated players (open offer)"
		}
		return v.GetOfferedPlayerId()
	case stAuction:
		return "the auction"
	case stBetting:
		return v.GetCoup().GetTurnPlayerId()
	case stDecision:
		return v.GetCoup().GetDecisionPlayerId()
	case stRaise:
		return v.GetBankerPlayerId()
	}
	return "?"
}

// checkStep checks what must hold after every step.
func (s *sim) checkStep() {
	allUp := s.cl.isUp(svcTable) && s.cl.isUp(svcShoe) && s.cl.isUp(svcWallet)
	for _, t := range s.tables {
		v := t.view
		if v == nil {
			continue
		}
		s.coupNumbers(v)
		s.checkInterrupt(t)
		switch st := v.GetState(); st {
		case stDealing, stSettling:
			if allUp {
				t.stuck++
			}
			if t.stuck > stuckBound {
				s.violate("not-stuck", fmt.Sprintf("t%d/%s", t.n, v.GetCoup().GetCoupId()), "t%d stays in %s (coup %d) for %d steps with every service up",
					t.n, stateName(v.GetState()), v.GetCoup().GetNumber(), t.stuck)
			}
		case stOffering, stBetting, stDecision, stAuction, stRaise:
			t.stuck = 0
			// A punto banco table's betting has no limit until its first
			// bet starts the window; nor, at banque and the old game, an
			// auction before its first bid, the staking before its first
			// stake, a betting round before its first turn.
			exempt := (t.pb != nil && len(v.GetCoup().GetBets()) == 0) || (t.core() && st != stDecision && st != stOffering)
			if v.GetTurnDeadline() == nil && !exempt {
				s.violate("turn-has-deadline", fmt.Sprintf("t%d/%d/%s", t.n, st, v.GetCoup().GetCoupId()),
					"t%d waits in %s with no time limit: %s", t.n, stateName(v.GetState()), brief(v))
			}
		default:
			t.stuck = 0
		}
	}
	if s.cl.isUp(svcWallet) {
		s.checkMoney(false)
	}
}

// checkInterrupt: a coup that has stayed in DEALING before its result
// for InterruptAfter (on table-svc's clock, since it was first seen so or
// table-svc started, whichever is later) is voided by the next retry
// pass; one more pass is allowed, for a first failure seen late. While
// wallet-svc is down nothing is voided (table-svc asks it first whether
// the coup is settled: voidable): the passes are counted again once it
// is back.
func (s *sim) checkInterrupt(t *simTable) {
	if t.dealCoup == "" || !s.cl.isUp(svcTable) {
		return
	}
	if !s.cl.isUp(svcWallet) {
		t.dealLate = 0
		return
	}
	since := t.dealSince
	if s.cl.tableStart.After(since) {
		since = s.cl.tableStart
	}
	waited := s.clock.Now().Sub(since)
	if waited < s.cfg.InterruptAfter {
		t.dealLate = 0
		return
	}
	if t.dealLate++; t.dealLate >= 2 {
		s.violate("interrupt-on-time", t.dealCoup, "t%d: coup %d has been dealing without a result for %v, past InterruptAfter (%v), and is not voided (%s)",
			t.n, t.view.GetCoup().GetNumber(), waited, s.cfg.InterruptAfter, brief(t.view))
	}
}

// coupNumbers remembers the number of each coup seen, for messages.
func (s *sim) coupNumbers(v *tablev1.Table) {
	if s.coupNo == nil {
		s.coupNo = map[string]int64{}
	}
	for _, cp := range []*tablev1.Coup{v.GetCoup(), v.GetLastCoup()} {
		if cp.GetCoupId() != "" {
			s.coupNo[cp.GetCoupId()] = cp.GetNumber()
		}
	}
}

// account is a wallet account's balance and held amount (0, 0 when it
// does not exist yet).
func (s *sim) account(id string) (balance, held int64, err error) {
	ctx, cancel := s.as("auditor")
	defer cancel()
	resp, err := s.cl.wallets.GetAccount(ctx, &walletv1.GetAccountRequest{AccountId: id})
	if status.Code(err) == codes.NotFound {
		return 0, 0, nil
	}
	return resp.GetAccount().GetBalance(), resp.GetAccount().GetHeld(), err
}

// parallel runs f(0..n-1) on a few goroutines and waits for them: for
// the simulation's reads, which change nothing (their results are then
// used in order, so the run stays the same).
func parallel(n int, f func(i int)) {
	const workers = 8
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// playerIDs are all players, sorted.
func (s *sim) playerIDs() []string {
	ids := make([]string, 0, len(s.players))
	for id := range s.players {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// checkMoney checks the wallet: the ledger balances, the money in it is
// what was deposited less what was withdrawn, and every player's held
// money is what his live banks, bets and bids need; more is allowed only
// for a while (escrows being released or rolled back), unless final.
func (s *sim) checkMoney(final bool) {
	ctx, cancel := s.as("auditor")
	audit, err := s.cl.wallets.AuditLedger(ctx, &walletv1.AuditLedgerRequest{})
	cancel()
	if err != nil {
		s.violate("ledger-audit", "", "AuditLedger: %v", err)
		return
	}
	if !audit.GetBalanced() {
		s.violate("ledger-balanced", "", "the ledger does not balance: %v", audit.GetDiscrepancies())
	}
	var inWallet int64
	for _, c := range audit.GetCurrencies() {
		inWallet += c.GetInWallet()
	}
	if want := s.deposited - s.withdrawn; inWallet != want {
		s.violate("money-conserved", fmt.Sprint(inWallet), "the wallet holds %d; deposits less withdrawals are %d", inWallet, want)
	}
	held := map[string]int64{}
	var sum int64
	ids := s.playerIDs()
	type acct struct {
		b, h int64
		err  error
	}
	accts := make([]acct, len(ids))
	parallel(len(ids), func(i int) {
		a := &accts[i]
		a.b, a.h, a.err = s.account("player:" + ids[i])
	})
	for i, p := range ids {
		b, h, err := accts[i].b, accts[i].h, accts[i].err
		if err != nil {
			s.violate("read-account", p, "GetAccount %s: %v", p, err)
			return
		}
		sum += b
		held[p] = h
	}
	var house int64
	for _, id := range []string{"house:commission", "house:bank"} {
		b, _, err := s.account(id)
		if err != nil {
			s.violate("read-account", id, "GetAccount %s: %v", id, err)
			return
		}
		house += b
	}
	if sum+house != inWallet {
		s.violate("money-conserved", fmt.Sprint("accounts", sum+house), "players hold %d and the house (commission and bank) %d: %d, but the wallet holds %d", sum, house, sum+house, inWallet)
	}
	s.checkClosedReleased(held, final)
	if !s.cl.isUp(svcTable) {
		return
	}
	expected, live, skip, ok := s.atStake()
	if !ok {
		return
	}
	owner := map[string]*simTable{}
	for _, t := range s.tables {
		for _, p := range t.players {
			owner[p] = t
		}
	}
	for _, p := range s.playerIDs() {
		if skip[p] {
			continue
		}
		t := owner[p]
		if held[p] < expected[p] {
			s.violate("live-bets-held", fmt.Sprintf("%s/%d/%d", p, held[p], expected[p]), "t%d: %s has %d held, but his bank, bets and bids at the table are %d (%s)",
				t.n, p, held[p], expected[p], brief(t.view))
		}
		ex := held[p] - expected[p]
		tr := t.excess[p]
		switch {
		case ex <= 0:
			delete(t.excess, p)
		case final:
			s.violate("holds-released", p, "t%d: at rest, %s has %d held that no live bank, bet or bid explains (%d held, %d live; %s)",
				t.n, p, ex, held[p], expected[p], brief(t.view))
		case tr == nil || ex > tr.amount:
			// New money held without a reason (e.g. an escrow whose
			// answer was lost): its own time starts now.
			t.excess[p] = &excessTrack{amount: ex, since: s.clock.Now()}
		default:
			tr.amount = ex
			if s.cl.isUp(svcWallet) {
				tr.healthy++
			}
			if tr.healthy >= holdBoundSteps && s.clock.Now().Sub(tr.since) >= holdBound {
				s.violate("holds-released", p, "t%d: %s has had %d held that no live bank, bet or bid explains for %d steps and %v (%d held, %d live; %s)",
					t.n, p, ex, tr.healthy, s.clock.Now().Sub(tr.since), held[p], expected[p], brief(t.view))
			}
		}
	}
	if final && len(skip) == 0 && audit.GetOpenHolds() != live {
		s.violate("holds-released", "count", "at rest the wallet has %d open holds; the tables' live banks, bets and bids are %d", audit.GetOpenHolds(), live)
	}
}

// checkClosedReleased: once a table is closed its players (each plays at
// one table only) have nothing held, whatever its view says, within
// holdBoundSteps steps with wallet-svc and table-svc up and holdBound of
// simulated time (the bank's and the bids' holds released; an escrow
// whose answer was lost rolled back), and at rest.
func (s *sim) checkClosedReleased(held map[string]int64, final bool) {
	for _, t := range s.tables {
		if !t.closed {
			continue
		}
		if s.cl.isUp(svcTable) {
			t.closedHealthy++
		}
		if !final && (t.closedHealthy < holdBoundSteps || s.clock.Now().Sub(t.closedSince) < holdBound) {
			continue
		}
		for _, p := range t.players {
			if held[p] != 0 {
				s.violate("table-closed", p, "t%d closed %d steps and %v ago, but %s still has %d held", t.n, t.closedHealthy, s.clock.Now().Sub(t.closedSince), p, held[p])
			}
		}
	}
}

// atStake is what the tables say is at stake, per player: his live
// banks, bets and highest bids, and their number. skip are the players of
// tables in SETTLING, and of tables dealing since table-svc was killed
// (the wallet may have settled already: the table catches up); ok is
// false when a table is not observed.
func (s *sim) atStake() (expected map[string]int64, live int64, skip map[string]bool, ok bool) {
	expected, skip = map[string]int64{}, map[string]bool{}
	for _, t := range s.tables {
		v := t.view
		if v == nil {
			return nil, 0, nil, false
		}
		if v.GetState() == stSettling || (v.GetState() == stDealing && t.afterKill) {
			for _, p := range t.players {
				skip[p] = true
			}
			continue
		}
		if b := v.GetBankerPlayerId(); b != "" {
			expected[b] += v.GetBank()
			live++
		}
		for _, b := range v.GetCoup().GetBets() {
			expected[b.GetPlayerId()] += b.GetAmount()
			live++
		}
		if b := v.GetHighestBidderPlayerId(); b != "" {
			expected[b] += v.GetHighestBid()
			live++
		}
	}
	return expected, live, skip, true
}

// checkFinal checks the suite at rest: no table stuck, the money, and the
// events of every table against the tables, the rules and the wallet.
func (s *sim) checkFinal() error {
	for _, t := range s.tables {
		if st := t.view.GetState(); st == stDealing || st == stSettling {
			s.violate("not-stuck", fmt.Sprintf("t%d/%s", t.n, t.view.GetCoup().GetCoupId()), "at rest, t%d is still in %s (coup %d)",
				t.n, stateName(t.view.GetState()), t.view.GetCoup().GetNumber())
		}
	}
	s.checkMoney(true)
	return s.checkEvents()
}
