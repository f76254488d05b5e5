package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/sim/oracle"
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// publishBound is how long the relays may take to publish what is left
// in the outboxes once NATS is up at the end (real time: the relays run
// on their own; nothing the simulation decides depends on it).
const publishBound = 60 * time.Second

// readEvents waits until table-svc has published every event of every
// table (the outbox is empty and the last batch of each table in
// JetStream holds its last sequence) and reads them all, in stream order,
// each batch unpacked.
func (s *sim) readEvents() (map[string][]*eventsv1.TableEvent, map[string]uint64, error) {
	want := map[string]uint64{}
	for _, t := range s.tables {
		seq, err := s.cl.table.EventSeq(t.id)
		if err != nil {
			return nil, nil, err
		}
		want[t.id] = seq
	}
	nc, err := nats.Connect(s.cl.natsURL(), nats.Name("chemmy-sim"))
	if err != nil {
		return nil, nil, fmt.Errorf("sim: nats: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*publishBound)
	defer cancel()
	// Each table's messages are batches of its events (docs/events.md):
	// the stream has them all when the last batch of each table holds its
	// last sequence.
	var total uint64
	for deadline := time.Now().Add(publishBound); ; {
		total = 0
		last := map[string]uint64{}
		st, err := js.Stream(ctx, "CHEMMY")
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = st.Info(ctx, jetstream.WithSubjectFilter("chemmy.table.>")); err == nil {
				for _, n := range info.State.Subjects {
					total += n
				}
			}
			for id, n := range want {
				if err != nil || n == 0 {
					continue
				}
				raw, gerr := st.GetLastMsgForSubject(ctx, tableevents.TableSubjects(id))
				if gerr != nil {
					if !errors.Is(gerr, jetstream.ErrMsgNotFound) {
						err = gerr
					}
					continue
				}
				evs, derr := tableevents.Decode(raw.Header.Get(outbox.TypeHeader), raw.Subject, raw.Data)
				if derr != nil || len(evs) == 0 {
					err = fmt.Errorf("last event of %s: %v", id, derr)
					continue
				}
				last[id] = evs[len(evs)-1].GetSequence()
			}
		}
		pending, perr := s.cl.table.OutboxLen(1)
		done := err == nil && perr == nil && pending == 0
		for id, n := range want {
			done = done && last[id] >= n
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			s.violate("events-published", "", "%v after the end, table-svc's outbox still holds %d event(s) (err %v, %v) or JetStream lacks some: has up to %v, want %v",
				publishBound, pending, err, perr, last, want)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := map[string][]*eventsv1.TableEvent{}
	if total == 0 {
		return out, want, nil
	}
	cons, err := js.OrderedConsumer(ctx, "CHEMMY", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"chemmy.table.>"}})
	if err != nil {
		return nil, nil, fmt.Errorf("sim: jetstream consumer: %w", err)
	}
	for got := uint64(0); got < total; {
		batch, err := cons.Fetch(int(min(500, total-got)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, nil, fmt.Errorf("sim: jetstream fetch: %w", err)
		}
		n := 0
		for msg := range batch.Messages() {
			evs, err := tableevents.Decode(msg.Headers().Get(outbox.TypeHeader), msg.Subject(), msg.Data())
			if err != nil {
				return nil, nil, fmt.Errorf("sim: event %s: %w", msg.Subject(), err)
			}
			md, mderr := msg.Metadata()
			for _, ev := range evs {
				out[ev.GetTableId()] = append(out[ev.GetTableId()], ev)
				if mderr == nil {
					s.stored[ev] = stored{seq: md.Sequence.Stream, at: md.Timestamp}
				}
			}
			n++
		}
		if batch.Error() != nil && n == 0 {
			return nil, nil, fmt.Errorf("sim: jetstream fetch: %w", batch.Error())
		}
		got += uint64(n)
	}
	return out, want, nil
}

// betM is a bet as the events tell it.
type betM struct {
	player string
	amount int64
	spot   string // punto banco: the spot (bet_placed's)
}

// drawM is a draw_decided event; timedOut: right after a decision's
// turn_timed_out (the published event does not say by_choice).
type drawM struct {
	ev       *eventsv1.DrawDecided
	timedOut bool
}

// dealtM is one card_dealt: to which hand, at which position.
type dealtM struct {
	hand     eventsv1.Hand
	position int32
}

// coupM is a coup as the events tell it.
type coupM struct {
	id    string
	bets  []betM
	banco bool
	money bool // a bet, a banco or a card: the coup must end
	cards int
	// dealt are the hands of its card_dealt events, in order, with each
	// card's position in its hand.
	dealt    []dealtM
	draws    []drawM
	resulted *eventsv1.CoupResulted
	// play is the oracle's reading of its cards (nil until its result,
	// or when the cards break the rules); banque, old at those games.
	play    *oracle.Play
	banque  *oracle.BanquePlay
	old     *oracle.OldPlay
	settled int
	voided  int
	// interrupted: voided by the table itself (InterruptAfter); banker:
	// the banker then.
	interrupted bool
	banker      string
}

// interruptM is an interrupted coup of a table.
type interruptM struct {
	t *simTable
	c *coupM
}

// checkEvents reads every table's events from JetStream and checks them:
// gapless and unduplicated by sequence, every coup with money settled or
// voided exactly once, each result following from its cards by the
// tableau, each settlement's money following from the result and the
// bets (both by the oracle, cmd/sim/oracle, not by the services' rules
// engine), the table's order (order.go), every settled coup's transfers
// in the ledger those of its settlement (ledger.go), and every player's
// balance in the wallet what the settlements, the fees, the deposits and
// the withdrawals make it.
func (s *sim) checkEvents() error {
	byTable, want, err := s.readEvents()
	if err != nil {
		return err
	}
	delta := map[string]int64{} // money won (+) or lost (-) at the tables, per player; "house" too
	complete := true
	var interrupts []interruptM
	for _, t := range s.tables {
		evs := s.sequenced(t, byTable[t.id], want[t.id])
		if uint64(len(evs)) != want[t.id] {
			complete = false
		}
		s.res.Events += len(evs)
		switch {
		case t.pb != nil:
			s.replayPB(t, evs, delta, &interrupts)
		case t.core():
			s.replayCore(t, evs, delta, &interrupts)
		default:
			s.replay(t, evs, delta, &interrupts)
		}
	}
	if err := s.checkInterrupted(interrupts); err != nil {
		return err
	}
	if err := s.checkLedger(); err != nil {
		return err
	}
	if !complete {
		s.tracef("events incomplete: balances not checked against them")
		return nil
	}
	for _, p := range s.playerIDs() {
		b, _, err := s.account("player:" + p)
		if err != nil {
			return err
		}
		pl := s.players[p]
		if want := pl.deposited - pl.withdrawn + delta[p]; b != want {
			s.violate("balances-follow-events", p, "%s's balance is %d; deposits %d less withdrawals %d plus %d won at the table (by the events) make %d",
				p, b, pl.deposited, pl.withdrawn, delta[p], want)
		}
	}
	house, _, err := s.account("house:commission")
	if err != nil {
		return err
	}
	if house != delta["house"] {
		s.violate("balances-follow-events", "house", "house:commission holds %d; the commissions and fees of the events make %d", house, delta["house"])
	}
	bank, _, err := s.account("house:bank")
	if err != nil {
		return err
	}
	if want := s.houseBank + delta["house:bank"]; bank != want {
		s.violate("balances-follow-events", "house:bank", "house:bank holds %d; its deposits %d and what the punto banco settlements gave it (%d) make %d",
			bank, s.houseBank, delta["house:bank"], want)
	}
	return nil
}

// sequenced checks a table's events for gaps, duplicates and order, and
// returns them by sequence, once each.
func (s *sim) sequenced(t *simTable, evs []*eventsv1.TableEvent, want uint64) []*eventsv1.TableEvent {
	bySeq := map[uint64]*eventsv1.TableEvent{}
	var last uint64
	for _, ev := range evs {
		seq := ev.GetSequence()
		if prev, dup := bySeq[seq]; dup {
			if prev.GetEventId() == ev.GetEventId() {
				s.violate("events-unduplicated", fmt.Sprintf("t%d/%d", t.n, seq), "t%d: event %d (%s) is in the stream twice (republished, same event id): %s and %s",
					t.n, seq, kindOf(ev), s.whenStored(prev), s.whenStored(ev))
			} else {
				s.violate("events-unduplicated", fmt.Sprintf("t%d/%d", t.n, seq), "t%d: two events carry sequence %d: %s and %s", t.n, seq, kindOf(prev), kindOf(ev))
			}
			continue
		}
		if seq < last {
			s.violate("events-ordered", fmt.Sprintf("t%d/%d", t.n, seq), "t%d: event %d comes after event %d in the stream", t.n, seq, last)
		}
		last = max(last, seq)
		bySeq[seq] = ev
	}
	var missing []uint64
	out := make([]*eventsv1.TableEvent, 0, len(bySeq))
	for seq := uint64(1); seq <= want; seq++ {
		if ev, ok := bySeq[seq]; ok {
			out = append(out, ev)
		} else {
			missing = append(missing, seq)
		}
	}
	if len(missing) > 0 {
		s.violate("events-gapless", fmt.Sprint(t.n), "t%d: events %s of 1..%d are missing from the stream", t.n, seqList(missing), want)
	}
	for seq := range bySeq {
		if seq == 0 || seq > want {
			s.violate("events-gapless", fmt.Sprintf("t%d/%d", t.n, seq), "t%d: event %d in the stream, but the table's last is %d", t.n, seq, want)
		}
	}
	return out
}

// stored is where and when JetStream stored an event.
type stored struct {
	seq uint64
	at  time.Time
}

// whenStored says when JetStream stored an event: its stream sequence and
// the step the simulation was at (real time, so only for diagnosis; it is
// not in the trace's digest).
func (s *sim) whenStored(ev *eventsv1.TableEvent) string {
	st, ok := s.stored[ev]
	if !ok {
		return "?"
	}
	step := 0
	for i, at := range s.stepTimes {
		if !at.After(st.at) {
			step = i
		}
	}
	return fmt.Sprintf("stream #%d during step %d", st.seq, step)
}

func seqList(seqs []uint64) string {
	if len(seqs) > 10 {
		return fmt.Sprintf("%v... (%d)", seqs[:10], len(seqs))
	}
	return fmt.Sprint(seqs)
}

func kindOf(ev *eventsv1.TableEvent) string {
	if fd := ev.ProtoReflect().WhichOneof(ev.ProtoReflect().Descriptor().Oneofs().ByName("payload")); fd != nil {
		return string(fd.Name())
	}
	return "unknown"
}

// cfRules are a chemin de fer table's tableau house rules as the oracle
// takes them.
func cfRules(hr *tablev1.HouseRules) oracle.CheminRules {
	return oracle.CheminRules{Option3vs9: hr.GetBankerOption_3Vs_9(), Option5vs4: hr.GetBankerOption_5Vs_4(), BancoFreePlay: hr.GetBancoFreePlay()}
}

// roundingOf is a commission rounding as the oracle takes it (the same
// numbers; unspecified is the default, down).
func roundingOf(r tablev1.CommissionRounding) oracle.Rounding {
	if r == tablev1.CommissionRounding_COMMISSION_ROUNDING_UNSPECIFIED {
		return oracle.RoundDown
	}
	return oracle.Rounding(r)
}

// eventOutcome is an oracle outcome as the events write it.
func eventOutcome(o oracle.Outcome) eventsv1.Outcome {
	switch o {
	case oracle.BankWins:
		return eventsv1.Outcome_OUTCOME_BANK_WINS
	case oracle.BankLoses:
		return eventsv1.Outcome_OUTCOME_BANK_LOSES
	case oracle.StandOff:
		return eventsv1.Outcome_OUTCOME_STAND_OFF
	}
	return eventsv1.Outcome_OUTCOME_UNSPECIFIED
}

// replay goes through a table's events in order, as a consumer would,
// and checks every coup: its result from its cards, its settlement from
// its result and bets, that it ends once, an interrupted one before its
// result. delta collects each player's (and the house's) money won at the
// table, interrupts the coups the table voided itself.
func (s *sim) replay(t *simTable, evs []*eventsv1.TableEvent, delta map[string]int64, interrupts *[]interruptM) {
	hr := t.rules
	book := coupBook{}
	order := newOrderModel(s, t, evs)
	var banker string
	var bank int64
	bankerCoups := 0
	paidSeconds := map[string]int64{}
	var prev *eventsv1.TableEvent
	closed := false
	for i, ev := range evs {
		if i > 0 {
			prev = evs[i-1]
		}
		s.checkReadOnly(t, ev, &closed)
		c := book.of(ev)
		order.event(ev)
		name := func() string { return s.coupName(t, ev.GetCoupId()) }
		switch p := ev.GetPayload().(type) {
		case *eventsv1.TableEvent_BankChanged:
			switch p.BankChanged.GetReason() {
			case eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED:
				banker, bank, bankerCoups = p.BankChanged.GetBankerPlayerId(), p.BankChanged.GetBank(), 0
			case eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, eventsv1.BankChangeReason_BANK_CHANGE_REASON_RAISED:
				bank = p.BankChanged.GetBank()
			default:
				banker, bank = "", 0
			}
		case *eventsv1.TableEvent_BetPlaced:
			c.bets = append(c.bets, betM{player: p.BetPlaced.GetPlayerId(), amount: p.BetPlaced.GetAmount()})
			c.money = true
		case *eventsv1.TableEvent_BancoCalled:
			c.bets = []betM{{player: p.BancoCalled.GetPlayerId(), amount: p.BancoCalled.GetAmount()}}
			c.banco, c.money = true, true
		case *eventsv1.TableEvent_BetReduced:
			for i := len(c.bets) - 1; i >= 0; i-- {
				if c.bets[i].player == p.BetReduced.GetPlayerId() {
					if p.BetReduced.GetAmount() == 0 {
						c.bets = append(c.bets[:i:i], c.bets[i+1:]...)
					} else {
						c.bets[i].amount = p.BetReduced.GetAmount()
					}
					break
				}
			}
		case *eventsv1.TableEvent_CardDealt:
			c.cards++
			c.money = true
			c.dealt = append(c.dealt, dealtM{p.CardDealt.GetHand(), p.CardDealt.GetPosition()})
		case *eventsv1.TableEvent_DrawDecided:
			c.draws = append(c.draws, drawM{ev: p.DrawDecided, timedOut: prev.GetTurnTimedOut().GetTurn() == "decision" && prev.GetCoupId() == c.id})
		case *eventsv1.TableEvent_CoupResulted:
			if c.resulted != nil {
				s.violate("coup-ends-once", c.id, "t%d %s has two results", t.n, name())
			}
			c.resulted = p.CoupResulted
			s.checkTableau(t, c, name())
		case *eventsv1.TableEvent_CoupSettled:
			c.settled++
			s.res.CoupsSettled++
			if c.resulted == nil {
				s.violate("coup-follows-cards", c.id, "t%d %s was settled without a result", t.n, name())
				continue
			}
			// CF-BANK-WINS: no commission on an hourly-fee table, nor
			// (first_coup_exempt) on a banker's first coup.
			exempt := hr.GetHourlyFee() > 0 || (hr.GetFirstCoupExempt() && bankerCoups == 0)
			s.checkSettlement(t, c, p.CoupSettled, banker, bank, exempt, name(), delta)
			bankerCoups++
		case *eventsv1.TableEvent_CoupVoided:
			s.coupVoided(t, c, p.CoupVoided, banker, interrupts)
		case *eventsv1.TableEvent_SeatFeeCharged:
			f := p.SeatFeeCharged
			if due := oracle.HourlyFee(hr.GetHourlyFee(), f.GetSeatSeconds(), roundingOf(hr.GetCommissionRounding())); due != f.GetFee() {
				s.violate("hourly-fee", fmt.Sprintf("t%d/%d", t.n, ev.GetSequence()), "t%d: %s charged %d for %d s at %d an hour (%s); the oracle makes %d",
					t.n, f.GetPlayerId(), f.GetFee(), f.GetSeatSeconds(), hr.GetHourlyFee(), hr.GetCommissionRounding(), due)
			}
			if hr.GetHourlyFee() == 0 {
				s.violate("hourly-fee", fmt.Sprintf("t%d/%d", t.n, ev.GetSequence()), "t%d charges a seat fee but has no hourly fee", t.n)
			}
			if f.GetPaid() {
				delta[f.GetPlayerId()] -= f.GetFee()
				delta["house"] += f.GetFee()
				paidSeconds[f.GetPlayerId()] += f.GetSeatSeconds()
			}
		}
	}
	// Nobody pays for more seat time than he sat.
	for _, p := range t.players {
		if sat := t.seatTime[p]; time.Duration(paidSeconds[p])*time.Second > sat+time.Second {
			s.violate("hourly-fee", fmt.Sprintf("t%d/%s/seconds", t.n, p), "t%d: %s paid for %d s of seat time but sat %v", t.n, p, paidSeconds[p], sat)
		}
	}
	s.checkCoupsEnd(t, book)
	order.end()
}

// coupBook is a table's coups as its events tell them, in the order of
// their first event.
type coupBook struct {
	coups map[string]*coupM
	order []string
}

// of is the coup of ev (nil for an event of no coup), noted on its first
// event.
func (b *coupBook) of(ev *eventsv1.TableEvent) *coupM {
	id := ev.GetCoupId()
	if id == "" {
		return nil
	}
	if b.coups == nil {
		b.coups = map[string]*coupM{}
	}
	c := b.coups[id]
	if c == nil {
		c = &coupM{id: id}
		b.coups[id] = c
		b.order = append(b.order, id)
	}
	return c
}

// checkReadOnly: once a table is closed (*closed) only the seat fees
// billed at the close and the croupier's record of it follow.
func (s *sim) checkReadOnly(t *simTable, ev *eventsv1.TableEvent, closed *bool) {
	if *closed && ev.GetSeatFeeCharged() == nil && ev.GetStaffAction().GetAction() != "close_table" {
		s.violate("closed-read-only", fmt.Sprintf("t%d/%d", t.n, ev.GetSequence()), "t%d: event %d (%s) after the table closed", t.n, ev.GetSequence(), kindOf(ev))
	}
	if ev.GetTableClosed() != nil {
		*closed = true
	}
}

// coupVoided notes coup c voided; an interruption (the table's own void)
// goes to interrupts, and must come before the coup's result.
func (s *sim) coupVoided(t *simTable, c *coupM, ev *eventsv1.CoupVoided, banker string, interrupts *[]interruptM) {
	c.voided++
	s.res.CoupsVoided++
	s.wantTransfers(t, c.id) // none: every bet returned (CF-ERROR)
	if !interruptReason(ev.GetReason()) {
		return
	}
	c.interrupted, c.banker = true, banker
	s.res.CoupsInterrupted++
	*interrupts = append(*interrupts, interruptM{t, c})
	if c.resulted != nil {
		s.violate("coup-interrupted", c.id, "t%d %s was interrupted (voided by the table) after its result", t.n, s.coupName(t, c.id))
	}
}

// checkCoupsEnd: every coup with money ends exactly once; the coup in
// play not yet.
func (s *sim) checkCoupsEnd(t *simTable, book coupBook) {
	current := t.view.GetCoup().GetCoupId()
	ids := append([]string(nil), book.order...)
	sort.Strings(ids)
	for _, id := range ids {
		c := book.coups[id]
		ends := c.settled + c.voided
		switch {
		case ends > 1:
			s.violate("coup-ends-once", id, "t%d %s ended %d times (settled %d, voided %d)", t.n, s.coupName(t, id), ends, c.settled, c.voided)
		case id == current && ends > 0:
			s.violate("coup-ends-once", id, "t%d %s is still in play but has ended (settled %d, voided %d)", t.n, s.coupName(t, id), c.settled, c.voided)
		case id != current && ends == 0 && c.money:
			s.violate("coup-ends-once", id, "t%d %s had %d bet(s) and %d card(s) but was neither settled nor voided (the table is %s)",
				t.n, s.coupName(t, id), len(c.bets), c.cards, brief(t.view))
		}
	}
}

func (s *sim) coupName(t *simTable, id string) string {
	if n, ok := s.coupNo[id]; ok {
		return fmt.Sprintf("coup %d", n)
	}
	return "coup " + id
}

// codesOf is the codes of cards.
func codesOf(cards []*shoev1.Card) []string {
	out := make([]string, 0, len(cards))
	for _, c := range cards {
		out = append(out, c.GetCode())
	}
	return out
}

// drawOf is the draw_decided of a hand in coup c, nil when none: a hand
// decides at most once a coup; the published event does not say whether
// a choice or the tableau decided (nor who chose).
func (c *coupM) drawOf(hand eventsv1.Hand) *drawM {
	for i, d := range c.draws {
		if d.ev.GetHand() == hand {
			return &c.draws[i]
		}
	}
	return nil
}

// checkDeal: the cards came as CF-DEAL deals them, player's hand first,
// alternately, two each, then the player's third card and the banker's
// (PB-TABLEAU deals the same way).
func checkDeal(c *coupM, p *oracle.Play, bad func(string, ...any)) {
	P, B := eventsv1.Hand_HAND_PLAYER, eventsv1.Hand_HAND_BANKER
	want := []dealtM{{P, 1}, {B, 1}, {P, 2}, {B, 2}}
	if p.PlayerDrew {
		want = append(want, dealtM{P, 3})
	}
	if p.BankerDrew {
		want = append(want, dealtM{B, 3})
	}
	if !slices.Equal(c.dealt, want) {
		bad("cards dealt in the order %v, CF-DEAL and the draws make %v", c.dealt, want)
	}
}

// checkTableau judges the coup's cards by the oracle: every card one the
// tableau (or a recorded choice at an option) called for, none missing,
// dealt in order; each option's choice recorded by a draw_decided that
// matches the cards, a timed-out one taking the default (the tableau,
// drawing at an option); no choice recorded against the tableau; the
// outcome, natural and totals the oracle's.
func (s *sim) checkTableau(t *simTable, c *coupM, name string) {
	bad := func(format string, args ...any) {
		s.violate("coup-follows-cards", c.id, "t%d %s: "+format, append([]any{t.n, name}, args...)...)
	}
	res := c.resulted
	P, B := codesOf(res.GetPlayerCards()), codesOf(res.GetBankerCards())
	if c.cards != len(P)+len(B) {
		bad("%d card_dealt events for %d cards in the result", c.cards, len(P)+len(B))
	}
	play, err := oracle.PlayChemin(P, B, cfRules(t.rules), c.banco)
	if err != nil {
		bad("%v", err)
		return
	}
	c.play = &play
	checkDeal(c, &play, bad)
	for _, h := range []struct {
		hand   eventsv1.Hand
		player bool
		cell   oracle.Cell
		drew   bool
	}{
		{eventsv1.Hand_HAND_PLAYER, true, play.PlayerCell, play.PlayerDrew},
		{eventsv1.Hand_HAND_BANKER, false, play.BankerCell, play.BankerDrew},
	} {
		d := c.drawOf(h.hand)
		switch {
		case h.cell == oracle.Option && d == nil:
			bad("the %s hand had a choice but no draw_decided records it", h.hand)
		case h.cell == oracle.Option && d.ev.GetDraw() != h.drew:
			bad("the %s hand chose draw=%t but drew=%t", h.hand, d.ev.GetDraw(), h.drew)
		case h.cell == oracle.Option && d.timedOut && d.ev.GetDraw() != play.TimeoutDraw(h.player):
			bad("the %s hand's time ran out and it drew=%t; the default (the tableau, drawing at an option) is draw=%t (%v / %v)",
				h.hand, d.ev.GetDraw(), play.TimeoutDraw(h.player), P[:2], B[:2])
		case h.cell == oracle.NoDecision && d != nil:
			bad("a draw_decided for the %s hand in a coup a natural ended (%v / %v)", h.hand, P, B)
		case (h.cell == oracle.Draw || h.cell == oracle.Stand) && d != nil && d.ev.GetDraw() != (h.cell == oracle.Draw):
			bad("the %s hand's draw_decided says draw=%t where the tableau says %s (%v / %v)", h.hand, d.ev.GetDraw(), h.cell, P, B)
		}
	}
	if got, want := res.GetOutcome(), eventOutcome(play.Outcome); got != want {
		bad("result %s, the oracle makes %s from %v / %v", got, want, P, B)
	}
	if res.GetNatural() != play.Natural {
		bad("natural %t, the oracle says %t (%v / %v)", res.GetNatural(), play.Natural, P, B)
	}
	if int(res.GetPlayerTotal()) != play.PlayerTotal || int(res.GetBankerTotal()) != play.BankerTotal {
		bad("totals %d / %d, the cards make %d / %d", res.GetPlayerTotal(), res.GetBankerTotal(), play.PlayerTotal, play.BankerTotal)
	}
}

// checkSettlement computes the coup's money by the oracle from the
// outcome of its cards, its bets and the bank, compares it with
// coup_settled, adds it to delta and notes the transfers the ledger must
// hold for it (ledger.go).
func (s *sim) checkSettlement(t *simTable, c *coupM, ev *eventsv1.CoupSettled, banker string, bank int64, exempt bool, name string, delta map[string]int64) {
	bad := func(format string, args ...any) {
		s.violate("settlement-follows-result", c.id, "t%d %s: "+format, append([]any{t.n, name}, args...)...)
	}
	if c.play == nil {
		return // the cards broke the rules: coup-follows-cards said so
	}
	outcome := c.play.Outcome
	if ev.GetOutcome() != eventOutcome(outcome) {
		bad("settled as %s, the cards make %s", ev.GetOutcome(), outcome)
	}
	if banker == "" {
		bad("settled with no banker")
		return
	}
	amounts := make([]int64, len(c.bets))
	for i, b := range c.bets {
		amounts[i] = b.amount
	}
	hr := t.rules
	st, err := oracle.SettleChemin(bank, amounts, outcome, hr.GetCommissionBp(), roundingOf(hr.GetCommissionRounding()), exempt)
	if err != nil {
		bad("the oracle cannot settle bank %d, bets %v: %v", bank, amounts, err)
		return
	}
	if ev.GetBankerWinnings() != st.Winnings || ev.GetCommission() != st.Commission || ev.GetBankerNet() != st.Net || ev.GetNewBank() != st.NewBank {
		bad("winnings %d, commission %d, net %d, new bank %d; the oracle makes %d, %d, %d, %d (bank %d, bets %v, %s, %d bp %s, exempt %t)",
			ev.GetBankerWinnings(), ev.GetCommission(), ev.GetBankerNet(), ev.GetNewBank(),
			st.Winnings, st.Commission, st.Net, st.NewBank, bank, amounts, outcome, hr.GetCommissionBp(), hr.GetCommissionRounding(), exempt)
	}
	delta[banker] += st.Net
	delta["house"] += st.Commission
	want := s.wantTransfers(t, c.id)
	for i, b := range c.bets {
		delta[b.player] += st.Bets[i]
		switch {
		case st.Bets[i] < 0: // CF-BANK-WINS
			want.add("player:"+b.player, "player:"+banker, "bet_lost", -st.Bets[i])
		case st.Bets[i] > 0: // CF-BANK-LOSES
			want.add("player:"+banker, "player:"+b.player, "bet_won", st.Bets[i])
		}
	}
	want.add("player:"+banker, "house:commission", "commission", st.Commission)
}

// checkInterrupted checks, at rest, that every coup the table interrupted
// left nobody worse off: no transfer of the ledger refers to it (no bet
// lost, no bank paid, no commission: its money went back whole), and each
// of its punters and its banker has exactly his live stakes held (the
// bets' holds released; the bank's still backs the bank the banker kept,
// until it ends).
func (s *sim) checkInterrupted(interrupts []interruptM) error {
	if len(interrupts) == 0 {
		return nil
	}
	expected, _, skip, ok := s.atStake()
	if !ok {
		return nil
	}
	refs := map[string]*simTable{}
	for _, in := range interrupts {
		refs[in.c.id] = in.t
	}
	// The statements of every player of a table with an interrupted coup,
	// and the house's.
	accounts := map[string]bool{"house:commission": true}
	for _, in := range interrupts {
		for _, p := range in.t.players {
			accounts["player:"+p] = true
		}
	}
	ids := make([]string, 0, len(accounts))
	for a := range accounts {
		ids = append(ids, a)
	}
	sort.Strings(ids)
	for _, a := range ids {
		trs, err := s.statement(a)
		if err != nil {
			return err
		}
		for _, tr := range trs {
			for id, t := range refs {
				if strings.Contains(tr.GetReference(), id) {
					s.violate("coup-interrupted", id+"/"+tr.GetTransferId(), "t%d: interrupted %s moved money: transfer %s of %d (%s, %s -> %s)",
						t.n, s.coupName(t, id), tr.GetTransferId(), tr.GetAmount(), tr.GetReason(), tr.GetDebitAccountId(), tr.GetCreditAccountId())
				}
			}
		}
	}
	for _, in := range interrupts {
		players := []string{}
		for _, b := range in.c.bets {
			players = append(players, b.player)
		}
		if in.c.banker != "" {
			players = append(players, in.c.banker)
		}
		for _, p := range players {
			if skip[p] {
				continue
			}
			_, held, err := s.account("player:" + p)
			if err != nil {
				return err
			}
			if held != expected[p] {
				s.violate("coup-interrupted", in.c.id+"/"+p, "t%d: at rest %s, of interrupted %s, has %d held; his live bank, bets and bids are %d",
					in.t.n, p, s.coupName(in.t, in.c.id), held, expected[p])
			}
		}
	}
	return nil
}

// statement is every transfer of an account, oldest first.
func (s *sim) statement(account string) ([]*walletv1.Transfer, error) {
	var out []*walletv1.Transfer
	for token := ""; ; {
		ctx, cancel := s.as("auditor")
		resp, err := s.cl.wallets.ListStatement(ctx, &walletv1.ListStatementRequest{AccountId: account, PageSize: 1000, PageToken: token})
		cancel()
		if status.Code(err) == codes.NotFound {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("sim: statement of %s: %w", account, err)
		}
		for _, e := range resp.GetEntries() {
			out = append(out, e.GetTransfer())
		}
		if token = resp.GetNextPageToken(); token == "" {
			return out, nil
		}
	}
}
