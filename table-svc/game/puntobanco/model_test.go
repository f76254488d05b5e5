package puntobanco

// A randomized model-based test of the punto banco core. A driver plays
// the shell (it applies commands, places the hold a bet waits for, carries
// out the Pending effects until none, ticks the clock) and the outside
// world (a fake clock, fresh ids, a shuffled shoe with a cut card, a
// wallet of balances and holds, players who send legal and illegal
// commands, and effect results sent at the wrong time). After every step
// it checks the invariants listed on checkInvariants. No I/O.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// ruleSet is one table configuration the model runs on.
type ruleSet struct {
	name string
	r    Rules
}

func baseRules() Rules {
	return Rules{Decks: 8, CutCardFromEnd: 14, Burn: 3, MaxSeats: 7, MinBet: 100, CommissionBP: 500,
		Rounding: rules.RoundDown, TiePays: 8, BankNaturalPays: 9, PairPays: 11, BettingWindowMS: 15000, ResultPauseMS: 3000}
}

func modelRuleSets() []ruleSet {
	commission := baseRules()
	pairsNoCommission := baseRules()
	pairsNoCommission.PairBets, pairsNoCommission.NoCommission = true, true
	pairsNoCommission.MaxBet, pairsNoCommission.HouseLimit = 5000, 12000
	naturalOff := baseRules()
	naturalOff.Decks, naturalOff.Burn, naturalOff.CutCardFromEnd, naturalOff.MaxSeats = 6, 4, 6, 3
	naturalOff.BankNaturalOff, naturalOff.PairBets, naturalOff.Rounding, naturalOff.CommissionBP = true, true, rules.RoundHalfUp, 475
	naturalOff.ResultPauseMS, naturalOff.BettingWindowMS, naturalOff.MinBet = 0, 1000, 1
	tight := baseRules()
	tight.MinBet, tight.MaxBet, tight.HouseLimit, tight.Rounding, tight.MaxSeats = 25, 50, 75, rules.RoundUp, 15
	tight.CommissionBP, tight.TiePays, tight.PairPays, tight.BankNaturalPays, tight.CutCardFromEnd = 10000, 1, 1000, 1, 16
	return []ruleSet{{"commission", commission}, {"pairs+no-commission+limits", pairsNoCommission},
		{"natural-off+half-up+no-pause", naturalOff}, {"tight-limits", tight}}
}

// hold is a wallet hold: money taken from a balance for a bet.
type hold struct {
	player string
	amount int64
}

// bogus is a command the core does not know.
type bogus struct{}

func (bogus) CommandName() string { return "bogus" }

// driver is the shell and the world around one core.
type driver struct {
	// then are the cards an opening card promised (dealCard).
	then []game.DealCard
	tb   testing.TB
	seed uint64
	rs   ruleSet
	rng  *rand.Rand
	step int
	cmd  string // the command or effect in hand, for failure messages
	now  time.Time
	ids  int
	st   State
	// Steps the shoe service and the wallet stay down: their effects stay
	// due (and no hold is placed while the wallet is down).
	shoeDown, walletDown int

	// The shoe in play: its cards from pos on, the cut card before index
	// cutAt; finished once a coup is settled after the cut card came out.
	cards    []string
	pos      int
	cutAt    int
	cutOut   bool
	finished bool
	dealt    map[string]game.CardDealt // by request id
	applied  map[string]bool           // card request ids whose card the core took
	shoes    map[int32]string          // shoe number -> id (NewShoe is idempotent)

	// The wallet, in minor units.
	players   []string
	balance   map[string]int64
	holds     map[string]hold
	house     int64
	deposited int64
	holdSeq   int
	settled   map[string]Settled // by coup id (the settlement's idempotency key)

	// The model.
	seated   map[string]bool
	frozen   map[string][]Bet // a coup's bets when its betting closed
	withBets map[string]bool  // coups that got a bet
	settledN map[string]int   // CoupSettled events per coup
	voidedN  map[string]int   // CoupVoided events per coup
	results  int              // the results the shoe should have
	counts   map[string]int   // commands applied (accepted) by name, for the coverage check
	ignored  map[string]int   // effect results not due that the core took as no-ops
	refused  map[string]int   // refusals by reason
}

func newDriver(tb testing.TB, seed uint64, rs ruleSet) *driver {
	d := &driver{tb: tb, seed: seed, rs: rs, rng: rand.New(rand.NewPCG(seed, 0x5eed)),
		now:   time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		dealt: map[string]game.CardDealt{}, applied: map[string]bool{}, shoes: map[int32]string{},
		balance: map[string]int64{}, holds: map[string]hold{}, settled: map[string]Settled{},
		seated: map[string]bool{}, frozen: map[string][]Bet{}, withBets: map[string]bool{},
		settledN: map[string]int{}, voidedN: map[string]int{}, counts: map[string]int{}, refused: map[string]int{},
		ignored: map[string]int{}}
	min := rs.r.MinBet
	for i := range 8 {
		p := fmt.Sprintf("p%02d", i)
		d.players = append(d.players, p)
		var dep int64
		switch i {
		case 0: // no money at all
		case 1:
			dep = min / 2 // less than a bet
		default:
			dep = min * (1 + d.rng.Int64N(300))
		}
		d.balance[p] = dep
		d.deposited += dep
	}
	d.players = append(d.players, "stranger") // has no wallet account
	d.shoes[1] = "shoe-0001"
	d.newShoe()
	st, err := New(rs.r, d.shoes[1])
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

// newShoe fills the fake shoe: Decks decks shuffled, Burn cards burnt,
// the cut card early (so that shoes change within a run) or at
// CutCardFromEnd from the end.
func (d *driver) newShoe() {
	r := d.rs.r
	d.cards = d.cards[:0]
	for range r.Decks {
		for _, s := range "CDHS" {
			for _, rk := range "A23456789TJQK" {
				d.cards = append(d.cards, string(rk)+string(s))
			}
		}
	}
	d.rng.Shuffle(len(d.cards), func(i, j int) { d.cards[i], d.cards[j] = d.cards[j], d.cards[i] })
	d.pos = int(r.Burn) // Source: RULES.md SHOE-BURN
	d.cutAt = len(d.cards) - int(r.CutCardFromEnd)
	if d.rng.IntN(5) > 0 {
		d.cutAt = d.pos + 1 + d.rng.IntN(60)
	}
	d.cutOut, d.finished = false, false
}

// --- Applying commands -------------------------------------------------

// apply applies cmd with a fresh id at the current time, checking what
// every Apply must do; an accepted command's state becomes the driver's.
func (d *driver) apply(cmd game.Command) (Outcome, error) {
	return d.applyIn(game.Input{Now: d.now, NewID: d.newID(), Cmd: cmd})
}

func (d *driver) applyIn(in game.Input) (Outcome, error) {
	d.tb.Helper()
	before := deepCopy(d.st)
	out, err := Apply(d.st, in)
	// Invariant 3: Apply does not change its input.
	if !reflect.DeepEqual(d.st, before) {
		d.fail("Apply(%s) changed its input state:\nbefore %+v\nafter  %+v", in.Cmd.CommandName(), before, d.st)
	}
	if err != nil {
		// Invariant 2: a refusal is a *game.Error with a reason and
		// changes nothing: no state, no events, no hold.
		var ge *game.Error
		if !errors.As(err, &ge) {
			d.fail("Apply(%s) error %v is not a *game.Error", in.Cmd.CommandName(), err)
		}
		if ge.Reason == "" || ge.Code < game.InvalidArgument || ge.Code > game.PermissionDenied {
			d.fail("Apply(%s) refusal without a reason or with code %d: %v", in.Cmd.CommandName(), ge.Code, err)
		}
		if out.Events != nil || out.Hold != nil || !reflect.DeepEqual(out.State, State{}) {
			d.fail("Apply(%s) refused (%v) but returned %d events, hold %v, a state", in.Cmd.CommandName(), err, len(out.Events), out.Hold)
		}
		d.refused[ge.Reason]++
		return out, err
	}
	if out.Hold != nil {
		if !reflect.DeepEqual(out.State, before) || len(out.Events) > 0 {
			d.fail("Apply(%s) asked a hold but changed the state or emitted %d events", in.Cmd.CommandName(), len(out.Events))
		}
		return out, nil
	}
	checkNoAlias(d, before, out.State)
	d.observe(before, in, out)
	d.st = out.State
	d.counts[in.Cmd.CommandName()]++
	return out, nil
}

// checkNoAlias checks that the new state shares no slice or coup with the
// old one, so that the shell may keep both.
func checkNoAlias(d *driver, old, cur State) {
	same := func(name string, a, b any) {
		va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
		if va.Len() > 0 && vb.Len() > 0 && va.Pointer() == vb.Pointer() {
			d.fail("the new state shares %s with the old one", name)
		}
	}
	same("Seats", old.Seats, cur.Seats)
	same("Results", old.Results, cur.Results)
	same("PendingVoids", old.PendingVoids, cur.PendingVoids)
	for _, o := range []*Coup{old.Coup, old.LastCoup} {
		for _, c := range []*Coup{cur.Coup, cur.LastCoup} {
			if o != nil && c != nil {
				if o == c {
					d.fail("the new state shares coup %s with the old one", c.ID)
				}
				same("Bets", o.Bets, c.Bets)
				same("Player", o.Player, c.Player)
				same("Banker", o.Banker, c.Banker)
			}
		}
	}
}

// observe records what an accepted command did, from its events and the
// states before and after.
func (d *driver) observe(prev State, in game.Input, out Outcome) {
	cur := out.State
	for _, ev := range out.Events {
		if ev.Payload == nil {
			d.fail("an event without payload")
		}
		switch p := ev.Payload.(type) {
		case *eventsv1.BetPlaced:
			if prev.Phase != PhaseBetting {
				d.fail("a bet was placed in phase %d", prev.Phase)
			}
		case *eventsv1.BettingClosed:
			// Invariant 4 starts here: the bets of the coup are now fixed.
			if cur.Phase != PhaseDealing || cur.Coup == nil || ev.CoupID != cur.Coup.ID {
				d.fail("BettingClosed for coup %q, but phase %d", ev.CoupID, cur.Phase)
			}
			if int(p.GetBetsCount()) != len(cur.Coup.Bets) || len(cur.Coup.Bets) == 0 {
				d.fail("BettingClosed says %d bets, the coup has %d", p.GetBetsCount(), len(cur.Coup.Bets))
			}
			if _, dup := d.frozen[ev.CoupID]; dup {
				d.fail("betting closed twice for coup %s", ev.CoupID)
			}
			d.frozen[ev.CoupID] = stakes(cur.Coup.Bets)
		case *eventsv1.CoupSettled:
			d.settledN[ev.CoupID]++
			d.results++
			if _, ok := in.Cmd.(Settled); !ok || prev.Coup == nil || prev.Coup.ID != ev.CoupID {
				d.fail("CoupSettled for coup %q on %s", ev.CoupID, in.Cmd.CommandName())
			}
			last := cur.Results[len(cur.Results)-1]
			lc := cur.LastCoup
			want := Result{Outcome: lc.Outcome, PlayerTotal: lc.PlayerTotal, BankerTotal: lc.BankerTotal,
				PlayerPair: lc.PlayerPair, BankerPair: lc.BankerPair, Natural: lc.Natural}
			if last != want || !lc.Settled || lc.ID != ev.CoupID {
				d.fail("the settled coup's result is %+v, its coup says %+v", last, want)
			}
			if d.cutOut {
				d.finished = true // SHOE-CUT-CARD: this coup was the shoe's last
			}
		case *eventsv1.CoupVoided:
			d.voidedN[ev.CoupID]++
			if _, ok := in.Cmd.(Void); !ok || cur.LastCoup == nil || !cur.LastCoup.Voided || cur.LastCoup.ID != ev.CoupID {
				d.fail("CoupVoided for coup %q on %s", ev.CoupID, in.Cmd.CommandName())
			}
		case *eventsv1.ShoeChanged:
			// Invariant 9: the results start again with a new shoe.
			if _, ok := in.Cmd.(game.ShoeOpened); !ok {
				d.fail("ShoeChanged on %s", in.Cmd.CommandName())
			}
			d.results = 0
		}
	}
	if cur.Coup != nil && len(cur.Coup.Bets) > 0 {
		d.withBets[cur.Coup.ID] = true
	}
}

// stakes are bets without their settlement (what may not change once the
// betting is closed).
func stakes(bets []Bet) []Bet {
	out := make([]Bet, len(bets))
	for i, b := range bets {
		out[i] = Bet{PlayerID: b.PlayerID, Spot: b.Spot, Amount: b.Amount, HoldID: b.HoldID}
	}
	return out
}

// --- The shell: effects ------------------------------------------------

// drain carries out the Pending effects until none is due, as the shell's
// advance does. An effect whose service is down, or whose call fails
// (now and then, with faults), stays due: the retry loop comes back at
// the next step, and commands and ticks may come first. Sometimes (with
// faults) the shell "crashes" after an effect's call and before its
// result is stored: after the restart, Pending must name the same effect
// (the same request ids) and the repeated call must give the same answer.
func (d *driver) drain(faults bool) {
	d.tb.Helper()
	for i := 0; ; i++ {
		if i > 50 {
			d.fail("effects never end")
		}
		eff := Pending(d.st)
		if again := Pending(d.st); !reflect.DeepEqual(eff, again) {
			d.fail("Pending is not a function of the state: %#v then %#v", eff, again)
		}
		if eff == nil {
			return
		}
		down := &d.walletDown
		switch eff.(type) {
		case game.DealCard, game.NewShoe, game.CloseShoe:
			down = &d.shoeDown
		}
		if faults && d.rng.IntN(30) == 0 {
			*down = 1 + d.rng.IntN(8) // the service goes down now
		}
		if *down > 0 || (faults && d.rng.IntN(10) == 0) {
			return // the call failed
		}
		d.cmd = "effect " + eff.EffectName()
		cmd := d.carryOut(eff)
		if faults && d.rng.IntN(6) == 0 {
			again := Pending(d.st)
			if !reflect.DeepEqual(eff, again) {
				d.fail("after a crash Pending asks %#v, before it asked %#v", again, eff)
			}
			if cmd2 := d.carryOut(again); !reflect.DeepEqual(cmd, cmd2) {
				d.fail("the repeated effect answered %#v, the first call %#v", cmd2, cmd)
			}
		}
		if _, err := d.apply(cmd); err != nil {
			d.fail("the result of effect %s was refused: %v", eff.EffectName(), err)
		}
		if dc, ok := eff.(game.DealCard); ok {
			if d.applied[dc.RequestID] {
				d.fail("card request %s applied twice", dc.RequestID)
			}
			d.applied[dc.RequestID] = true
		}
		d.checkInvariants()
	}
}

// carryOut does one effect in the world, idempotently, and returns the
// command of its result.
func (d *driver) carryOut(eff game.Effect) game.Command {
	switch e := eff.(type) {
	case game.DealCard:
		return d.dealCard(e)
	case Settle:
		return d.settle(e)
	case game.VoidHolds:
		if !reflect.DeepEqual(e.HoldIDs, d.st.PendingVoids) {
			d.fail("VoidHolds %v, pending voids %v", e.HoldIDs, d.st.PendingVoids)
		}
		for _, id := range e.HoldIDs {
			if h, ok := d.holds[id]; ok { // a hold already voided stays so
				d.balance[h.player] += h.amount
				delete(d.holds, id)
			}
		}
		return game.HoldsVoided{}
	case game.NewShoe:
		if !d.st.NewShoeDue {
			d.fail("NewShoe asked when none is due")
		}
		n := d.st.ShoeNumber + 1
		if _, ok := d.shoes[n]; !ok {
			d.shoes[n] = fmt.Sprintf("shoe-%04d", n)
			d.newShoe()
		}
		return game.ShoeOpened{ShoeID: d.shoes[n], Number: n}
	case game.CloseShoe:
		if !d.st.ShoeToClose {
			d.fail("CloseShoe asked when no shoe is to close")
		}
		return game.ShoeClosed{}
	}
	d.fail("unknown effect %T", eff)
	return nil
}

func (d *driver) dealCard(e game.DealCard) game.Command {
	if c, ok := d.dealt[e.RequestID]; ok {
		return c // the shoe answers a repeated request with the same card
	}
	cp := d.st.Coup
	if d.st.Phase != PhaseDealing || cp == nil || e.CoupID != cp.ID {
		d.fail("DealCard %+v outside the dealing of the coup in play", e)
	}
	// The cards an opening card promised (Then: dealt with it in one
	// call by the shell) are the next asked for, as promised.
	if len(d.then) > 0 && d.then[0].CoupID == e.CoupID {
		if want := d.then[0]; e.RequestID != want.RequestID || e.Hand != want.Hand || len(e.Then) > 0 {
			d.fail("asked for %+v, the opening card promised %+v", e, want)
		}
		d.then = d.then[1:]
	}
	if len(e.Then) > 0 {
		d.then = e.Then
	}
	n := len(cp.Player) + len(cp.Banker) + 1
	if want := cp.ID + "/card/" + strconv.Itoa(n); e.RequestID != want {
		d.fail("DealCard request id %q, want %q", e.RequestID, want)
	}
	done, toPlayer := tableau(parseAll(d, cp.Player), parseAll(d, cp.Banker))
	if want := map[bool]string{true: "player", false: "banker"}[toPlayer]; done || e.Hand != want {
		d.fail("DealCard to %q; by PB-TABLEAU done=%v, next hand %s", e.Hand, done, want)
	}
	if d.finished {
		// Source: RULES.md SHOE-CUT-CARD (the coup of the cut card is the
		// shoe's last; the next is dealt from a new shoe)
		d.fail("card %s asked from shoe %s, whose last coup was settled (cut card out): no new shoe was opened", e.RequestID, d.st.ShoeID)
	}
	if d.pos >= len(d.cards) {
		d.fail("the shoe is empty")
	}
	c := game.CardDealt{Code: d.cards[d.pos]}
	d.pos++
	if !d.cutOut && d.pos > d.cutAt {
		c.CutCardOut, d.cutOut = true, true
	}
	d.dealt[e.RequestID] = c
	return c
}

// spotBets maps the layout to the rules engine's bets, independently of
// Spot.Bet.
var spotBets = map[Spot]rules.PuntoBancoBet{1: rules.BetBank, 2: rules.BetPlayer, 3: rules.BetTie,
	4: rules.BetBankNatural, 5: rules.BetPlayerPair, 6: rules.BetBankPair}

// settle settles a coup the way the wallet does: rules.SettlePuntoBanco on
// the result of the coup's cards, money between the holds, the balances
// and the house account.
// Source: RULES.md PB-BANK (the house banks every bet), PB-BETS
// (payouts, commission)
func (d *driver) settle(e Settle) game.Command {
	if s, ok := d.settled[e.Coup.ID]; ok {
		return s // the wallet answers a repeated settlement from its record
	}
	r := d.rs.r
	wantRules := rules.PuntoBancoRules{CommissionBP: r.CommissionBP, CommissionRounding: r.Rounding, NoCommission: r.NoCommission,
		TiePays: r.TiePays, BankNaturalPays: r.BankNaturalPays, PairPays: r.PairPays}
	if e.Rules != wantRules {
		d.fail("Settle with rules %+v, the table's are %+v", e.Rules, wantRules)
	}
	if d.st.Phase != PhaseSettling || !reflect.DeepEqual(&e.Coup, d.st.Coup) {
		d.fail("Settle of %+v, the coup in play is %+v", e.Coup, d.st.Coup)
	}
	rc := rules.Coup{Player: parseAll(d, e.Coup.Player), Banker: parseAll(d, e.Coup.Banker)}
	res, err := rules.ResultPuntoBanco(rc)
	if err != nil {
		d.fail("settle coup %s: %v", e.Coup.ID, err)
	}
	st := make([]rules.PuntoBancoStake, len(e.Coup.Bets))
	for i, b := range e.Coup.Bets {
		st[i] = rules.PuntoBancoStake{Bet: spotBets[b.Spot], Amount: b.Amount}
	}
	sr, err := rules.SettlePuntoBanco(st, res, e.Rules)
	if err != nil {
		d.fail("settle coup %s: %v", e.Coup.ID, err)
	}
	out := Settled{}
	for i, b := range e.Coup.Bets {
		h, ok := d.holds[b.HoldID]
		if !ok || h.amount != b.Amount || h.player != b.PlayerID {
			d.fail("bet %+v has no matching hold (%+v, %v)", b, h, ok)
		}
		delete(d.holds, b.HoldID)
		net := sr[i].Net()
		d.balance[h.player] += h.amount + net
		d.house -= net
		out.Bets = append(out.Bets, Bet{Won: sr[i].Won, Commission: sr[i].Commission, Lost: sr[i].Lost})
		out.Commission += sr[i].Commission
		out.HouseNet += sr[i].Lost - sr[i].Won
	}
	d.settled[e.Coup.ID] = out
	return out
}

// tableau is PB-TABLEAU written out for the test: whether the coup is
// done, else whether the next card goes to the player.
// Source: RULES.md PB-TABLEAU (CF-DEAL, CF-NATURAL-PLAYER/BANKER,
// CF-PLAYER-DRAW and CF-BANKER-DRAW with every option removed: the player
// draws on 5, the banker on 3 against a 9 and on 5 against a 4)
func tableau(p, b []rules.Card) (done, toPlayer bool) {
	switch {
	case len(p)+len(b) < 4:
		return false, len(p) == len(b) // CF-DEAL: P, B, P, B
	case points(p[:2]) >= 8 || points(b[:2]) >= 8:
		return true, false // a natural
	case len(p) == 2 && points(p) <= 5:
		return false, true // the player draws on 0-5
	}
	bt := points(b[:2])
	draws := bt <= 5
	if len(p) == 3 {
		switch v := p[2].Value(); {
		case bt <= 2:
			draws = true
		case bt == 3:
			draws = v != 8
		case bt == 4:
			draws = v >= 2 && v <= 7
		case bt == 5:
			draws = v >= 4 && v <= 7
		case bt == 6:
			draws = v == 6 || v == 7
		default:
			draws = false
		}
	}
	if draws && len(b) == 2 {
		return false, false
	}
	return true, false
}

// points is a hand's total. Source: RULES.md HAND-TOTAL
func points(cards []rules.Card) int {
	t := 0
	for _, c := range cards {
		t += c.Value()
	}
	return t % 10
}

func parseAll(d *driver, codes []string) []rules.Card {
	out := make([]rules.Card, len(codes))
	for i, code := range codes {
		c, err := rules.ParseCard(code)
		if err != nil {
			d.fail("card %q in a coup: %v", code, err)
		}
		out[i] = c
	}
	return out
}

// --- Invariants --------------------------------------------------------

// checkInvariants checks, after every step and every effect:
//  1. money is conserved (balances + holds + house = deposits) and no
//     balance is negative;
//  4. the bets of a coup do not change once its betting closed;
//  5. a coup is settled or voided at most once, never both;
//  6. the result follows from the cards (PB-TABLEAU) and the rules engine;
//  7. the wallet's open holds are those of the coup in play's bets and the
//     pending voids;
//  8. a deadline is set exactly in BETTING with bets, and in RESULT;
//  9. the shoe's results are one per settled coup since the shoe opened;
//
// and that the seats are the model's. (2 and 3 are checked on each Apply.)
func (d *driver) checkInvariants() {
	d.tb.Helper()
	s := d.st
	// 1.
	sum := d.house
	for p, b := range d.balance {
		if b < 0 {
			d.fail("balance of %s is %d", p, b)
		}
		sum += b
	}
	for _, h := range d.holds {
		sum += h.amount
	}
	if sum != d.deposited {
		d.fail("money: balances+holds+house = %d, deposited %d", sum, d.deposited)
	}
	// 4.
	if s.Phase == PhaseDealing || s.Phase == PhaseSettling {
		if s.Coup == nil {
			d.fail("no coup in phase %d", s.Phase)
		}
		fz, ok := d.frozen[s.Coup.ID]
		if !ok {
			d.fail("coup %s in phase %d without BettingClosed", s.Coup.ID, s.Phase)
		}
		if got := stakes(s.Coup.Bets); !reflect.DeepEqual(got, fz) {
			d.fail("the bets of coup %s changed after the betting closed:\nthen %+v\nnow  %+v", s.Coup.ID, fz, got)
		}
	}
	if lc := s.LastCoup; lc != nil {
		if fz, ok := d.frozen[lc.ID]; ok && !reflect.DeepEqual(stakes(lc.Bets), fz) {
			d.fail("the bets of coup %s changed after the betting closed:\nthen %+v\nnow  %+v", lc.ID, fz, stakes(lc.Bets))
		}
		if !lc.Settled && !lc.Voided {
			d.fail("last coup %s neither settled nor voided", lc.ID)
		}
		if lc.Settled && lc.Voided {
			d.fail("coup %s settled and voided", lc.ID)
		}
	}
	// 5.
	for id, n := range d.settledN {
		if n > 1 || d.voidedN[id] > 0 {
			d.fail("coup %s settled %d times, voided %d times", id, n, d.voidedN[id])
		}
	}
	for id, n := range d.voidedN {
		if n > 1 {
			d.fail("coup %s voided %d times", id, n)
		}
	}
	// 6.
	for _, cp := range []*Coup{s.Coup, s.LastCoup} {
		if cp != nil {
			d.checkCards(cp, cp == s.Coup)
		}
	}
	switch {
	case s.Phase == PhaseSettling && !s.Coup.Decided:
		d.fail("settling an undecided coup")
	case s.Phase == PhaseBetting && s.Coup != nil && (len(s.Coup.Player)+len(s.Coup.Banker) > 0 || len(s.Coup.Bets) == 0):
		d.fail("betting on a coup with cards or without bets")
	case s.Phase == PhaseResult || s.Phase == PhaseClosed:
		if s.Coup != nil {
			d.fail("a coup in play in phase %d", s.Phase)
		}
	}
	// 7.
	want := map[string]bool{}
	if s.Coup != nil {
		for _, b := range s.Coup.Bets {
			if want[b.HoldID] {
				d.fail("hold %s backs two bets", b.HoldID)
			}
			want[b.HoldID] = true
		}
	}
	for _, id := range s.PendingVoids {
		if want[id] {
			d.fail("hold %s is both bet and to void", id)
		}
		want[id] = true
	}
	if len(want) != len(d.holds) {
		d.fail("the wallet holds %d holds, the table knows %d", len(d.holds), len(want))
	}
	for id := range d.holds {
		if !want[id] {
			d.fail("hold %s is open at the wallet but unknown to the table", id)
		}
	}
	// 8.
	withBets := s.Phase == PhaseBetting && s.Coup != nil && len(s.Coup.Bets) > 0
	pausing := s.Phase == PhaseResult && !s.PauseOver // RESULT after its pause waits for the new shoe, not the clock
	if dl := Deadline(s); dl.IsZero() == (withBets || pausing) || !dl.Equal(s.Deadline) {
		d.fail("Deadline %v (field %v) in phase %d, bets in play %v", dl, s.Deadline, s.Phase, withBets)
	}
	// 9.
	if len(s.Results) != d.results {
		d.fail("the shoe has %d results, %d coups were settled on it", len(s.Results), d.results)
	}
	// The seats.
	if len(s.Seats) != len(d.seated) || int32(len(s.Seats)) > s.Rules.MaxSeats {
		d.fail("seats %+v, the model seats %v", s.Seats, d.seated)
	}
	nums := map[int32]bool{}
	for _, st := range s.Seats {
		if !d.seated[st.PlayerID] || nums[st.Number] {
			d.fail("seats %+v, the model seats %v", s.Seats, d.seated)
		}
		nums[st.Number] = true
	}
	// The cut card: the core knows it came out until the coup is settled.
	if d.cutOut && !d.finished && !s.CutCardOut {
		d.fail("the cut card came out but the state forgot it")
	}
}

// checkCards checks a coup's cards and result against PB-TABLEAU and the
// rules engine (invariant 6).
func (d *driver) checkCards(cp *Coup, inPlay bool) {
	p, b := parseAll(d, cp.Player), parseAll(d, cp.Banker)
	done, _ := tableau(p, b)
	if !cp.Decided {
		if cp.Settled || (done && inPlay && d.st.Phase == PhaseDealing) {
			d.fail("coup %s undecided with cards P=%v B=%v (done by the tableau: %v)", cp.ID, cp.Player, cp.Banker, done)
		}
		return
	}
	rc := rules.Coup{Player: p, Banker: b}
	step, err := rules.NextStepPuntoBanco(rc)
	if err != nil || step.Kind != rules.StepDone || !done {
		d.fail("coup %s decided with P=%v B=%v: the engine says %v %v, the tableau done=%v", cp.ID, cp.Player, cp.Banker, step.Kind, err, done)
	}
	res, err := rules.ResultPuntoBanco(rc)
	if err != nil {
		d.fail("coup %s: %v", cp.ID, err)
	}
	pt, bt := rules.Total(p), rules.Total(b)
	outcome := rules.OutcomeStandOff
	if bt > pt {
		outcome = rules.OutcomeBankWins
	} else if pt > bt {
		outcome = rules.OutcomeBankLoses
	}
	natural := points(p[:2]) >= 8 || points(b[:2]) >= 8
	if cp.Outcome != outcome || res.Outcome != outcome || cp.PlayerTotal != pt || cp.BankerTotal != bt ||
		cp.Natural != natural || cp.BankNatural != res.BankNatural || cp.BankNatural != (points(b[:2]) >= 8) ||
		cp.PlayerPair != (p[0].Rank == p[1].Rank) || cp.BankerPair != (b[0].Rank == b[1].Rank) ||
		cp.PlayerPair != res.PlayerPair || cp.BankerPair != res.BankPair {
		d.fail("coup %s with P=%v B=%v recorded %+v; from the cards: outcome %v, totals %d/%d, natural %v, %+v",
			cp.ID, cp.Player, cp.Banker, *cp, outcome, pt, bt, natural, res)
	}
	if cp.Settled {
		st := d.settled[cp.ID]
		if len(st.Bets) != len(cp.Bets) || cp.Commission != st.Commission || cp.HouseNet != st.HouseNet {
			d.fail("coup %s recorded a settlement other than the wallet's", cp.ID)
		}
		for i, sb := range st.Bets {
			if b := cp.Bets[i]; b.Won != sb.Won || b.Commission != sb.Commission || b.Lost != sb.Lost {
				d.fail("coup %s bet %d recorded %+v, the wallet settled %+v", cp.ID, i, b, sb)
			}
		}
	}
}

// --- Random steps ------------------------------------------------------

// run plays n random steps, then lets every coup finish.
func (d *driver) run(n int) {
	d.tb.Helper()
	for d.step = 1; d.step <= n; d.step++ {
		for _, down := range []*int{&d.shoeDown, &d.walletDown} {
			if *down > 0 {
				*down--
			} else if d.rng.IntN(100) == 0 {
				*down = 1 + d.rng.IntN(8)
			}
		}
		d.advanceClock()
		if dl := Deadline(d.st); !dl.IsZero() && !d.now.Before(dl) && d.rng.IntN(2) == 0 {
			d.tick() // the shell's timer
			d.checkInvariants()
		}
		d.randomCommand(n)
		d.checkInvariants()
		d.drain(true)
		d.checkInvariants()
	}
	d.finish()
}

func (d *driver) advanceClock() {
	dl := d.st.Deadline
	switch k := d.rng.IntN(10); {
	case k == 0 && !dl.IsZero() && dl.After(d.now):
		d.now = dl // exactly at the deadline
	case k == 1 && !dl.IsZero() && dl.After(d.now.Add(time.Millisecond)):
		d.now = dl.Add(-time.Millisecond) // just before it
	case k < 5:
		d.now = d.now.Add(time.Duration(d.rng.IntN(500)) * time.Millisecond)
	default:
		d.now = d.now.Add(time.Duration(d.rng.Int64N(int64(d.rs.r.BettingWindowMS)*3/2)) * time.Millisecond)
	}
}

func (d *driver) player() string {
	if d.rng.IntN(20) == 0 {
		return fmt.Sprintf("nobody%d", d.rng.IntN(3))
	}
	return d.players[d.rng.IntN(len(d.players))]
}

func (d *driver) randomCommand(n int) {
	d.tb.Helper()
	k := d.rng.IntN(1000)
	if k >= 800 && k < 820 && d.step < n*3/4 {
		k = 1000 // a close ends the run's interest: only in its last quarter
	}
	switch {
	case k < 300:
		d.placeBet()
	case k < 500:
		d.tick()
	case k < 580:
		d.join()
	case k < 640:
		d.leave()
	case k < 760:
		d.wrongResult()
	case k < 800:
		d.void()
	case k < 820:
		d.close()
	case k < 840:
		d.cmd = "bogus"
		d.refuse(bogus{}, ReasonInvalidArgument)
	default:
		d.cmd = "nothing"
	}
}

// refuse applies cmd and checks it is refused with one of reasons.
func (d *driver) refuse(cmd game.Command, reasons ...string) {
	d.tb.Helper()
	_, err := d.apply(cmd)
	var ge *game.Error
	if err == nil || !errors.As(err, &ge) || !contains(reasons, ge.Reason) {
		d.fail("%#v: got %v, want a refusal with a reason in %v", cmd, err, reasons)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *driver) closed() bool { return d.st.Phase == PhaseClosed }

func (d *driver) join() {
	p := d.player()
	d.cmd = "join " + p
	var why []string
	if d.closed() {
		why = append(why, ReasonTableClosed)
	}
	if d.seated[p] {
		why = append(why, ReasonAlreadySeated)
	}
	if len(d.seated) >= int(d.rs.r.MaxSeats) {
		why = append(why, ReasonTableFull)
	}
	if len(why) > 0 {
		d.refuse(Join{PlayerID: p}, why...)
		return
	}
	if _, err := d.apply(Join{PlayerID: p}); err != nil {
		d.fail("%v", err)
	}
	d.seated[p] = true
}

func (d *driver) leave() {
	p := d.player()
	d.cmd = "leave " + p
	var why []string
	if d.closed() {
		why = append(why, ReasonTableClosed)
	}
	if !d.seated[p] {
		why = append(why, ReasonNotSeated)
	}
	if len(why) > 0 {
		d.refuse(Leave{PlayerID: p}, why...)
		return
	}
	var bets []Bet
	if d.st.Coup != nil {
		bets = stakes(d.st.Coup.Bets)
	}
	if _, err := d.apply(Leave{PlayerID: p}); err != nil {
		d.fail("%v", err)
	}
	delete(d.seated, p)
	if d.st.Coup != nil && !reflect.DeepEqual(stakes(d.st.Coup.Bets), bets) {
		d.fail("leaving changed the bets") // PB-BANK: his bets stay in the coup
	}
}

func (d *driver) amount() int64 {
	r := d.rs.r
	switch d.rng.IntN(14) {
	case 0:
		return 0
	case 1:
		return -1 - d.rng.Int64N(1000)
	case 2:
		return r.MinBet - 1
	case 3:
		return r.MinBet
	case 4:
		if r.MaxBet > 0 {
			return r.MaxBet + d.rng.Int64N(2)
		}
		return 1 << 40
	case 5:
		if r.HouseLimit > 0 {
			return r.HouseLimit + d.rng.Int64N(2)
		}
		return r.MinBet * 1000
	case 6:
		return r.MinBet + d.rng.Int64N(r.MinBet*200)
	case 7, 8, 9:
		if r.MaxBet > 0 {
			return r.MinBet + d.rng.Int64N(r.MaxBet-r.MinBet+1)
		}
		fallthrough
	default:
		return r.MinBet + d.rng.Int64N(r.MinBet*20)
	}
}

func (d *driver) placeBet() {
	r := d.rs.r
	p, amt := d.player(), d.amount()
	spot := Spot(1 + d.rng.IntN(6))
	switch d.rng.IntN(12) {
	case 0:
		spot = []Spot{-1, 0, 7, 100}[d.rng.IntN(4)]
	case 1, 2, 3, 4, 5:
		// A plain bet of a player with money, within the limits.
		p, spot, amt = d.players[2+d.rng.IntN(6)], Spot(1+d.rng.IntN(3)), r.MinBet+d.rng.Int64N(r.MinBet*5)
		if r.MaxBet > 0 {
			amt = r.MinBet + d.rng.Int64N(r.MaxBet-r.MinBet+1)
		}
	}
	d.cmd = fmt.Sprintf("place bet %s %s %d", p, spot, amt)
	// The model's reasons to refuse (the core may name any of them).
	var why []string
	if d.closed() {
		why = append(why, ReasonTableClosed)
	}
	if d.st.Phase != PhaseBetting {
		why = append(why, ReasonWrongState)
	}
	switch {
	case spot < SpotBank || spot > SpotBankPair:
		why = append(why, ReasonInvalidArgument)
	case spot == SpotBankNatural && r.BankNaturalOff, (spot == SpotPlayerPair || spot == SpotBankPair) && !r.PairBets:
		why = append(why, ReasonSpotNotOffered)
	}
	if amt <= 0 {
		why = append(why, ReasonInvalidAmount)
	}
	mine, hand := amt, amt
	if d.st.Coup != nil {
		for _, b := range d.st.Coup.Bets {
			if b.Spot == spot {
				hand += b.Amount
				if b.PlayerID == p {
					mine += b.Amount
				}
			}
		}
		if len(d.st.Coup.Bets) >= MaxBets {
			why = append(why, ReasonTableFull)
		}
	}
	// Source: RULES.md PB-BANK (table limits; the house limit per hand)
	if amt < r.MinBet || (r.MaxBet > 0 && mine > r.MaxBet) {
		why = append(why, ReasonBetOutOfLimits)
	}
	if r.HouseLimit > 0 && (spot == SpotBank || spot == SpotPlayer) && hand > r.HouseLimit {
		why = append(why, ReasonHouseLimitReached)
	}
	cmd := PlaceBet{PlayerID: p, Spot: spot, Amount: amt}
	if d.rng.IntN(30) == 0 {
		// A bet that names a hold: the core cannot check it, so only a
		// refusal is tried.
		if len(why) > 0 {
			cmd.HoldID = "forged"
			d.refuse(cmd, why...)
		}
		return
	}
	if len(why) > 0 {
		d.refuse(cmd, why...)
		return
	}
	in := game.Input{Now: d.now, NewID: d.newID(), Cmd: cmd}
	out, err := d.applyIn(in)
	if err != nil {
		d.fail("refused: %v", err)
	}
	h := out.Hold
	if h == nil || h.PlayerID != p || h.Amount != amt {
		d.fail("a bet without a hold asked hold %+v", h)
	}
	// The shell places the hold, if the money is there, and applies the
	// bet again with its id (same input: same time, same new id).
	if d.balance[p] < amt || d.walletDown > 0 {
		return // the wallet refuses (INSUFFICIENT_FUNDS) or is down: nothing happens
	}
	d.holdSeq++
	id := fmt.Sprintf("hold%06d", d.holdSeq)
	d.balance[p] -= amt
	d.holds[id] = hold{player: p, amount: amt}
	cmd.HoldID = id
	in.Cmd = cmd
	n := 0
	if d.st.Coup != nil {
		n = len(d.st.Coup.Bets)
	}
	if out, err = d.applyIn(in); err != nil || out.Hold != nil {
		d.fail("the bet with its hold: %v, hold %v", err, out.Hold)
	}
	if cp := d.st.Coup; cp == nil || len(cp.Bets) != n+1 || stakes(cp.Bets[n:])[0] != (Bet{PlayerID: p, Spot: spot, Amount: amt, HoldID: id}) {
		d.fail("the bet is not the coup's last")
	}
	if n == 0 && !d.st.Deadline.Equal(d.now.Add(time.Duration(r.BettingWindowMS)*time.Millisecond)) {
		d.fail("the first bet set deadline %v", d.st.Deadline)
	}
}

func (d *driver) tick() {
	d.cmd = "tick at " + d.now.Format("15:04:05.000")
	prev := d.st
	if _, err := d.apply(game.Tick{}); err != nil {
		d.fail("tick refused: %v", err)
	}
	due := !prev.Deadline.IsZero() && !d.now.Before(prev.Deadline)
	switch {
	case !due:
		if !sameState(prev, d.st) {
			d.fail("a tick before the deadline %v changed the state", prev.Deadline)
		}
	case prev.Phase == PhaseBetting && d.st.Phase != PhaseDealing:
		d.fail("the betting window ended but the phase is %d", d.st.Phase)
	case prev.Phase == PhaseResult && prev.NewShoeDue && (d.st.Phase != PhaseResult || !d.st.PauseOver || !d.st.Deadline.IsZero()):
		// The betting opens with the new shoe (SHOE-CUT-CARD).
		d.fail("the pause ended with a new shoe due: phase %d, pause over %t, deadline %v", d.st.Phase, d.st.PauseOver, d.st.Deadline)
	case prev.Phase == PhaseResult && !prev.NewShoeDue && d.st.Phase != PhaseBetting:
		d.fail("the pause ended but the phase is %d", d.st.Phase)
	}
}

// wrongResult sends an effect's result that is not due (or a wrong one
// when it is due): the core must refuse it or ignore it.
func (d *driver) wrongResult() {
	s := d.st
	var cmd game.Command
	switch d.rng.IntN(5) {
	case 0:
		code := d.cards[d.rng.IntN(len(d.cards))]
		if s.Phase == PhaseDealing {
			code = []string{"", "XX", "1C", "as", "TEN"}[d.rng.IntN(5)]
		}
		cmd = game.CardDealt{Code: code, CutCardOut: d.rng.IntN(2) == 0}
	case 1:
		n := d.rng.IntN(4)
		if s.Phase == PhaseSettling && n == len(s.Coup.Bets) {
			n++
		}
		cmd = Settled{Bets: make([]Bet, n), HouseNet: 1}
	case 2:
		if s.NewShoeDue {
			return
		}
		cmd = game.ShoeOpened{ShoeID: "bogus-shoe", Number: 99}
	case 3:
		if len(s.PendingVoids) > 0 {
			return
		}
		cmd = game.HoldsVoided{}
	case 4:
		if s.ShoeToClose {
			return
		}
		cmd = game.ShoeClosed{}
	}
	d.cmd = fmt.Sprintf("wrong result %#v", cmd)
	prev := d.st
	out, err := d.apply(cmd)
	if err == nil {
		if !sameState(prev, d.st) || len(out.Events) > 0 {
			d.fail("an effect result that was not due was accepted and changed the table")
		}
		d.counts[cmd.CommandName()]--
		d.ignored[cmd.CommandName()]++
	}
}

func (d *driver) void() {
	s := d.st
	id := []string{"", "nope"}[d.rng.IntN(2)]
	switch k := d.rng.IntN(4); {
	case k < 2 && s.Coup != nil:
		id = s.Coup.ID
	case k == 2 && s.LastCoup != nil:
		id = s.LastCoup.ID
	}
	d.cmd = "void " + id
	cmd := Void{CoupID: id, Reason: "misdeal", By: "croupier-1", ByRole: "croupier"}
	var why []string
	if d.closed() {
		why = append(why, ReasonTableClosed)
	}
	if s.Coup == nil || len(s.Coup.Bets) == 0 || (s.Phase != PhaseBetting && s.Phase != PhaseDealing) {
		why = append(why, ReasonWrongState)
	} else if id != s.Coup.ID {
		why = append(why, ReasonCoupNotInPlay)
	}
	if len(why) > 0 {
		d.refuse(cmd, why...)
		return
	}
	holds := make([]string, 0, len(s.Coup.Bets))
	for _, b := range s.Coup.Bets {
		holds = append(holds, b.HoldID)
	}
	if _, err := d.apply(cmd); err != nil {
		d.fail("%v", err)
	}
	// Source: RULES.md CF-ERROR (a voided coup's bets are all returned)
	if got := d.st.PendingVoids[len(d.st.PendingVoids)-len(holds):]; !reflect.DeepEqual(got, holds) || d.st.Phase != PhaseBetting {
		d.fail("void: pending voids %v, phase %d; the coup's holds %v", d.st.PendingVoids, d.st.Phase, holds)
	}
}

func (d *driver) close() {
	d.cmd = "close"
	var why []string
	if d.closed() {
		why = append(why, ReasonTableClosed)
	}
	if d.st.Coup != nil && len(d.st.Coup.Bets) > 0 {
		why = append(why, ReasonWrongState)
	}
	if len(why) > 0 {
		d.refuse(Close{Reason: "end of session"}, why...)
		return
	}
	if _, err := d.apply(Close{Reason: "end of session", By: "op"}); err != nil {
		d.fail("%v", err)
	}
	// After a close everything but effects' results is refused.
	d.refuse(PlaceBet{PlayerID: d.players[2], Spot: SpotBank, Amount: d.rs.r.MinBet}, ReasonTableClosed)
	d.refuse(Join{PlayerID: "late"}, ReasonTableClosed)
}

// finish ends the outage, ticks past every deadline and carries out every
// effect until the table rests; then every coup that got a bet is settled
// or voided exactly once (invariant 5) and no hold is left.
func (d *driver) finish() {
	d.tb.Helper()
	d.shoeDown, d.walletDown = 0, 0
	d.step = -1
	for range 10 {
		if dl := d.st.Deadline; !dl.IsZero() && d.now.Before(dl) {
			d.now = dl
		}
		d.now = d.now.Add(time.Millisecond)
		d.cmd = "final tick"
		if _, err := d.apply(game.Tick{}); err != nil {
			d.fail("%v", err)
		}
		d.checkInvariants()
		d.drain(false)
		d.checkInvariants()
	}
	s := d.st
	if s.Phase == PhaseDealing || s.Phase == PhaseSettling || (s.Coup != nil && len(s.Coup.Bets) > 0) || Pending(s) != nil {
		d.fail("the table does not rest: pending %#v", Pending(s))
	}
	if len(d.holds) > 0 {
		d.fail("holds left open: %v", d.holds)
	}
	for id := range d.withBets {
		if d.settledN[id]+d.voidedN[id] != 1 {
			d.fail("coup %s with bets: settled %d, voided %d", id, d.settledN[id], d.voidedN[id])
		}
	}
	for id := range d.settledN {
		if !d.withBets[id] {
			d.fail("coup %s settled without bets", id)
		}
	}
}

// TestModel runs the core under the random driver on several rule sets.
func TestModel(t *testing.T) {
	seeds, steps := 200, 300
	if testing.Short() {
		seeds, steps = 40, 200
	}
	sets := modelRuleSets()
	var mu sync.Mutex
	total := map[string]int{}
	refused, ignored := map[string]int{}, map[string]int{}
	coups, shoes := 0, 0
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
				for k, v := range d.ignored {
					ignored[k] += v
				}
				coups += len(d.withBets)
				shoes += len(d.shoes) - 1
			})
		}
	})
	if t.Failed() {
		return
	}
	// The run must reach every part of the cycle, or it proves little.
	for _, name := range []string{"join", "leave", "place_bet", "tick", "card_dealt", "settled", "void", "holds_voided", "shoe_opened", "close", "shoe_closed"} {
		if total[name] == 0 {
			t.Errorf("no %s was ever applied: the driver misses a part of the cycle (applied: %v)", name, total)
		}
	}
	for _, reason := range []string{ReasonInvalidArgument, ReasonInvalidAmount, ReasonWrongState, ReasonAlreadySeated, ReasonTableFull,
		ReasonNotSeated, ReasonSpotNotOffered, ReasonBetOutOfLimits, ReasonHouseLimitReached, ReasonCoupNotInPlay, ReasonTableClosed} {
		if refused[reason] == 0 && !(reason == ReasonTableFull && testing.Short()) {
			t.Errorf("no refusal %s was ever seen (seen: %v)", reason, refused)
		}
	}
	t.Logf("%d seeds x %d steps: %d coups with bets, %d new shoes; applied %v; refused %v; results not due taken as no-ops %v",
		seeds, steps, coups, shoes, total, refused, ignored)
}

// --- Deep copy -----------------------------------------------------------

// copyState is a deep copy of s, written apart from the core's clone;
// with emptyNil an empty slice becomes nil (sameState). TestCopyState
// fails when State gains a field this copy would share.
func copyState(s State, emptyNil bool) State {
	c := s
	c.Seats = copySlice(s.Seats, emptyNil)
	c.Coup, c.LastCoup = copyCoup(s.Coup, emptyNil), copyCoup(s.LastCoup, emptyNil)
	c.Results = copySlice(s.Results, emptyNil)
	c.PendingVoids = copySlice(s.PendingVoids, emptyNil)
	return c
}

func copyCoup(cp *Coup, emptyNil bool) *Coup {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Bets = copySlice(cp.Bets, emptyNil)
	c.Player = copySlice(cp.Player, emptyNil)
	c.Banker = copySlice(cp.Banker, emptyNil)
	return &c
}

func copySlice[T any](s []T, emptyNil bool) []T {
	if s == nil || (emptyNil && len(s) == 0) {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func deepCopy(s State) State { return copyState(s, false) }

// sameState reports whether a and b are deep-equal, an empty slice
// counting as nil (a state's meaning does not tell them apart).
func sameState(a, b State) bool {
	return reflect.DeepEqual(copyState(a, true), copyState(b, true))
}

// TestCopyState guards copyState: the only fields of State and Coup that
// refer to memory are the ones it copies, and their elements hold none.
func TestCopyState(t *testing.T) {
	copied := map[string]bool{"State.Seats": true, "State.Coup": true, "State.LastCoup": true, "State.Results": true,
		"Bookkeeping.PendingVoids": true, "Coup.Bets": true, "Coup.Player": true, "Coup.Banker": true}
	var walk func(name string, typ reflect.Type)
	walk = func(name string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := typ.Name() + "." + f.Name
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
				if !copied[key] {
					t.Errorf("%s.%s (%s) is not deep-copied by copyState", name, f.Name, f.Type)
				}
			case reflect.Struct:
				if f.Type != reflect.TypeOf(time.Time{}) {
					walk(name+"."+f.Name, f.Type)
				}
			}
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(State{}), reflect.TypeOf(Coup{}), reflect.TypeOf(Seat{}),
		reflect.TypeOf(Bet{}), reflect.TypeOf(Result{}), reflect.TypeOf(Rules{})} {
		walk(typ.Name(), typ)
	}
}
