package sim

import (
	"fmt"
	"slices"
	"sort"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// The table's order, from its events: who may act when, by RULES.md and
// the readings of docs/walkthroughs/chemin-de-fer.md ("Rules and choices"), followed by a model of its
// own, not the table's code. A chemin de fer table's events say each move
// and who made it; the model keeps the seats (numbers in joining order),
// the gallery, the banker and the bank, the coup's betting order and
// turn, its bets, the banco suivi holder, and who the bank is offered to,
// and checks:
//
//   - bet-order (CF-BET-ORDER, CF-GALLERY): a coup's punters bet in turn
//     from the banker's right (house rule betting_direction: the next
//     higher seat number, wrapping; left: lower), the seated players
//     first, then the gallery in joining order; each bet_placed,
//     bet_declined (and turn_timed_out of a bet) is by the first punter
//     round from the banker who has not acted; a bet leaves uncovered
//     what the bank at stake (CF-BANK-LIMIT) less the bets leaves; the
//     betting closes (the deal, or the banker's raise) only once the
//     bank is covered, banco is called or everyone has had his turn,
//     and a round with no bet opens again (betting_reopened) only then;
//   - banco-priority (CF-BANCO-PRIORITY, CF-BANCO): banco is called in
//     one's turn, except by the banco suivi holder (the punter whose
//     banco the bank beat in the coup before, against the same banker),
//     out of turn until the coup's first bet; when another calls banco in
//     his turn the holder is asked first (he takes it over, or lets it
//     stand) and nobody else acts meanwhile; the suivi lapses with the
//     first bet, his declining, his leaving, a new banker;
//   - bank-order (CF-FIRST-BANKER, CF-HOLD, CF-LOSE, CF-PASS): the first
//     bank offered to seat 1 (acceptance), any seat (lot), or auctioned;
//     after a win or a stand-off the banker holds with the bank plus his
//     net (bank_changed held, the new bank of coup_settled); after a loss
//     he loses it (bank_changed lost) and it is offered in turn from the
//     next seat, never auctioned; a pass only between coups, offered in
//     turn from the next seat, or (pass_mode auction) opened to anyone at
//     the bank just held; an offer declined or timed out goes to the next
//     seat in turn; the bank is taken only by the player it is offered
//     to, by another than the passer at the bank just held, or by the
//     auction's highest bid;
//   - hand-holder (CF-HAND-HOLDER): a decision of the player's hand whose
//     time ran out was the largest bet's (the earlier on equal bets; the
//     banco caller's), the banker's hand's the banker's.
//
// At rest the model's turn, banker, offer and banco suivi are the table's
// view's.
type orderModel struct {
	s   *sim
	t   *simTable
	off bool // the events are incomplete: the model would only drift

	seats   map[string]int32 // player -> seat number
	gallery []string
	waiting bool // fewer than two seated, no bank: the first banker is due at two

	banker string
	bank   int64
	// The offer: offered (a player) or an open offer of openAmount by
	// passer; auction, with its highest bid; next is who the next offer
	// goes after ("" with first: the first banker's rule).
	offered          string
	openAmount       int64
	wantOpen         int64 // the open offer due after a pass (pass_mode auction)
	passer           string
	auction          bool
	bidder           string
	bid              int64
	next             string
	first, expectOff bool
	// settled is the last coup_settled, until its bank_changed.
	settled *eventsv1.CoupSettled

	// The coup being bet: order and turn, its bets, the bank at stake;
	// open while the punters may act; asked: the banco suivi holder asked
	// to take over another's banco; reopen: a round with no bet is over.
	betting bool
	coup    string
	order   []string
	turn    int
	bets    []betM
	stake   int64
	banco   bool
	asked   string
	reopen  bool
	suivi   string
	// leftSeat: a seated player just left; whether he went to the gallery
	// (JoinGallery) or away (LeaveTable) shows in the next event.
	leftSeat string
	// evs are the table's events, following the index of the one after
	// ev.
	evs       []*eventsv1.TableEvent
	following int
	// timedOut: the player whose decision just timed out; betTimedOut:
	// whose betting turn; suiviTimedOut: a holder whose banco suivi ended
	// with his betting turn's time (for the diagnosis).
	timedOut, betTimedOut, suiviTimedOut string
	ev                                   *eventsv1.TableEvent
}

// newOrderModel is the order model of table t, whose events evs are;
// off unless they are the whole history, 1..n.
func newOrderModel(s *sim, t *simTable, evs []*eventsv1.TableEvent) *orderModel {
	m := &orderModel{s: s, t: t, seats: map[string]int32{}, waiting: true, evs: evs}
	for i, ev := range evs {
		if ev.GetSequence() != uint64(i+1) {
			m.off = true
		}
	}
	return m
}

// violate reports a broken order invariant once per table, coup and
// invariant.
func (m *orderModel) violate(invariant, format string, args ...any) {
	key := fmt.Sprintf("t%d/%s/%s", m.t.n, m.ev.GetCoupId(), invariant)
	if m.ev.GetCoupId() == "" {
		key = fmt.Sprintf("t%d/%d/%s", m.t.n, m.ev.GetSequence(), invariant)
	}
	m.s.violate(invariant, key, "t%d event %d (%s): "+format, append([]any{m.t.n, m.ev.GetSequence(), kindOf(m.ev)}, args...)...)
}

// around is the seated players in turn after `after` (CF-BET-ORDER's
// direction, the reading of "Rules and choices": right is the next higher seat number,
// wrapping), after himself last; ok false when after is not seated.
func (m *orderModel) around(after string) (out []string, ok bool) {
	type seat struct {
		p string
		n int32
	}
	var seats []seat
	for p, n := range m.seats {
		seats = append(seats, seat{p, n})
	}
	sort.Slice(seats, func(i, j int) bool { return seats[i].n < seats[j].n })
	if m.t.rules.GetBettingDirection() == tablev1.BettingDirection_BETTING_DIRECTION_LEFT {
		slices.Reverse(seats)
	}
	at := -1
	for i, st := range seats {
		if st.p == after {
			at = i
		}
	}
	for i := range seats {
		out = append(out, seats[(at+1+i)%len(seats)].p)
	}
	return out, at >= 0
}

// bettingOrder is a new round's order: the seated punters from the
// banker's right, then the gallery in joining order.
func (m *orderModel) bettingOrder() []string {
	var out []string
	ar, _ := m.around(m.banker)
	for _, p := range ar {
		if p != m.banker {
			out = append(out, p)
		}
	}
	return append(out, m.gallery...)
}

// newCoup opens the betting of the banker's next coup.
func (m *orderModel) newCoup() {
	m.betting, m.coup, m.turn, m.bets, m.banco, m.asked, m.reopen = true, "", 0, nil, false, "", false
	m.order = m.bettingOrder()
	m.stake = m.bank
	if hl := m.t.rules.GetHouseLimit(); hl > 0 && m.stake > hl {
		m.stake = hl // CF-BANK-LIMIT
	}
}

func (m *orderModel) open() bool { return m.betting && !m.reopen }

func (m *orderModel) covered() int64 {
	var n int64
	for _, b := range m.bets {
		n += b.amount
	}
	return n
}

// turnPlayer is whose turn it is in the betting, "" for nobody.
func (m *orderModel) turnPlayer() string {
	if m.asked != "" {
		return m.asked
	}
	if m.open() && m.turn < len(m.order) {
		return m.order[m.turn]
	}
	return ""
}

// closes: the betting is over once the bank is covered, banco is called
// or every punter has had his turn (CF-BET-ORDER); with no bet a new
// round is due.
func (m *orderModel) closes() {
	if !m.open() || m.asked != "" {
		return
	}
	if m.covered() < m.stake && !m.banco && m.turn < len(m.order) {
		return
	}
	if len(m.bets) == 0 {
		m.reopen = true
		return
	}
	m.betting = false
}

// dropFromOrder takes a player out of the betting order, the turn
// staying with the same next punter.
func (m *orderModel) dropFromOrder(p string) {
	if !m.open() {
		return
	}
	if i := slices.Index(m.order, p); i >= 0 {
		m.order = slices.Delete(m.order, i, i+1)
		if i < m.turn {
			m.turn--
		}
	}
}

// inTurn checks that p acts in his betting turn, and resynchronises on
// him when he does not (so that one fault is reported once).
func (m *orderModel) inTurn(p, what string) {
	switch want := m.turnPlayer(); {
	case !m.betting || m.reopen:
		m.violate("bet-order", "%s %s with the betting closed (%s)", p, what, m.brief())
	case want != p:
		m.violate("bet-order", "%s %s, but it is %q's turn (%s)", p, what, want, m.brief())
		if i := slices.Index(m.order, p); i >= 0 {
			m.turn = i
		}
	}
}

func (m *orderModel) brief() string {
	return fmt.Sprintf("banker %s, order %v, turn %d, bets %v, stake %d, suivi %q", m.banker, m.order, m.turn, m.bets, m.stake, m.suivi)
}

// suiviValid: the banco suivi holder is at the table (seated or in the
// gallery).
func (m *orderModel) suiviValid() bool {
	_, seated := m.seats[m.suivi]
	return m.suivi != "" && (seated || slices.Contains(m.gallery, m.suivi))
}

// expect notes the next offer due: in turn after `after`, or the first
// banker's (first).
func (m *orderModel) expect(after string, first bool) {
	m.next, m.first, m.expectOff = after, first, true
}

// event folds one event of the table into the model, checking it.
func (m *orderModel) event(ev *eventsv1.TableEvent) {
	m.following++
	if m.off {
		return
	}
	m.ev = ev
	if p := m.leftSeat; p != "" {
		m.leftSeat = ""
		if ev.GetGalleryJoined().GetPlayerId() != p {
			m.left(p) // LeaveTable, not JoinGallery
		}
	}
	if m.timedOut != "" && ev.GetDrawDecided() == nil {
		m.timedOut = ""
	}
	switch p := ev.GetPayload().(type) {
	case *eventsv1.TableEvent_PlayerSeated:
		pl := p.PlayerSeated.GetPlayerId()
		if i := slices.Index(m.gallery, pl); i >= 0 {
			m.gallery = slices.Delete(m.gallery, i, i+1)
			m.dropFromOrder(pl)
			m.closes()
		}
		m.seats[pl] = p.PlayerSeated.GetSeatNumber()
		if m.waiting && len(m.seats) >= 2 {
			m.waiting = false
			m.expect("", true)
		}
	case *eventsv1.TableEvent_PlayerLeft:
		pl := p.PlayerLeft.GetPlayerId()
		if p.PlayerLeft.GetSeatNumber() == 0 { // from the gallery
			if i := slices.Index(m.gallery, pl); i >= 0 {
				m.gallery = slices.Delete(m.gallery, i, i+1)
			}
			m.left(pl)
			return
		}
		delete(m.seats, pl)
		m.dropFromOrder(pl)
		if m.offered == pl {
			m.offered = ""
		}
		m.leftSeat = pl
		if len(m.seats) < 2 {
			// The game stops: no bank, no offer, no coup (the bank and the
			// bets go back).
			m.waiting, m.betting, m.expectOff, m.offered, m.openAmount, m.wantOpen, m.auction = true, false, false, "", 0, 0, false
		}
	case *eventsv1.TableEvent_GalleryJoined:
		pl := p.GalleryJoined.GetPlayerId()
		m.gallery = append(m.gallery, pl)
		if m.open() {
			m.order = append(m.order, pl) // CF-GALLERY: after the seated players
		}
	case *eventsv1.TableEvent_BankOffered:
		m.bankOffered(p.BankOffered)
	case *eventsv1.TableEvent_BankAuctionOpened:
		if !(m.expectOff && m.first && m.t.rules.GetFirstBanker() == tablev1.FirstBanker_FIRST_BANKER_AUCTION) && !m.auction {
			m.violate("bank-order", "the bank is auctioned where it should be offered (after %q; CF-LOSE and CF-PASS offer it in turn)", m.next)
		}
		m.expectOff, m.auction, m.bidder, m.bid, m.offered, m.openAmount = false, true, "", 0, "", 0
	case *eventsv1.TableEvent_BankBid:
		if p.BankBid.GetAmount() > 0 {
			m.bidder, m.bid = p.BankBid.GetPlayerId(), p.BankBid.GetAmount()
		}
	case *eventsv1.TableEvent_BankChanged:
		m.bankChanged(p.BankChanged)
	case *eventsv1.TableEvent_TurnTimedOut:
		m.turnTimedOut(p.TurnTimedOut)
	case *eventsv1.TableEvent_BetPlaced:
		m.bind()
		b := p.BetPlaced
		if m.asked != "" {
			m.violate("banco-priority", "%s bet while the banco suivi holder %s was asked to take over a banco", b.GetPlayerId(), m.asked)
		} else {
			m.inTurn(b.GetPlayerId(), "bet")
		}
		m.bets = append(m.bets, betM{player: b.GetPlayerId(), amount: b.GetAmount()})
		if want := max(0, m.stake-m.covered()); b.GetUncovered() != want {
			m.violate("bet-order", "%s's bet of %d leaves %d uncovered; the bank at stake %d less the bets %v leaves %d",
				b.GetPlayerId(), b.GetAmount(), b.GetUncovered(), m.stake, m.bets, want)
		}
		m.turn++
		m.suivi = "" // the first bet ends banco suivi
		m.closes()
	case *eventsv1.TableEvent_BetDeclined:
		m.bind()
		pl := p.BetDeclined.GetPlayerId()
		if m.asked != "" {
			if pl != m.asked {
				m.violate("banco-priority", "%s declined while the banco suivi holder %s was asked", pl, m.asked)
			}
			m.asked, m.suivi, m.betting = "", "", false // the banco stands
			return
		}
		m.inTurn(pl, "declined")
		m.turn++
		timedOut := m.betTimedOut == pl
		m.betTimedOut = ""
		// A punter who declines, or whose time runs out (he passes: the
		// same bet_declined), does not bet this coup (DeclineBet): his
		// banco suivi ends. Avoid.SuiviTimeout: the table's behaviour,
		// a timed-out holder keeps it.
		if m.suivi == pl && !(timedOut && m.s.cfg.Avoid.SuiviTimeout) {
			m.suivi = ""
			if timedOut {
				m.suiviTimedOut = pl
			}
		}
		m.closes()
	case *eventsv1.TableEvent_BancoCalled:
		m.bind()
		m.bancoCalled(p.BancoCalled)
	case *eventsv1.TableEvent_BettingReopened:
		m.bind()
		m.reopened()
	case *eventsv1.TableEvent_BetReduced:
		m.closedBy("a bet cut back (CF-BANK-RAISE)")
		for i := len(m.bets) - 1; i >= 0; i-- {
			if m.bets[i].player == p.BetReduced.GetPlayerId() {
				if p.BetReduced.GetAmount() == 0 {
					m.bets = slices.Delete(m.bets, i, i+1)
				} else {
					m.bets[i].amount = p.BetReduced.GetAmount()
				}
				break
			}
		}
	case *eventsv1.TableEvent_CardDealt:
		m.closedBy("a card dealt")
	case *eventsv1.TableEvent_DrawDecided:
		if m.timedOut != "" {
			want := m.banker
			if p.DrawDecided.GetHand() == eventsv1.Hand_HAND_PLAYER {
				want = m.holder()
			}
			if m.timedOut != want {
				m.violate("hand-holder", "the %s hand's decision timed out as %s's; CF-HAND-HOLDER makes it %s's (bets %v)", p.DrawDecided.GetHand(), m.timedOut, want, m.bets)
			}
			m.timedOut = ""
		}
	case *eventsv1.TableEvent_CoupSettled:
		m.settled = p.CoupSettled
		m.betting = false
		m.suivi, m.suiviTimedOut = "", ""
		if m.banco && len(m.bets) == 1 && p.CoupSettled.GetOutcome() == eventsv1.Outcome_OUTCOME_BANK_WINS {
			m.suivi = m.bets[0].player // CF-BANCO-PRIORITY: his banco lost
		}
	case *eventsv1.TableEvent_CoupVoided:
		m.betting = false
		if m.banker != "" && len(m.seats) >= 2 {
			m.newCoup() // CF-ERROR: the banker keeps the bank; the next coup's betting opens
		}
	case *eventsv1.TableEvent_TableClosed:
		m.off = true
	}
}

// reopened: a round of betting with no bet is over and a new one opens,
// in the order of the punters at the table now (CF-BET-ORDER).
func (m *orderModel) reopened() {
	if !m.reopen {
		p := m.turnPlayer()
		var next *eventsv1.TableEvent
		if m.following < len(m.evs) {
			next = m.evs[m.following]
		}
		if i := slices.Index(m.gallery, p); i >= 0 && next.GetPlayerSeated().GetPlayerId() == p {
			// A gallery punter took a seat in his own turn: his seat ended
			// the round (betting_reopened) before its player_seated, and
			// the new round, ordered while he was neither in the gallery
			// nor seated, leaves him out though he sits at the table.
			if !m.s.cfg.Avoid.SeatInTurn {
				m.violate("bet-order", "%s took a seat from the gallery in his own betting turn: betting_reopened comes before his player_seated, and the new round leaves him out though he is seated (failure 9, switch seat-in-turn; %s)", p, m.brief())
			}
			m.gallery = slices.Delete(m.gallery, i, i+1) // as the table does, so that what follows is checked
		} else {
			m.violate("bet-order", "betting reopened before the round was over (%s)", m.brief())
		}
	}
	m.reopen, m.betting, m.turn, m.bets = false, true, 0, nil
	m.order = m.bettingOrder()
}

// bind notes the coup being bet from its first betting event.
func (m *orderModel) bind() {
	if m.coup == "" {
		m.coup = m.ev.GetCoupId()
	}
}

// left: p left the table (LeaveTable): his banco suivi lapses and the
// betting may be over without him.
func (m *orderModel) left(p string) {
	m.dropFromOrder(p)
	if m.suivi == p {
		m.suivi = ""
	}
	m.closes()
}

// closedBy: the betting must be over when something of the deal happens.
func (m *orderModel) closedBy(what string) {
	switch {
	case m.asked != "":
		m.violate("banco-priority", "%s before the banco suivi holder %s was asked whether he takes over %s's banco", what, m.asked, m.bets[0].player)
	case m.open():
		m.violate("bet-order", "%s with the betting open: %q still had his turn (%s)", what, m.turnPlayer(), m.brief())
	}
	m.betting, m.asked = false, ""
}

// holder is CF-HAND-HOLDER: the largest bet's punter, the earlier on
// equal bets (the bets are in betting order).
func (m *orderModel) holder() string {
	var best betM
	for _, b := range m.bets {
		if b.amount > best.amount {
			best = b
		}
	}
	return best.player
}

func (m *orderModel) bancoCalled(b *eventsv1.BancoCalled) {
	p := b.GetPlayerId()
	switch {
	case m.asked != "":
		// The banco suivi holder takes another's banco over.
		if p != m.asked {
			m.violate("banco-priority", "%s called banco while the banco suivi holder %s was asked", p, m.asked)
		}
		m.asked = ""
	case m.open() && p == m.suivi && m.suiviValid() && len(m.bets) == 0:
		// Banco suivi: out of turn, until the first bet.
	default:
		if m.turnPlayer() != p && p == m.suivi && len(m.bets) > 0 {
			m.violate("banco-priority", "%s called banco out of turn after the coup's first bet: his banco suivi had lapsed (%s)", p, m.brief())
		} else if m.turnPlayer() != p && m.open() && p == m.suiviTimedOut {
			m.violate("banco-priority", "%s called banco out of turn: his banco suivi ended when his betting turn timed out (a bet_declined, as when he declines; switch suivi-timeout; %s)", p, m.brief())
		} else if m.turnPlayer() != p && m.open() {
			m.violate("banco-priority", "%s called banco out of turn and holds no banco suivi (%s)", p, m.brief())
		} else {
			m.inTurn(p, "called banco")
		}
		if su := m.suivi; su != "" && su != p && m.suiviValid() {
			// The holder is asked first whether he takes it over.
			m.bets, m.banco, m.asked = []betM{{player: p, amount: b.GetAmount()}}, true, su
			m.checkBancoAmount(b)
			return
		}
	}
	m.checkBancoAmount(b)
	m.bets, m.banco, m.suivi = []betM{{player: p, amount: b.GetAmount()}}, true, ""
	m.betting = false
}

// checkBancoAmount: a banco is the whole bank at stake (CF-BANCO).
func (m *orderModel) checkBancoAmount(b *eventsv1.BancoCalled) {
	if b.GetAmount() != m.stake {
		m.violate("bet-order", "%s's banco is %d; the bank at stake is %d (CF-BANCO)", b.GetPlayerId(), b.GetAmount(), m.stake)
	}
}

func (m *orderModel) turnTimedOut(to *eventsv1.TurnTimedOut) {
	p := to.GetPlayerId()
	switch to.GetTurn() {
	case "bet":
		m.inTurn(p, "timed out on a bet")
		m.betTimedOut = p
	case "banco_suivi":
		if p != m.asked {
			m.violate("banco-priority", "%s timed out as the banco suivi holder asked; %q was asked", p, m.asked)
		}
	case "decision":
		m.timedOut = p
	case "bank_raise":
		if p != m.banker {
			m.violate("bank-order", "the bank's raise timed out as %s's; the banker is %s", p, m.banker)
		}
	case "bank_offer":
		switch {
		case m.openAmount > 0:
			m.expect(m.passer, false) // nobody took the passed bank: offered in turn
		case p != m.offered:
			m.violate("bank-order", "the bank offer timed out as %s's; it was offered to %q", p, m.offered)
		default:
			m.expect(p, false)
		}
		m.offered, m.openAmount = "", 0
	}
}

func (m *orderModel) bankOffered(o *eventsv1.BankOffered) {
	p, amount := o.GetPlayerId(), o.GetAmount()
	if m.banker != "" {
		m.violate("bank-order", "the bank is offered (to %q) while %s holds it", p, m.banker)
	}
	if !m.expectOff && m.offered != "" {
		m.expect(m.offered, false) // the offered player declined
	}
	switch {
	case !m.expectOff:
		m.violate("bank-order", "the bank is offered to %q %d when no offer is due", p, amount)
	case m.wantOpen > 0 || amount > 0:
		if amount != m.wantOpen {
			m.violate("bank-order", "the bank is offered to %q at %d; after a pass (pass_mode %s) an offer open to all at the bank just held, %d, was due (CF-PASS)",
				p, amount, m.t.rules.GetPassMode(), m.wantOpen)
		}
	case m.first:
		switch m.t.rules.GetFirstBanker() {
		case tablev1.FirstBanker_FIRST_BANKER_AUCTION:
			m.violate("bank-order", "the first bank is offered to %s; the house rule says auction", p)
		case tablev1.FirstBanker_FIRST_BANKER_LOT:
			if _, ok := m.seats[p]; !ok {
				m.violate("bank-order", "the first bank is offered by lot to %s, who has no seat", p)
			}
		default:
			if lowestSeat(m.seats) != p {
				m.violate("bank-order", "the first bank is offered to %s; by acceptance it goes to seat 1 first (%s)", p, lowestSeat(m.seats))
			}
		}
	default:
		ar, ok := m.around(m.next)
		if ok && len(ar) > 0 && ar[0] != p {
			m.violate("bank-order", "the bank is offered to %s; in turn after %s it goes to %s (CF-LOSE, CF-PASS)", p, m.next, ar[0])
		}
	}
	m.expectOff, m.first, m.offered, m.openAmount, m.wantOpen = false, false, p, amount, 0
}

func lowestSeat(seats map[string]int32) string {
	best, bestN := "", int32(0)
	for p, n := range seats {
		if best == "" || n < bestN {
			best, bestN = p, n
		}
	}
	return best
}

func (m *orderModel) bankChanged(bc *eventsv1.BankChanged) {
	b := bc.GetBankerPlayerId()
	settled := m.settled
	m.settled = nil
	switch bc.GetReason() {
	case eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED:
		_, seated := m.seats[b]
		switch {
		case m.auction:
			if b != m.bidder || bc.GetBank() != m.bid {
				m.violate("bank-order", "%s took the bank with %d; the auction's highest bid was %s's %d", b, bc.GetBank(), m.bidder, m.bid)
			}
		case m.openAmount > 0:
			if !seated || b == m.passer || bc.GetBank() != m.openAmount {
				m.violate("bank-order", "%s took the passed bank with %d; it was open to the seated players but the passer %s at %d", b, bc.GetBank(), m.passer, m.openAmount)
			}
		case b != m.offered:
			m.violate("bank-order", "%s took the bank; it was offered to %q", b, m.offered)
		}
		m.banker, m.bank, m.suivi = b, bc.GetBank(), "" // banco suivi lapses with a new banker
		m.offered, m.openAmount, m.auction, m.expectOff = "", 0, false, false
		m.newCoup()
	case eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD:
		// CF-HOLD, CF-BANK-SIZE: after a win or a stand-off, the bank plus
		// his net.
		switch {
		case settled == nil:
			m.violate("bank-order", "%s holds the bank with no coup settled", b)
		case settled.GetOutcome() == eventsv1.Outcome_OUTCOME_BANK_LOSES:
			m.violate("bank-order", "%s holds the bank he lost (CF-LOSE)", b)
		case b != m.banker || bc.GetBank() != settled.GetNewBank():
			m.violate("bank-order", "%s holds a bank of %d; %s's bank is %d after the coup (CF-HOLD)", b, bc.GetBank(), m.banker, settled.GetNewBank())
		}
		m.banker, m.bank = b, bc.GetBank()
		m.newCoup()
	case eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST:
		prev := bc.GetPreviousBankerPlayerId()
		if settled == nil || settled.GetOutcome() != eventsv1.Outcome_OUTCOME_BANK_LOSES || prev != m.banker {
			m.violate("bank-order", "%s lost the bank (banker %s) after %v", prev, m.banker, settled.GetOutcome())
		}
		m.banker, m.bank, m.betting = "", 0, false
		m.expect(prev, false) // CF-LOSE: offered in turn, no auction
	case eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED:
		prev := bc.GetPreviousBankerPlayerId()
		if settled != nil {
			m.violate("bank-order", "%s passed the bank with its coup settled but not held or lost", prev)
		}
		if prev != m.banker {
			m.violate("bank-order", "%s passed the bank %s holds", prev, m.banker)
		} else if len(m.seats) >= 2 && (!m.open() || len(m.bets) > 0 || m.asked != "") {
			m.violate("bank-order", "%s passed the bank mid-coup (CF-PASS: between coups, before any bet; %s)", prev, m.brief())
		}
		held := m.bank
		m.banker, m.bank, m.betting = "", 0, false
		if len(m.seats) < 2 {
			m.waiting = true // the game stopped: the bank went back
			return
		}
		if m.t.rules.GetPassMode() == tablev1.PassMode_PASS_MODE_AUCTION {
			m.expect("", false)
			m.wantOpen, m.passer = held, prev // CF-PASS: at the bank just held
			return
		}
		m.expect(prev, false)
	case eventsv1.BankChangeReason_BANK_CHANGE_REASON_RAISED:
		if m.open() || len(m.bets) == 0 || m.covered() <= m.stake {
			m.violate("bet-order", "the bank raised to %d without bets over it (%s)", bc.GetBank(), m.brief())
		}
		m.stake += bc.GetBank() - m.bank
		m.bank = bc.GetBank()
		m.betting = false
	}
	if settled != nil && bc.GetReason() != eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD && bc.GetReason() != eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST {
		m.violate("bank-order", "after coup_settled the bank changed %s; held or lost was due", bc.GetReason())
	}
}

// end compares the model, at rest, with the table's view.
func (m *orderModel) end() {
	if m.leftSeat != "" {
		m.left(m.leftSeat)
		m.leftSeat = ""
	}
	v := m.t.view
	if m.off || v.GetState() == 0 || v.GetState() == stClosed {
		return // not seen, or closed
	}
	m.ev = &eventsv1.TableEvent{Sequence: v.GetEventSequence()}
	if v.GetBankerPlayerId() != m.banker {
		m.violate("bank-order", "at rest the banker is %q; the events make %q", v.GetBankerPlayerId(), m.banker)
	}
	if v.GetState() == stOffering && v.GetOfferedPlayerId() != m.offered {
		m.violate("bank-order", "at rest the bank is offered to %q; the events make %q", v.GetOfferedPlayerId(), m.offered)
	}
	if v.GetState() == stBetting {
		if got := v.GetCoup().GetTurnPlayerId(); got != m.turnPlayer() {
			m.violate("bet-order", "at rest it is %q's turn to bet; the events make it %q's (%s)", got, m.turnPlayer(), m.brief())
		}
		if got := v.GetBancoSuiviPlayerId(); got != m.suivi {
			m.violate("banco-priority", "at rest %q holds banco suivi; the events give it to %q", got, m.suivi)
		}
	}
}
