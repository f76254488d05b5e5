package chemindefer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// The model test drives the core alone with random legal and illegal
// commands, a fake shoe and a fake wallet, and checks after every step
// that money is conserved, a refused command changed nothing, Apply never
// changed its input, no bet moved after the betting closed, every coup
// with bets ended settled or voided, the result follows from the cards,
// and, at rest, the wallet holds exactly the table's live bank, bets and
// bids.

type fakeHold struct {
	player string
	amount int64
}

type model struct {
	t       *testing.T
	rng     *rand.Rand
	s       State
	now     time.Time
	ids     int
	balance map[string]int64
	holds   map[string]*fakeHold
	house   int64
	total   int64
	players []string
	// bets of each coup when its betting closed; coups that had bets.
	closed map[string][]Bet
	hadBet map[string]bool
	ended  map[string]bool
	log    []string
	// then are the cards an opening card promised (checkThen); opened
	// counts the opening cards.
	then   []game.DealCard
	opened int
}

func newModel(t *testing.T, seed int64, r Rules) *model {
	m := &model{t: t, rng: rand.New(rand.NewSource(seed)), s: New(r), now: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC),
		balance: map[string]int64{}, holds: map[string]*fakeHold{}, closed: map[string][]Bet{}, hadBet: map[string]bool{}, ended: map[string]bool{}}
	for i := 0; i < 5; i++ {
		p := "p" + strconv.Itoa(i)
		m.players = append(m.players, p)
		m.balance[p] = 5000
		m.total += 5000
	}
	return m
}

func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	tail := m.log
	if len(tail) > 25 {
		tail = tail[len(tail)-25:]
	}
	m.t.Fatalf("%s\nstate: %v\nlast steps:\n%s", fmt.Sprintf(format, args...), m.s, strings.Join(tail, "\n"))
}

func (m *model) newID() string {
	m.ids++
	return fmt.Sprintf("ID%06d", m.ids)
}

func snapshot(s State) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// apply applies cmd, placing holds and raises as the shell does. It
// reports whether the command was applied.
func (m *model) apply(cmd game.Command) bool {
	m.t.Helper()
	before := snapshot(m.s)
	in := game.Input{Now: m.now, NewID: m.newID(), Cmd: cmd}
	out, err := Apply(m.s, in)
	if snapshot(m.s) != before {
		m.fail("Apply(%T) changed its input", cmd)
	}
	m.log = append(m.log, fmt.Sprintf("%T%+v -> %v", cmd, cmd, err))
	if err != nil {
		var ge *game.Error
		if !errors.As(err, &ge) {
			m.fail("%T refused with %v, not a *game.Error", cmd, err)
		}
		return false
	}
	if out.Hold != nil {
		if !reflect.DeepEqual(out.State, m.s) || len(out.Events) != 0 {
			m.fail("a hold asked with a changed state")
		}
		hc, ok := cmd.(game.HoldCommand)
		if !ok {
			m.fail("%T asked a hold", cmd)
		}
		h := out.Hold
		if h.Amount <= 0 || m.balance[h.PlayerID] < h.Amount {
			return false // the wallet refuses: nothing changes
		}
		id := "hold-" + m.newID()
		m.balance[h.PlayerID] -= h.Amount
		m.holds[id] = &fakeHold{h.PlayerID, h.Amount}
		in.Cmd = hc.WithHold(id)
		if out, err = Apply(m.s, in); err != nil || out.Hold != nil {
			m.fail("%T with its hold: %v", cmd, err)
		}
	}
	if out.Raise != nil {
		r := out.Raise
		h := m.holds[r.HoldID]
		if h == nil || m.balance[h.player] < r.Amount-h.amount {
			return false
		}
		m.balance[h.player] -= r.Amount - h.amount
		h.amount = r.Amount
		rb := cmd.(RaiseBank)
		rb.Resized = true
		in.Cmd = rb
		if out, err = Apply(m.s, in); err != nil || out.Raise != nil {
			m.fail("RaiseBank resized: %v", err)
		}
	}
	prev := m.s
	m.s = out.State
	m.check(prev)
	m.checkOrder(prev, out.Events)
	return true
}

// checkOrder checks the table's order after a step, computed here from
// the seats' numbers (not by the core's Around): a new coup's betting
// order is the seated punters from the banker's right (the next higher
// seat number, wrapping; left: lower), then the gallery (CF-BET-ORDER,
// CF-GALLERY); a bank lost or passed in turn, an offer declined or timed
// out, goes to the next seat in that direction after the one who had it
// (CF-LOSE, CF-PASS); after a settlement banco suivi is the banco caller
// the bank beat, or nobody (CF-BANCO-PRIORITY).
func (m *model) checkOrder(prev State, evs []game.Event) {
	s := m.s
	if cp := s.Coup; cp != nil && s.Phase == PhaseBetting && (prev.Coup == nil || prev.Coup.ID != cp.ID) {
		want := append(seatsAfter(s.Seats, s.Rules.Direction, s.BankerID, true), s.Gallery...)
		if !slices.Equal(cp.Order, want) {
			m.fail("coup %s opens with the betting order %v; from banker %s's right the seats and the gallery make %v (CF-BET-ORDER)", cp.ID, cp.Order, s.BankerID, want)
		}
	}
	after := prev.OfferedID
	if prev.OpenOffer > 0 {
		after = prev.OpenOfferFrom
	}
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case *eventsv1.BankChanged:
			if r := p.GetReason(); r == eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST || r == eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED {
				after = p.GetPreviousBankerPlayerId()
			}
		case *eventsv1.BankOffered:
			if p.GetPlayerId() == "" || after == "" || prev.SeatOf(after) == nil {
				continue // an open offer, the first banker, or after a player gone
			}
			if want := seatsAfter(prev.Seats, s.Rules.Direction, after, false)[0]; p.GetPlayerId() != want {
				m.fail("the bank is offered to %s; in turn after %s it goes to %s (CF-LOSE, CF-PASS)", p.GetPlayerId(), after, want)
			}
			after = p.GetPlayerId()
		case *eventsv1.BetDeclined:
			// A turn declined or let go ends its player's banco suivi
			// (CF-BANCO-PRIORITY), whatever ended it.
			if p.GetPlayerId() == prev.BancoSuivi && s.BancoSuivi == p.GetPlayerId() {
				m.fail("%s declined his turn (or let it go) and keeps banco suivi (CF-BANCO-PRIORITY)", p.GetPlayerId())
			}
		case *eventsv1.BettingReopened:
			// A round that opens again orders whoever is seated then, and
			// the gallery (CF-BET-ORDER): a gallery punter seated in his
			// own turn is among the seats of the new round.
			if cp := s.Coup; cp != nil {
				var want []string
				if s.Phase == PhaseBetting {
					want = append(seatsAfter(s.Seats, s.Rules.Direction, s.BankerID, true), s.Gallery...)
				}
				if want != nil && !slices.Equal(cp.Order, want) {
					m.fail("the betting of coup %s opens again with the order %v; the seats and the gallery make %v (CF-BET-ORDER)", cp.ID, cp.Order, want)
				}
			}
		case *eventsv1.CoupSettled:
			want, last := "", s.LastCoup
			if last.Banco && last.Outcome == rules.OutcomeBankWins {
				want = last.Bets[0].PlayerID
			}
			if s.BancoSuivi != want {
				m.fail("after coup %s (banco %t, %v) banco suivi is %q, not %q (CF-BANCO-PRIORITY)", last.ID, last.Banco, last.Outcome, s.BancoSuivi, want)
			}
		}
	}
}

// seatsAfter is the seated players in turn after the seat of `after`, by
// seat number: higher numbers first (BETTING_DIRECTION_RIGHT), or lower
// (left), wrapping; `after` himself last, or left out.
func seatsAfter(seats []Seat, direction int32, after string, leaveOut bool) []string {
	sorted := slices.Clone(seats)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Number < sorted[j].Number })
	if direction == DirectionLeft {
		slices.Reverse(sorted)
	}
	at := slices.IndexFunc(sorted, func(st Seat) bool { return st.PlayerID == after })
	var out []string
	for i := range sorted {
		if p := sorted[(at+1+i)%len(sorted)].PlayerID; p != after || !leaveOut {
			out = append(out, p)
		}
	}
	return out
}

// carryOut makes the pending effect's calls and applies their result.
func (m *model) carryOut(eff game.Effect) {
	switch e := eff.(type) {
	case game.VoidHolds:
		for _, id := range e.HoldIDs {
			if h := m.holds[id]; h != nil {
				m.balance[h.player] += h.amount
				delete(m.holds, id)
			}
		}
		m.apply(game.HoldsVoided{})
	case game.CloseShoe:
		m.apply(game.ShoeClosed{})
	case game.NewShoe:
		m.apply(game.ShoeOpened{ShoeID: m.newID()})
	case ChargeFees:
		var res []FeeCharge
		for _, f := range e.Fees {
			fee, _ := rules.HourlyFeeDue(rules.HouseRules{HourlyFee: e.HourlyFee}, f.Seconds)
			if m.balance[f.PlayerID] >= fee {
				m.balance[f.PlayerID] -= fee
				m.house += fee
				res = append(res, FeeCharge{Paid: true, Fee: fee})
			} else {
				res = append(res, FeeCharge{})
			}
		}
		m.apply(FeesCharged{Fees: res})
	case ResizeHolds:
		for _, r := range e.Resizes {
			if h := m.holds[r.HoldID]; h != nil && r.Amount < h.amount {
				m.balance[h.player] += h.amount - r.Amount
				h.amount = r.Amount
			}
		}
		m.apply(HoldsResized{})
	case game.DealCard:
		m.checkThen(e)
		code := string("A23456789TJQK"[m.rng.Intn(13)]) + string("CDHS"[m.rng.Intn(4)])
		m.apply(game.CardDealt{Code: code, CutCardOut: m.rng.Intn(40) == 0})
	case Settle:
		m.apply(m.settle(e))
	default:
		m.fail("unknown effect %T", eff)
	}
}

// checkThen: the cards an opening card said would follow (Then, dealt
// in the same call by the shell) are the next cards the core asks for,
// in order, with the same request ids and hands.
func (m *model) checkThen(e game.DealCard) {
	if len(m.then) > 0 && m.then[0].CoupID == e.CoupID {
		want := m.then[0]
		m.then = m.then[1:]
		if e.RequestID != want.RequestID || e.Hand != want.Hand || len(e.Then) > 0 {
			m.fail("asked for %+v, the opening card promised %+v", e, want)
		}
	}
	if len(e.Then) > 0 {
		m.then = e.Then
		m.opened++
	}
}

// settle is the wallet's SettleCoup: bets against the bank hold.
func (m *model) settle(e Settle) Settled {
	bank := m.holds[e.BankHoldID]
	if bank == nil {
		m.fail("settle against no bank hold %q", e.BankHoldID)
	}
	var covered, winnings, commission int64
	for _, b := range e.Bets {
		h := m.holds[b.HoldID]
		if h == nil || h.amount != b.Amount {
			m.fail("bet %+v is not held as it is (%+v)", b, h)
		}
		covered += b.Amount
		switch e.Outcome {
		case rules.OutcomeStandOff:
			m.balance[h.player] += h.amount
		case rules.OutcomeBankLoses:
			m.balance[h.player] += 2 * h.amount
		case rules.OutcomeBankWins:
			winnings += h.amount
		}
		delete(m.holds, b.HoldID)
	}
	switch e.Outcome {
	case rules.OutcomeBankLoses:
		bank.amount -= covered
		if bank.amount < 0 {
			m.fail("the bank lost %d more than it held", -bank.amount)
		}
	case rules.OutcomeBankWins:
		if !e.CommissionExempt {
			commission = winnings * e.CommissionBP / 10000
		}
		m.house += commission
		bank.amount += winnings - commission
	}
	return Settled{BankerWinnings: winnings, Commission: commission, BankerNet: winnings - commission, NewBank: bank.amount}
}

// check checks the invariants after a step from prev to m.s.
func (m *model) check(prev State) {
	m.t.Helper()
	s := m.s
	// Money is conserved.
	sum := m.house
	for _, b := range m.balance {
		sum += b
	}
	for _, h := range m.holds {
		sum += h.amount
	}
	if sum != m.total {
		m.fail("money not conserved: %d, want %d", sum, m.total)
	}
	// No bet moves after the betting closes.
	if cp := s.Coup; cp != nil {
		if len(cp.Bets) > 0 {
			m.hadBet[cp.ID] = true
		}
		switch s.Phase {
		case PhaseDealing, PhaseDecision, PhaseSettling:
			if want, ok := m.closed[cp.ID]; !ok {
				m.closed[cp.ID] = append([]Bet(nil), cp.Bets...)
			} else if !reflect.DeepEqual(want, cp.Bets) {
				m.fail("coup %s's bets moved after the betting closed: %v, were %v", cp.ID, cp.Bets, want)
			}
		}
	}
	// Every coup with bets ends settled or voided; the result follows
	// from the cards.
	if pc := prev.Coup; pc != nil && (s.Coup == nil || s.Coup.ID != pc.ID) && m.hadBet[pc.ID] {
		last := s.LastCoup
		if last == nil || last.ID != pc.ID || (!last.Settled && !last.Voided) {
			m.fail("coup %s with bets ended neither settled nor voided: %+v", pc.ID, last)
		}
		m.ended[pc.ID] = true
		if last.Settled {
			pt, _ := handTotal(last.Player)
			bt, _ := handTotal(last.Banker)
			want := rules.OutcomeStandOff
			switch {
			case bt > pt:
				want = rules.OutcomeBankWins
			case pt > bt:
				want = rules.OutcomeBankLoses
			}
			if len(last.Player) < 2 || len(last.Banker) < 2 || last.Outcome != want {
				m.fail("coup %s: %v against %v is %v, not %v (CF-RESULT)", last.ID, last.Player, last.Banker, last.Outcome, want)
			}
		}
	}
	// At rest the wallet holds exactly the live bank, bets and bids.
	if Pending(s) == nil {
		live := map[string]bool{}
		if s.BankHoldID != "" {
			live[s.BankHoldID] = true
		}
		if n := len(s.Bids); n > 0 { // the outbid bids are released
			live[s.Bids[n-1].HoldID] = true
		}
		if s.Coup != nil {
			for _, b := range s.Coup.Bets {
				live[b.HoldID] = true
			}
		}
		var open, want []string
		for id := range m.holds {
			open = append(open, id)
		}
		for id := range live {
			want = append(want, id)
		}
		sort.Strings(open)
		sort.Strings(want)
		if !reflect.DeepEqual(open, want) {
			m.fail("at rest the wallet holds %v; the table's live holds are %v", open, want)
		}
		if s.Coup != nil {
			for _, b := range s.Coup.Bets {
				if m.holds[b.HoldID].amount != b.Amount {
					m.fail("bet %+v held as %d", b, m.holds[b.HoldID].amount)
				}
			}
		}
		if s.BankHoldID != "" && m.holds[s.BankHoldID].amount != s.Bank {
			m.fail("bank %d held as %d", s.Bank, m.holds[s.BankHoldID].amount)
		}
	}
}

// step makes one random move: an effect due, a command (legal or not), or
// the clock past the deadline.
func (m *model) step() {
	if eff := Pending(m.s); eff != nil && m.rng.Intn(4) != 0 {
		m.carryOut(eff)
		return
	}
	r := m.rng
	p := m.players[r.Intn(len(m.players))]
	if r.Intn(3) == 0 { // mostly the one whose turn it is
		switch {
		case m.s.Coup != nil && m.s.Coup.TurnPlayer() != "" && m.s.Phase == PhaseBetting:
			p = m.s.Coup.TurnPlayer()
		case m.s.Phase == PhaseDecision:
			p = m.s.Coup.DecisionBy
		case m.s.Phase == PhaseOffering && m.s.OfferedID != "":
			p = m.s.OfferedID
		case m.s.Phase == PhaseRaise:
			p = m.s.BankerID
		}
	}
	amount := []int64{0, -5, 50, 100, 200, 500, 1000, 3000}[r.Intn(8)]
	coupID := "nope"
	if m.s.Coup != nil && r.Intn(4) != 0 {
		coupID = m.s.Coup.ID
	}
	var cmd game.Command
	switch r.Intn(20) {
	case 0, 1:
		cmd = Join{PlayerID: p, Lot: r.Intn(len(m.s.Seats) + 1)}
	case 2:
		cmd = Leave{PlayerID: p}
	case 3:
		cmd = JoinGallery{PlayerID: p}
	case 4, 5:
		if m.s.OpenOffer > 0 && r.Intn(2) == 0 {
			amount = m.s.OpenOffer
		}
		cmd = AcceptBank{PlayerID: p, Amount: amount}
	case 6:
		cmd = DeclineBank{PlayerID: p}
	case 7:
		cmd = BidBank{PlayerID: p, Amount: amount}
	case 8, 9, 10:
		cmd = PlaceBet{PlayerID: p, Amount: amount, OverBank: r.Intn(4) == 0}
	case 11:
		cmd = DeclineBet{PlayerID: p}
	case 12:
		cmd = CallBanco{PlayerID: p}
	case 13, 14:
		cmd = DecideDraw{PlayerID: p, Choice: Choice(r.Intn(3))}
	case 15:
		cmd = PassBank{PlayerID: p}
	case 16:
		cmd = RaiseBank{PlayerID: p, Raise: r.Intn(2) == 0}
	case 17:
		if r.Intn(4) == 0 {
			cmd = Void{CoupID: coupID, Reason: "mistake", By: "croupier", ByRole: "croupier"}
		} else {
			cmd = game.Tick{}
		}
	case 18:
		if r.Intn(20) == 0 {
			cmd = Close{Reason: "end of the night", By: "croupier"}
		} else {
			cmd = game.Tick{}
		}
	default:
		if d := Deadline(m.s); !d.IsZero() && r.Intn(2) == 0 {
			m.now = d
		} else {
			m.now = m.now.Add(time.Duration(r.Intn(60)) * time.Second)
		}
		cmd = game.Tick{}
	}
	m.apply(cmd)
}

func TestModel(t *testing.T) {
	seeds, steps := 150, 1200
	if testing.Short() {
		seeds = 40
	}
	base := Rules{Decks: 6, CutCardFromEnd: 8, Burn: 3, MinimumBank: 100, MaxSeats: 4, CommissionBP: 500, Rounding: 1,
		Option3vs9: true, Option5vs4: true, Direction: 1, FirstBanker: 1, BetTimeMS: 30000, DecisionTimeMS: 30000,
		OfferTimeMS: 30000, PassMode: 1, AbandonAfter: 20}
	variants := []func(*Rules){
		func(*Rules) {},
		func(r *Rules) { r.FirstBanker, r.Direction = FirstBankerLot, DirectionLeft },
		func(r *Rules) { r.FirstBanker, r.PassMode = FirstBankerAuction, PassModeAuction },
		func(r *Rules) { r.HouseLimit, r.BancoFreePlay = 1000, true },
		func(r *Rules) { r.HourlyFee, r.CommissionBP, r.FirstCoupFree = 3600, 0, true },
	}
	settled, opened := 0, 0
	for seed := 0; seed < seeds; seed++ {
		r := base
		variants[seed%len(variants)](&r)
		m := newModel(t, int64(seed), r)
		for i := 0; i < steps && m.s.Phase != PhaseClosed; i++ {
			m.step()
		}
		// Drain: whatever is due is carried out.
		for i := 0; i < 50; i++ {
			eff := Pending(m.s)
			if eff == nil {
				break
			}
			m.carryOut(eff)
		}
		if m.s.LastCoup != nil && m.s.LastCoup.Settled {
			settled++
		}
		opened += m.opened
		if t.Failed() {
			return
		}
	}
	if settled == 0 {
		t.Errorf("no seed settled a coup: the model does not reach the game")
	}
	if opened == 0 {
		t.Errorf("no opening card promised the cards after it (DealCard.Then)")
	}
}

// TestApplyRefusalsChangeNothing: a sample of refusals, each a
// *game.Error with its reason, the state untouched.
func TestApplyRefusalsChangeNothing(t *testing.T) {
	s := New(Rules{MaxSeats: 2, MinimumBank: 100, BetTimeMS: 1000, DecisionTimeMS: 1000, OfferTimeMS: 1000, FirstBanker: 1, Direction: 1})
	in := func(c game.Command) game.Input { return game.Input{Now: time.Unix(0, 0), NewID: "C1", Cmd: c} }
	for _, c := range []struct {
		cmd    game.Command
		reason string
	}{
		{AcceptBank{PlayerID: "a", Amount: 100}, ReasonWrongState},
		{PlaceBet{PlayerID: "a", Amount: 100}, ReasonWrongState},
		{DecideDraw{PlayerID: "a", Choice: ChoiceDraw}, ReasonWrongState},
		{Leave{PlayerID: "a"}, ReasonNotSeated},
		{game.HoldsVoided{}, ReasonWrongState},
		{Settled{}, ReasonWrongState},
	} {
		before := snapshot(s)
		_, err := Apply(s, in(c.cmd))
		var ge *game.Error
		if !errors.As(err, &ge) || ge.Reason != c.reason {
			t.Errorf("%T: %v, want %s", c.cmd, err, c.reason)
		}
		if snapshot(s) != before {
			t.Errorf("%T changed the state", c.cmd)
		}
	}
}
