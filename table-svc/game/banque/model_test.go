package banque

// A randomized model-based test of the banque core. A driver plays the
// shell (it applies commands, places the holds bids and bets wait for,
// carries out the Pending effects, ticks the clock) and the world around
// it (a fake clock, fresh ids, a shuffled 3-deck shoe with a cut card, a
// wallet of balances and holds, players who send legal and illegal
// commands, effect results sent when not due, services that go down).
// After every step it checks the invariants of checkInvariants and
// applyIn. No I/O.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

type ruleSet struct {
	name string
	r    Rules
}

func modelRuleSets() []ruleSet {
	auction := DefaultRules()
	auction.MinimumBank, auction.BetTimeLimitMS, auction.DecisionTimeLimitMS, auction.AuctionTimeLimitMS = 500, 5000, 5000, 8000
	commission := auction
	commission.CommissionBP, commission.Rounding, commission.MaxBet, commission.MaxSeatsPerSide = 500, rules.RoundUp, 400, 3
	house := DefaultRules()
	house.HouseBank, house.HouseLimit, house.BetTimeLimitMS = true, 1500, 2000
	houseOpen := DefaultRules()
	houseOpen.HouseBank, houseOpen.MaxSeatsPerSide, houseOpen.MinBet = true, 2, 1
	return []ruleSet{{"auction", auction}, {"auction+commission+max-bet", commission}, {"house+limit", house}, {"house+no-limit", houseOpen}}
}

type hold struct {
	player string
	amount int64
}

type bogus struct{}

func (bogus) CommandName() string { return "bogus" }

type driver struct {
	tb   testing.TB
	seed uint64
	rs   ruleSet
	rng  *rand.Rand
	step int
	cmd  string
	now  time.Time
	ids  int
	st   State

	shoeDown, walletDown int

	cards    []string
	pos      int
	cutAt    int
	dealt    map[string]game.CardDealt
	shoes    map[int32]string
	players  []string
	balance  map[string]int64
	holds    map[string]hold
	holdSeq  int
	house    int64 // house:bank (may go below 0: the house covers)
	commis   int64 // house:commission: commissions and auction fees
	deposit  int64
	settled  map[string]Settled
	feeTaken map[string]FeeCharged // by request id

	frozen   map[string][]Bet
	withBets map[string]bool
	settledN map[string]int
	voidedN  map[string]int
	counts   map[string]int
	refused  map[string]int
}

func newDriver(tb testing.TB, seed uint64, rs ruleSet) *driver {
	d := &driver{tb: tb, seed: seed, rs: rs, rng: rand.New(rand.NewPCG(seed, 0xba17)),
		now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), dealt: map[string]game.CardDealt{}, shoes: map[int32]string{1: "shoe-0001"},
		balance: map[string]int64{}, holds: map[string]hold{}, settled: map[string]Settled{}, feeTaken: map[string]FeeCharged{},
		frozen: map[string][]Bet{}, withBets: map[string]bool{}, settledN: map[string]int{}, voidedN: map[string]int{},
		counts: map[string]int{}, refused: map[string]int{}}
	for i := range 8 {
		p := fmt.Sprintf("p%d", i)
		d.players = append(d.players, p)
		dep := rs.r.MinBet * (5 + d.rng.Int64N(60))
		if i == 0 {
			dep = rs.r.MinBet / 2
		}
		d.balance[p] = dep
		d.deposit += dep
	}
	d.newShoe()
	st, err := New(rs.r, "shoe-0001")
	if err != nil {
		tb.Fatalf("rules %s: %v", rs.name, err)
	}
	d.st = st
	return d
}

func (d *driver) fail(format string, args ...any) {
	d.tb.Helper()
	d.tb.Fatalf("seed %d (rules %s) step %d, %s: %s\nstate: %s", d.seed, d.rs.name, d.step, d.cmd, fmt.Sprintf(format, args...), d.st)
}

func (d *driver) newID() string {
	d.ids++
	return fmt.Sprintf("id%08d", d.ids)
}

func (d *driver) newShoe() {
	d.cards = d.cards[:0]
	for range d.rs.r.Decks {
		for _, s := range "CDHS" {
			for _, rk := range "A23456789TJQK" {
				d.cards = append(d.cards, string(rk)+string(s))
			}
		}
	}
	d.rng.Shuffle(len(d.cards), func(i, j int) { d.cards[i], d.cards[j] = d.cards[j], d.cards[i] })
	d.pos = int(d.rs.r.Burn)
	d.cutAt = d.pos + 1 + d.rng.IntN(40)
}

// --- Applying -----------------------------------------------------------

func (d *driver) apply(cmd game.Command) (Outcome, error) {
	return d.applyIn(game.Input{Now: d.now, NewID: d.newID(), Cmd: cmd})
}

func (d *driver) applyIn(in game.Input) (Outcome, error) {
	d.tb.Helper()
	before := deepCopy(d.st)
	out, err := Apply(d.st, in)
	// Apply does not change its input.
	if !reflect.DeepEqual(d.st, before) {
		d.fail("Apply(%s) changed its input", in.Cmd.CommandName())
	}
	if err != nil {
		// A refusal is a *game.Error with a reason and changes nothing.
		var ge *game.Error
		if !errors.As(err, &ge) || ge.Reason == "" || ge.Code < game.InvalidArgument || ge.Code > game.PermissionDenied {
			d.fail("Apply(%s): %v is not a proper refusal", in.Cmd.CommandName(), err)
		}
		if out.Events != nil || out.Hold != nil || !reflect.DeepEqual(out.State, State{}) {
			d.fail("Apply(%s) refused (%v) but returned something", in.Cmd.CommandName(), err)
		}
		d.refused[ge.Reason]++
		return out, err
	}
	if out.Hold != nil {
		if !reflect.DeepEqual(out.State, before) || len(out.Events) > 0 {
			d.fail("Apply(%s) asked a hold but changed the state", in.Cmd.CommandName())
		}
		return out, nil
	}
	d.observe(before, in, out)
	d.st = out.State
	d.counts[in.Cmd.CommandName()]++
	d.checkInvariants()
	return out, nil
}

// observe checks what an accepted command did, from its events.
func (d *driver) observe(prev State, in game.Input, out Outcome) {
	cur := out.State
	for _, ev := range out.Events {
		switch p := ev.Payload.(type) {
		case *eventsv1.BetPlaced:
			if prev.Phase != PhaseBetting {
				d.fail("a bet in phase %d", prev.Phase)
			}
		case *eventsv1.BettingClosed:
			if cur.Coup == nil || ev.CoupID != cur.Coup.ID || int(p.GetBetsCount()) != len(cur.Coup.Bets) || len(cur.Coup.Bets) == 0 {
				d.fail("BettingClosed %v for coup %q: %s", p, ev.CoupID, cur)
			}
			if _, dup := d.frozen[ev.CoupID]; dup {
				d.fail("betting closed twice for %s", ev.CoupID)
			}
			d.frozen[ev.CoupID] = stakes(cur.Coup.Bets)
		case *eventsv1.CoupResulted:
			d.checkResult(cur.Coup, p)
		case *eventsv1.CoupSettled:
			d.settledN[ev.CoupID]++
			if _, ok := in.Cmd.(Settled); !ok || cur.LastCoup == nil || cur.LastCoup.ID != ev.CoupID || !cur.LastCoup.Settled {
				d.fail("CoupSettled for %q on %s", ev.CoupID, in.Cmd.CommandName())
			}
		case *eventsv1.CoupVoided:
			d.voidedN[ev.CoupID]++
			if _, ok := in.Cmd.(Void); !ok || cur.LastCoup == nil || !cur.LastCoup.Voided {
				d.fail("CoupVoided on %s", in.Cmd.CommandName())
			}
		}
	}
	for _, cp := range []*Coup{cur.Coup, cur.LastCoup} {
		if cp != nil && len(cp.Bets) > 0 {
			d.withBets[cp.ID] = true
		}
	}
}

func stakes(bets []Bet) []Bet {
	out := make([]Bet, len(bets))
	for i, b := range bets {
		out[i] = Bet{PlayerID: b.PlayerID, Side: b.Side, Amount: b.Amount, HoldID: b.HoldID}
	}
	return out
}

// value and tot are card values and totals, written apart from the rules
// engine (CARD-VALUE, HAND-TOTAL).
func value(code string) int {
	switch code[0] {
	case 'A':
		return 1
	case 'T', 'J', 'Q', 'K':
		return 0
	}
	return int(code[0] - '0')
}

func tot(codes []string) int {
	n := 0
	for _, c := range codes {
		n += value(c)
	}
	return n % 10
}

func cmp(punter, banker int) rules.Outcome {
	switch {
	case punter == banker:
		return rules.OutcomeStandOff
	case banker > punter:
		return rules.OutcomeBankWins
	}
	return rules.OutcomeBankLoses
}

// checkResult: the result follows from the cards (BQ-PLAY, CF-*).
func (d *driver) checkResult(cp *Coup, p *eventsv1.CoupResulted) {
	if cp == nil || !cp.Decided {
		d.fail("CoupResulted without a decided coup")
	}
	b2 := tot(cp.Banker[:2])
	bankerNatural := b2 >= 8
	if bankerNatural && (len(cp.Right) > 2 || len(cp.Left) > 2 || len(cp.Banker) > 2) {
		d.fail("cards drawn after the banker's natural")
	}
	both := 0
	for _, h := range []struct {
		cards []string
		got   rules.Outcome
	}{{cp.Right, cp.RightOutcome}, {cp.Left, cp.LeftOutcome}} {
		two := tot(h.cards[:2])
		var want rules.Outcome
		switch {
		case bankerNatural:
			want = cmp(tot(h.cards), b2)
		case two >= 8:
			both++
			if len(h.cards) != 2 {
				d.fail("a natural drew")
			}
			want = cmp(two, b2)
		default:
			if (two <= 4 && len(h.cards) != 3) || (two >= 6 && len(h.cards) != 2) {
				d.fail("a hand with %d at two cards has %d cards (CF-PLAYER-DRAW)", two, len(h.cards))
			}
			want = cmp(tot(h.cards), tot(cp.Banker))
		}
		if h.got != want {
			d.fail("hand %v against banker %v: outcome %v, want %v", h.cards, cp.Banker, h.got, want)
		}
	}
	if both == 2 && len(cp.Banker) != 2 {
		d.fail("the banker drew against two naturals")
	}
	if len(p.GetHands()) != 2 || int(p.GetBankerTotal()) != tot(cp.Banker) {
		d.fail("CoupResulted %v", p)
	}
}

// --- Invariants -------------------------------------------------------------

// checkInvariants: money is conserved; every open hold is one the table
// knows (no leak) and every hold the table counts on is open; the bank's
// hold holds the bank; the bets never exceed the bank; no bet moves after
// the betting closed.
func (d *driver) checkInvariants() {
	d.tb.Helper()
	s := d.st
	total := d.house + d.commis
	for _, b := range d.balance {
		total += b
	}
	for _, h := range d.holds {
		total += h.amount
	}
	if total != d.deposit {
		d.fail("money: players, holds and house total %d, deposited %d", total, d.deposit)
	}
	known := map[string]bool{}
	for _, id := range s.PendingVoids {
		if known[id] {
			d.fail("hold %s twice in the pending voids", id)
		}
		known[id] = true
	}
	need := func(id, what string) {
		if _, ok := d.holds[id]; !ok && !known[id] {
			d.fail("%s hold %q is not open", what, id)
		}
		known[id] = true
	}
	if s.BankHoldID != "" {
		need(s.BankHoldID, "bank")
		if h, ok := d.holds[s.BankHoldID]; !ok || h.amount != s.Bank || h.player != s.Banker {
			d.fail("bank hold %+v, bank %d of %q", h, s.Bank, s.Banker)
		}
	}
	if au := s.Auction; au != nil && au.HighHoldID != "" {
		need(au.HighHoldID, "bid")
	}
	if s.Coup != nil {
		for _, b := range s.Coup.Bets {
			need(b.HoldID, "bet")
		}
		if !s.Rules.HouseBank && covered(s.Coup) > s.Bank {
			d.fail("bets %d exceed the bank %d", covered(s.Coup), s.Bank)
		}
		if s.Rules.HouseBank && s.Rules.HouseLimit > 0 && covered(s.Coup) > s.Rules.HouseLimit {
			d.fail("bets %d exceed the house limit", covered(s.Coup))
		}
		if f, ok := d.frozen[s.Coup.ID]; ok && !reflect.DeepEqual(stakes(s.Coup.Bets), f) {
			d.fail("the bets moved after the betting closed")
		}
	}
	for id := range d.holds {
		if !known[id] {
			d.fail("hold %s is open but the table does not know it", id)
		}
	}
	if s.Phase == PhaseBetting && s.TurnPlayerID != "" && Deadline(s).IsZero() {
		d.fail("a betting turn without a deadline")
	}
}

// --- Effects ------------------------------------------------------------------

func (d *driver) drain(faults bool) {
	d.tb.Helper()
	for i := 0; ; i++ {
		if i > 60 {
			d.fail("effects never end")
		}
		eff := Pending(d.st)
		if again := Pending(d.st); !reflect.DeepEqual(eff, again) {
			d.fail("Pending is not a function of the state")
		}
		if eff == nil {
			return
		}
		down := &d.walletDown
		switch eff.(type) {
		case game.DealCard, game.NewShoe, game.CloseShoe:
			down = &d.shoeDown
		}
		if faults && d.rng.IntN(40) == 0 {
			*down = 1 + d.rng.IntN(6)
		}
		if *down > 0 || (faults && d.rng.IntN(12) == 0) {
			return
		}
		d.cmd = "effect " + eff.EffectName()
		cmd := d.carryOut(eff)
		if faults && d.rng.IntN(6) == 0 {
			// A crash after the call: the same effect is asked again and
			// the idempotent call answers the same.
			if cmd2 := d.carryOut(Pending(d.st)); !reflect.DeepEqual(cmd, cmd2) {
				d.fail("the repeated effect answered %#v, first %#v", cmd2, cmd)
			}
		}
		if _, err := d.apply(cmd); err != nil {
			d.fail("the result of %s was refused: %v", eff.EffectName(), err)
		}
	}
}

func (d *driver) carryOut(eff game.Effect) game.Command {
	switch e := eff.(type) {
	case game.VoidHolds:
		for _, id := range e.HoldIDs {
			if h, ok := d.holds[id]; ok {
				d.balance[h.player] += h.amount
				delete(d.holds, id)
			}
		}
		return game.HoldsVoided{}
	case game.CloseShoe:
		return game.ShoeClosed{}
	case game.NewShoe:
		n := d.st.ShoeNumber + 1
		if _, ok := d.shoes[n]; !ok {
			d.shoes[n] = fmt.Sprintf("shoe-%04d", n)
			d.newShoe()
		}
		return game.ShoeOpened{ShoeID: d.shoes[n], Number: n}
	case game.DealCard:
		if c, ok := d.dealt[e.RequestID]; ok {
			return c
		}
		if d.st.Phase != PhaseDealing || d.st.Coup == nil || e.CoupID != d.st.Coup.ID {
			d.fail("DealCard %+v outside dealing", e)
		}
		c := game.CardDealt{Code: d.cards[d.pos], CutCardOut: d.pos == d.cutAt}
		d.pos++
		d.dealt[e.RequestID] = c
		return c
	case ChargeFee:
		if c, ok := d.feeTaken[e.RequestID]; ok {
			return c
		}
		// The wallet computes the fee itself (BQ-BANK).
		fee := (e.Bid*rules.BanqueAuctionFeeBP + 9999) / 10000
		if e.Rounding != rules.RoundUp {
			fee = rules.BanqueAuctionFee(e.Bid, e.Rounding)
		}
		if fee != e.Fee {
			d.fail("ChargeFee says fee %d, the wallet takes %d", e.Fee, fee)
		}
		if d.balance[e.PlayerID] < fee {
			return FeeRefused{Reason: "INSUFFICIENT_FUNDS"} // not stored: asked again it is refused again
		}
		d.balance[e.PlayerID] -= fee
		d.commis += fee
		c := FeeCharged{Fee: fee}
		d.feeTaken[e.RequestID] = c
		return c
	case Settle:
		if c, ok := d.settled[e.CoupID]; ok {
			return c
		}
		c := walletSettle(e)
		if e.BankHoldID != "" {
			bh := d.holds[e.BankHoldID]
			if bh.amount != e.Bank {
				d.fail("Settle's bank %d, its hold %d", e.Bank, bh.amount)
			}
			bh.amount = c.NewBank
			d.holds[e.BankHoldID] = bh
			d.commis += c.Commission
		} else {
			d.house += c.BankerWinnings
		}
		for i, b := range e.Bets {
			h := d.holds[b.HoldID]
			if h.amount != b.Amount || h.player != b.PlayerID {
				d.fail("bet %+v, hold %+v", b, h)
			}
			delete(d.holds, b.HoldID)
			d.balance[h.player] += h.amount - c.Bets[i].Lost + c.Bets[i].Won
		}
		d.settled[e.CoupID] = c
		return c
	}
	d.fail("unknown effect %T", eff)
	return nil
}

// --- Commands ------------------------------------------------------------------

func (d *driver) run(n int) {
	for d.step = 0; d.step < n; d.step++ {
		d.now = d.now.Add(time.Duration(d.rng.IntN(4000)) * time.Millisecond)
		if d.shoeDown > 0 {
			d.shoeDown--
		}
		if d.walletDown > 0 {
			d.walletDown--
		}
		d.randomCommand(n)
		d.drain(true)
	}
	d.finish()
}

func (d *driver) player() string {
	if d.rng.IntN(25) == 0 {
		return "nobody"
	}
	return d.players[d.rng.IntN(len(d.players))]
}

func (d *driver) randomCommand(n int) {
	k := d.rng.IntN(1000)
	if k >= 960 && k < 975 && d.step < n*3/4 {
		k = 1000
	}
	switch {
	case k < 90:
		d.join()
	case k < 120:
		d.cmd = "leave"
		d.try(Leave{PlayerID: d.player()})
	case k < 250:
		d.bid()
	case k < 500:
		d.placeBet()
	case k < 560:
		d.cmd = "pass"
		p := d.st.TurnPlayerID
		if d.rng.IntN(4) == 0 {
			p = d.player()
		}
		d.try(Pass{PlayerID: p})
	case k < 680:
		d.decide()
	case k < 800:
		d.cmd = "tick"
		if dl := Deadline(d.st); !dl.IsZero() && d.rng.IntN(2) == 0 {
			d.now = dl
		}
		if _, err := d.apply(game.Tick{}); err != nil {
			d.fail("tick refused: %v", err)
		}
	case k < 830:
		d.cmd = "pass bank"
		p := d.st.Banker
		if d.rng.IntN(3) == 0 {
			p = d.player()
		}
		d.try(PassBank{PlayerID: p})
	case k < 900:
		d.wrongResult()
	case k < 960:
		d.cmd = "void"
		id := "nope"
		if d.st.Coup != nil && d.rng.IntN(4) > 0 {
			id = d.st.Coup.ID
		}
		d.try(Void{CoupID: id, Reason: "misdeal", By: "croupier"})
	case k < 975:
		d.cmd = "close"
		d.try(Close{Reason: "end", By: "op"})
	case k < 985:
		d.cmd = "bogus"
		d.mustRefuse(bogus{}, ReasonInvalidArgument)
	}
}

// try applies a command that may or may not be legal.
func (d *driver) try(cmd game.Command) {
	d.tb.Helper()
	_, _ = d.apply(cmd)
}

func (d *driver) mustRefuse(cmd game.Command, reasons ...string) {
	d.tb.Helper()
	_, err := d.apply(cmd)
	var ge *game.Error
	if !errors.As(err, &ge) {
		d.fail("%#v accepted: want a refusal in %v", cmd, reasons)
	}
	for _, r := range reasons {
		if ge.Reason == r {
			return
		}
	}
	d.fail("%#v refused %s, want one of %v", cmd, ge.Reason, reasons)
}

func (d *driver) join() {
	p := d.player()
	side := Side(1 + d.rng.IntN(2))
	if d.rng.IntN(15) == 0 {
		side = []Side{0, 3, 9}[d.rng.IntN(3)]
	}
	d.cmd = fmt.Sprintf("join %s %v", p, side)
	d.try(Join{PlayerID: p, Side: side})
}

// withHold applies a command that may ask a hold; the shell places it
// when the wallet is up and the money there, and applies it again.
func (d *driver) withHold(cmd game.Command, set func(string) game.Command) {
	d.tb.Helper()
	in := game.Input{Now: d.now, NewID: d.newID(), Cmd: cmd}
	out, err := d.applyIn(in)
	if err != nil || out.Hold == nil {
		return
	}
	h := out.Hold
	if d.walletDown > 0 || d.balance[h.PlayerID] < h.Amount {
		return
	}
	d.holdSeq++
	id := fmt.Sprintf("hold%06d", d.holdSeq)
	d.balance[h.PlayerID] -= h.Amount
	d.holds[id] = hold{player: h.PlayerID, amount: h.Amount}
	in.Cmd = set(id)
	if out, err := d.applyIn(in); err != nil || out.Hold != nil {
		d.fail("with its hold: %v, hold %v", err, out.Hold)
	}
}

func (d *driver) amount() int64 {
	r := d.rs.r
	switch d.rng.IntN(10) {
	case 0:
		return -d.rng.Int64N(3)
	case 1:
		return r.MinBet - 1
	case 2:
		return r.MinBet * (10 + d.rng.Int64N(50))
	}
	return r.MinBet + d.rng.Int64N(r.MinBet*5)
}

func (d *driver) bid() {
	p := d.player()
	if au := d.st.Auction; au != nil && d.rng.IntN(2) == 0 && len(d.st.Seats) > 0 {
		p = d.st.Seats[d.rng.IntN(len(d.st.Seats))].PlayerID
	}
	amt := int64(0)
	if d.rng.IntN(3) > 0 {
		amt = d.rs.r.MinimumBank + d.rng.Int64N(d.rs.r.MinimumBank*3)
		if d.rng.IntN(8) == 0 {
			amt = d.amount()
		}
	}
	d.cmd = fmt.Sprintf("bid %s %d", p, amt)
	if d.rs.r.HouseBank {
		d.mustRefuse(Bid{PlayerID: p, Amount: amt}, ReasonWrongState, ReasonTableClosed)
		return
	}
	d.withHold(Bid{PlayerID: p, Amount: amt}, func(id string) game.Command { return Bid{PlayerID: p, Amount: amt, HoldID: id} })
}

func (d *driver) placeBet() {
	s := d.st
	p := s.TurnPlayerID
	if p == "" || d.rng.IntN(6) == 0 {
		p = d.player()
	}
	side := Side(1 + d.rng.IntN(3))
	if d.rng.IntN(20) == 0 {
		side = 7
	}
	amt := d.amount()
	d.cmd = fmt.Sprintf("bet %s %v %d", p, side, amt)
	if s.Phase == PhaseBetting && p != s.TurnPlayerID && p != s.Banker {
		if _, ok := s.seat(p); ok {
			// Source: RULES.md BQ-BETS (betting order): out of turn is refused
			d.mustRefuse(PlaceBet{PlayerID: p, Side: side, Amount: amt, HoldID: "forged"}, ReasonNotYourTurn)
			return
		}
	}
	d.withHold(PlaceBet{PlayerID: p, Side: side, Amount: amt},
		func(id string) game.Command { return PlaceBet{PlayerID: p, Side: side, Amount: amt, HoldID: id} })
}

func (d *driver) decide() {
	s := d.st
	var h Hand
	var p string
	if s.Phase == PhaseDecision {
		h, p = s.Coup.Await, s.Coup.holderOf(s.Coup.Await, s.Banker)
	}
	if d.rng.IntN(5) == 0 {
		h, p = []Hand{HandRight, HandLeft, HandBanker, "middle"}[d.rng.IntN(4)], d.player()
	}
	d.cmd = fmt.Sprintf("decide %s %s", p, h)
	if s.Phase != PhaseDecision {
		d.mustRefuse(Decide{PlayerID: p, Hand: h, Draw: true}, ReasonWrongState, ReasonInvalidArgument, ReasonTableClosed)
		return
	}
	d.try(Decide{PlayerID: p, Hand: h, Draw: d.rng.IntN(2) == 0})
}

// wrongResult sends an effect's result that is not due: refused, or
// accepted as a no-op.
func (d *driver) wrongResult() {
	s := d.st
	var cmd game.Command
	switch d.rng.IntN(5) {
	case 0:
		if s.Phase == PhaseDealing {
			cmd = game.CardDealt{Code: "XX"}
		} else {
			cmd = game.CardDealt{Code: "9C"}
		}
	case 1:
		n := 0
		if s.Phase == PhaseSettling {
			n = len(s.Coup.Bets) + 1
		}
		cmd = Settled{Bets: make([]Bet, n)}
	case 2:
		if s.Auction != nil && s.Auction.Fee != nil {
			return
		}
		cmd = FeeCharged{Fee: 1}
	case 3:
		if len(s.PendingVoids) > 0 {
			return
		}
		cmd = game.HoldsVoided{}
	case 4:
		if s.NewShoeDue {
			return
		}
		cmd = game.ShoeOpened{ShoeID: "bogus", Number: 99}
	}
	d.cmd = fmt.Sprintf("wrong result %#v", cmd)
	d.mustRefuse(cmd, ReasonWrongState, ReasonInvalidArgument)
}

// finish ends the outages, ends the coup in play (by the clock, or a
// void), closes the table, carries out every effect; then every coup with
// bets was settled or voided exactly once and no hold is left.
func (d *driver) finish() {
	d.tb.Helper()
	d.shoeDown, d.walletDown, d.step = 0, 0, -1
	for range 30 {
		d.drain(false)
		s := d.st
		if s.Phase == PhaseClosed {
			break
		}
		d.cmd = "final"
		switch {
		case s.Coup != nil && len(s.Coup.Bets) > 0 && s.Phase != PhaseSettling && d.rng.IntN(2) == 0:
			if _, err := d.apply(Void{CoupID: s.Coup.ID, Reason: "end"}); err != nil {
				d.fail("%v", err)
			}
		case !Deadline(s).IsZero() && !(s.Phase == PhaseBetting && (s.Coup == nil || len(s.Coup.Bets) == 0)):
			d.now = Deadline(s)
			if _, err := d.apply(game.Tick{}); err != nil {
				d.fail("%v", err)
			}
		default:
			if _, err := d.apply(Close{Reason: "end"}); err != nil {
				d.fail("the table does not close: %v", err)
			}
		}
	}
	d.drain(false)
	if d.st.Phase != PhaseClosed || Pending(d.st) != nil {
		d.fail("the table did not close and rest")
	}
	if len(d.holds) > 0 {
		d.fail("holds left open: %v", d.holds)
	}
	for id := range d.withBets {
		if d.settledN[id]+d.voidedN[id] != 1 {
			d.fail("coup %s with bets: settled %d, voided %d", id, d.settledN[id], d.voidedN[id])
		}
	}
}

func TestModel(t *testing.T) {
	seeds, steps := 128, 400
	if testing.Short() {
		seeds, steps = 64, 200
	}
	sets := modelRuleSets()
	var mu sync.Mutex
	total, refused := map[string]int{}, map[string]int{}
	coups := 0
	t.Run("seeds", func(t *testing.T) {
		for seed := range seeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				d := newDriver(t, uint64(seed), sets[seed%len(sets)])
				d.run(steps)
				mu.Lock()
				defer mu.Unlock()
				for k, v := range d.counts {
					total[k] += v
				}
				for k, v := range d.refused {
					refused[k] += v
				}
				coups += len(d.withBets)
			})
		}
	})
	if t.Failed() {
		return
	}
	for _, name := range []string{"join", "leave", "bid", "fee_charged", "fee_refused", "place_bet", "pass", "decide", "pass_bank",
		"tick", "card_dealt", "settled", "void", "holds_voided", "shoe_opened", "close", "shoe_closed"} {
		if total[name] == 0 {
			t.Errorf("no %s was ever applied (applied: %v)", name, total)
		}
	}
	for _, reason := range []string{ReasonInvalidArgument, ReasonInvalidAmount, ReasonWrongState, ReasonAlreadySeated, ReasonTableFull,
		ReasonNotSeated, ReasonNotYourTurn, ReasonBetExceedsBank, ReasonBankBelowMinimum, ReasonBankerCannotBet, ReasonNotBanker,
		ReasonBidTooLow, ReasonHouseLimitReached, ReasonBetOutOfLimits, ReasonCoupNotInPlay, ReasonTableClosed} {
		if refused[reason] == 0 {
			t.Errorf("no refusal %s was ever seen (seen: %v)", reason, refused)
		}
	}
	t.Logf("%d seeds x %d steps: %d coups with bets; applied %v; refused %v", seeds, steps, coups, total, refused)
}

// --- Deep copy -------------------------------------------------------------

// deepCopy is a deep copy of s by reflection, written apart from the
// core's clone: every pointer, slice and map of exported fields is new.
func deepCopy(s State) State {
	return copyValue(reflect.ValueOf(s)).Interface().(State)
}

func copyValue(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(copyValue(v.Elem()))
			out.Set(p)
		}
	case reflect.Slice:
		if !v.IsNil() {
			sl := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := range v.Len() {
				sl.Index(i).Set(copyValue(v.Index(i)))
			}
			out.Set(sl)
		}
	case reflect.Map:
		if !v.IsNil() {
			m := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				m.SetMapIndex(it.Key(), copyValue(it.Value()))
			}
			out.Set(m)
		}
	case reflect.Struct:
		out.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out.Field(i).Set(copyValue(v.Field(i)))
			}
		}
	default:
		out.Set(v)
	}
	return out
}

// TestCloneNoAlias: the core's clone shares no memory with its input.
func TestCloneNoAlias(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "b")
	tb.join(SideLeft, "l1")
	tb.held(Bid{PlayerID: "r1", Amount: 1000}, "r1", 1000)
	tb.do(Bid{PlayerID: "l1"})
	tb.do(Bid{PlayerID: "b"})
	before := deepCopy(tb.st)
	c := tb.st.clone()
	c.Seats[0].PlayerID = "changed"
	c.Auction.Declined[0] = "changed"
	c.Auction.Fee.Bid = 1
	if !reflect.DeepEqual(tb.st, before) {
		t.Fatal("clone shares memory with its input")
	}
}
