package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// Table states by number, so that states added later (e.g. CLOSED) are
// handled too.
const (
	stWaiting  = 1
	stOffering = 2
	stBetting  = 3
	stDealing  = 4
	stDecision = 5
	stSettling = 6
	stAuction  = 7
	stRaise    = 8
	stClosed   = 9
	stResult   = 10 // punto banco: the result shown before the next betting
)

// simTable is the driver's book of one table.
type simTable struct {
	n       int // its number in the trace: t1, t2, ...
	id      string
	players []string
	rules   *tablev1.HouseRules // as resolved by table-svc

	view *tablev1.Table // the croupier's view at the last observation; nil: unknown
	// The turn the table waits for, and the service time when it was first
	// seen (fairness of time limits).
	waitKey   string
	waitStart time.Duration
	// stuck counts the steps spent in DEALING or SETTLING with every
	// service up.
	stuck int
	// excess tracks, per player, held money no live bet or bank explains.
	excess map[string]*excessTrack
	// pending are requests the clients will send again.
	pending []*action
	// replaced: the table closed and another took its place.
	replaced bool
	// seated are the seated players at the last observation; seatTime the
	// simulated time each player has spent seated (hourly fees).
	seated   []string
	seatTime map[string]time.Duration
	shoe     string // the shoe id at the last observation
	// pb: a punto banco table's house rules, as resolved (nil: chemin de
	// fer, rules); bq, old: a banque or old-game table's (games.go).
	pb  *tablev1.PuntoBancoRules
	bq  *tablev1.BanqueRules
	old *tablev1.OldBaccaratRules
	// dealCoup is the coup the table was last seen dealing before its
	// result, since dealSince (simulated time, or table-svc's start when
	// later); dealLate counts the retry passes that have run since it
	// could have been interrupted (InterruptAfter).
	dealCoup  string
	dealSince time.Time
	dealLate  int
	// interrupted are the coups seen voided by the table itself.
	interrupted map[string]bool
	// afterKill: table-svc was killed since the table was last seen
	// other than dealing (the wallet may be ahead of its coup).
	afterKill bool
	// closed: the table has been seen closed; closedHealthy counts the
	// steps since with wallet-svc and table-svc up, closedSince the
	// simulated time it was first seen so.
	closed        bool
	closedHealthy int
	closedSince   time.Time
}

// variant is the table's game.
func (t *simTable) variant() tablev1.Variant {
	switch {
	case t.pb != nil:
		return tablev1.Variant_VARIANT_PUNTO_BANCO
	case t.bq != nil:
		return tablev1.Variant_VARIANT_BACCARAT_BANQUE
	case t.old != nil:
		return tablev1.Variant_VARIANT_OLD_BACCARAT
	}
	return tablev1.Variant_VARIANT_CHEMIN_DE_FER
}

// pass lets simulated time pass: the clock moves on (and the service time
// with it while table-svc runs), and every seated player sits longer.
func (s *sim) pass(d time.Duration) {
	s.clock.advance(d, s.cl.isUp(svcTable))
	for _, t := range s.tables {
		for _, p := range t.seated {
			t.seatTime[p] += d
		}
	}
}

type excessTrack struct {
	amount  int64
	since   time.Time
	healthy int // steps since with table-svc and wallet-svc up
}

// action is one request of a client, which may be sent again.
type action struct {
	t    *simTable
	who  string // a player id, or "croupier"
	desc string
	call func(ctx context.Context) (answer, error)
	// amend is the same request_id with another payload (a client that
	// changed its mind before sending again); nil when not applicable.
	amend func() *action
	// again: a request sent before; lostReply: and applied (its reply was
	// lost on the way back), so it must now succeed; first is then its
	// first answer. amended: a request applied whose reply was lost, sent
	// again under its request_id with another payload (to be refused).
	again, lostReply, amended bool
	first                     *firstAnswer
	// coup is the coup in play when the request was first sent.
	coup string
	// move: the request takes a seat, leaves it or joins the gallery.
	move bool
	// voids: the coup a VoidCoup names.
	voids string
	// check, when not nil, checks a first try's answer against the table
	// before it (CloseTable's).
	check func(before, after *tablev1.Table, err error)
}

func (s *sim) as(who string) (context.Context, context.CancelFunc) {
	ctx, cancel := s.ctx()
	switch who {
	case "croupier":
		return auth.Outgoing(ctx, auth.Caller{Subject: "croupier-1", Role: auth.RoleCroupier}), cancel
	case "operator":
		return auth.Outgoing(ctx, auth.Caller{Subject: "operator-1", Role: auth.RoleOperator}), cancel
	case "auditor":
		return auth.Outgoing(ctx, auth.Caller{Subject: "auditor-1", Role: auth.RoleAuditor}), cancel
	}
	return auth.Outgoing(ctx, auth.Caller{Subject: who, Role: auth.RolePlayer}), cancel
}

// setup funds the players and opens the tables.
func (s *sim) setup() error {
	for range s.cfg.Tables {
		if err := s.openTable(tablev1.Variant_VARIANT_CHEMIN_DE_FER); err != nil {
			return err
		}
	}
	for _, g := range []struct {
		n int
		v tablev1.Variant
	}{{s.cfg.PuntoBanco, tablev1.Variant_VARIANT_PUNTO_BANCO}, {s.cfg.Banque, tablev1.Variant_VARIANT_BACCARAT_BANQUE},
		{s.cfg.Old, tablev1.Variant_VARIANT_OLD_BACCARAT}} {
		for range max(0, g.n) {
			if err := s.openTable(g.v); err != nil {
				return err
			}
		}
	}
	s.observe()
	return nil
}

// randomRules draws a table's house rules: a certification shoe with
// real money (so that the cards follow from the seed), and every option
// the table offers, drawn.
func (s *sim) randomRules() *tablev1.HouseRules {
	r := s.rng
	hr := &tablev1.HouseRules{
		Decks: 8, MinimumBank: 100, MaxSeats: int32(3 + r.IntN(3)),
		CommissionRounding:     tablev1.CommissionRounding(1 + r.IntN(3)),
		BankerOption_3Vs_9:     proto.Bool(r.IntN(2) == 0),
		BankerOption_5Vs_4:     proto.Bool(r.IntN(2) == 0),
		BancoFreePlay:          r.IntN(4) == 0,
		BettingDirection:       tablev1.BettingDirection(1 + r.IntN(2)),
		FirstBanker:            tablev1.FirstBanker_FIRST_BANKER_ACCEPTANCE,
		PassMode:               tablev1.PassMode(1 + r.IntN(2)),
		FirstCoupExempt:        r.IntN(4) == 0,
		BetTimeLimitMs:         int32(5000 * (1 + r.IntN(6))),
		DecisionTimeLimitMs:    int32(5000 * (1 + r.IntN(6))),
		BankOfferTimeLimitMs:   int32(5000 * (1 + r.IntN(6))),
		CertificationRealMoney: true,
	}
	if r.IntN(3) == 0 {
		hr.FirstBanker = tablev1.FirstBanker_FIRST_BANKER_AUCTION
	}
	if r.IntN(4) == 0 {
		hr.HouseLimit = int64(1000 + 500*r.IntN(4))
	}
	fee := r.IntN(5) == 0
	feePerHour := int64(60 * (1 + r.IntN(20)))
	commission := []int64{500, 500, 250, 1000, 0}[r.IntN(5)]
	if s.cfg.Avoid.BancoFreePlay {
		hr.BancoFreePlay = false
	}
	if fee && !s.cfg.Avoid.HourlyFee {
		hr.HourlyFee = feePerHour
	} else {
		hr.CommissionBp = proto.Int64(commission)
	}
	return hr
}

// shoeOrder is a full 8-deck shoe (2 decks with ShortShoes) shuffled by
// the seed.
func (s *sim) shoeOrder() []string {
	decks := 8
	if s.cfg.ShortShoes {
		decks = 2
	}
	return s.decksOrder(decks)
}

// decksOrder is a shoe of decks full decks shuffled by the seed.
func (s *sim) decksOrder(decks int) []string {
	var cards []string
	for range decks {
		for _, suit := range "CDHS" {
			for _, rank := range "A23456789TJQK" {
				cards = append(cards, string(rank)+string(suit))
			}
		}
	}
	s.rng.Shuffle(len(cards), func(i, j int) { cards[i], cards[j] = cards[j], cards[i] })
	return cards
}

// openTable funds a new pool of players and opens a table for them on a
// prepared shoe. Creating the table goes through table-svc's faulty
// transport, so it is sent again (same request) until it succeeds.
func (s *sim) openTable(variant tablev1.Variant) error {
	n := len(s.tables) + 1
	t := &simTable{n: n, excess: map[string]*excessTrack{}, seatTime: map[string]time.Duration{}}
	for i := range s.cfg.Players {
		p := fmt.Sprintf("t%dp%d", n, i+1)
		t.players = append(t.players, p)
		s.players[p] = &simPlayer{id: p}
		if err := s.deposit(p, int64(2000+500*s.rng.IntN(13))); err != nil {
			return err
		}
	}
	req := &tablev1.CreateTableRequest{RequestId: s.nextID(), Variant: variant}
	var order []string
	switch variant {
	case tablev1.Variant_VARIANT_PUNTO_BANCO:
		if err := s.fundHouseBank(); err != nil {
			return err
		}
		req.PuntoBancoRules = s.randomPBRules()
	case tablev1.Variant_VARIANT_BACCARAT_BANQUE:
		req.BanqueRules = s.randomBanqueRules()
		if req.BanqueRules.GetHouseBank() {
			if err := s.fundHouseBank(); err != nil {
				return err
			}
		}
		order = s.decksOrder(banqueDecks)
	case tablev1.Variant_VARIANT_OLD_BACCARAT:
		req.OldBaccaratRules = s.randomOldRules()
		order = s.decksOrder(oldDecks)
	default:
		req.Variant, req.HouseRules = tablev1.Variant_VARIANT_UNSPECIFIED, s.randomRules()
	}
	if order == nil {
		order = s.shoeOrder()
	}
	ctx, cancel := s.as("operator")
	defer cancel()
	sh, err := s.cl.shoes.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: s.nextID(), Cards: order, CutCardFromEnd: 14})
	if err != nil {
		return fmt.Errorf("sim: shoe of table %d: %w", n, err)
	}
	req.ShoeId = sh.GetShoe().GetShoeId()
	for attempt := 1; ; attempt++ {
		var resp *tablev1.CreateTableResponse
		if s.killable(func() { resp, err = s.cl.tables.CreateTable(ctx, req) }) {
			err = errKilled
		}
		if err == nil {
			tb := resp.GetTable()
			t.id, t.rules, t.pb, t.bq, t.old = tb.GetTableId(), tb.GetHouseRules(), tb.GetPuntoBancoRules(), tb.GetBanqueRules(), tb.GetOldBaccaratRules()
			break
		}
		if attempt == 20 || !indefinite(err) {
			return fmt.Errorf("sim: create table %d: %w", n, err)
		}
	}
	s.tables = append(s.tables, t)
	brief := rulesBrief(t.rules)
	switch {
	case t.pb != nil:
		brief = pbRulesBrief(t.pb)
	case t.bq != nil:
		brief = banqueRulesBrief(t.bq)
	case t.old != nil:
		brief = oldRulesBrief(t.old)
	}
	s.tracef("step %d: t%d opened: %s", s.step, n, brief)
	return nil
}

func rulesBrief(hr *tablev1.HouseRules) string {
	return fmt.Sprintf("seats %d, first banker %s, pass %s, commission %dbp %s, hourly fee %d, exempt %t, free play %t, options 3v9 %t 5v4 %t, limit %d, turns %d/%d/%d ms, %s",
		hr.GetMaxSeats(), hr.GetFirstBanker(), hr.GetPassMode(), hr.GetCommissionBp(), hr.GetCommissionRounding(), hr.GetHourlyFee(),
		hr.GetFirstCoupExempt(), hr.GetBancoFreePlay(), hr.GetBankerOption_3Vs_9(), hr.GetBankerOption_5Vs_4(), hr.GetHouseLimit(),
		hr.GetBetTimeLimitMs(), hr.GetDecisionTimeLimitMs(), hr.GetBankOfferTimeLimitMs(), hr.GetBettingDirection())
}

func (s *sim) deposit(p string, amount int64) error {
	ctx, cancel := s.as("operator")
	defer cancel()
	if _, err := s.cl.wallets.Deposit(ctx, &walletv1.DepositRequest{RequestId: s.nextID(), AccountId: "player:" + p, Amount: amount}); err != nil {
		return fmt.Errorf("sim: deposit: %w", err)
	}
	s.players[p].deposited += amount
	s.deposited += amount
	return nil
}

// observe reads every table as a croupier sees it, and notes when a new
// turn starts.
func (s *sim) observe() {
	up := s.cl.isUp(svcTable)
	// The reads at once (they change nothing), what follows in order.
	resps := make([]*tablev1.GetTableResponse, len(s.tables))
	errs := make([]error, len(s.tables))
	if up {
		parallel(len(s.tables), func(i int) {
			ctx, cancel := s.as("croupier")
			defer cancel()
			resps[i], errs[i] = s.cl.tables.GetTable(ctx, &tablev1.GetTableRequest{TableId: s.tables[i].id})
		})
	}
	for i, t := range s.tables {
		t.view = nil
		if !up {
			continue
		}
		resp, err := resps[i], errs[i]
		if err != nil {
			s.violate("read-table", fmt.Sprint(t.n), "t%d: GetTable: %v", t.n, err)
			continue
		}
		t.view = resp.GetTable()
		t.seated = seatedOf(t.view)
		if shoe := t.view.GetShoeId(); shoe != t.shoe {
			if t.shoe != "" {
				s.res.ShoeChanges++
				s.tracef("step %d: t%d deals from a new shoe", s.step, t.n)
			}
			t.shoe = shoe
		}
		if key := waitKeyOf(t.view); key != t.waitKey {
			t.waitKey, t.waitStart = key, s.clock.up()
		}
		s.noteDealing(t)
		if t.view.GetState() != stDealing {
			t.afterKill = false
		}
		if t.view.GetState() == stClosed && !t.closed {
			t.closed, t.closedSince = true, s.clock.Now()
			s.res.TablesClosed++
			s.tracef("step %d: t%d is closed", s.step, t.n)
		}
	}
}

// noteDealing notes when the table was first seen dealing its coup before
// the result, and the coups it interrupted (voided itself: its last coup
// voided with an "interrupted" reason).
func (s *sim) noteDealing(t *simTable) {
	v := t.view
	// A coup dealing that waits for a turn (the old game's banker
	// announcing his move of top cards, OLD-CUT, on a time limit) is not
	// stuck: its dealing starts when the turn ends.
	if cp := v.GetCoup(); v.GetState() == stDealing && cp.GetOutcome() == tablev1.Outcome_OUTCOME_UNSPECIFIED && v.GetTurnDeadline() == nil {
		if cp.GetCoupId() != t.dealCoup {
			t.dealCoup, t.dealSince, t.dealLate = cp.GetCoupId(), s.clock.Now(), 0
		}
	} else {
		t.dealCoup = ""
	}
	if last := v.GetLastCoup(); last.GetVoided() && interruptReason(last.GetVoidReason()) && !t.interrupted[last.GetCoupId()] {
		if t.interrupted == nil {
			t.interrupted = map[string]bool{}
		}
		t.interrupted[last.GetCoupId()] = true
		s.tracef("step %d: t%d coup %d interrupted: voided by the table, %d bet(s) returned", s.step, t.n, last.GetNumber(), len(last.GetBets()))
	}
}

// interruptReason reports whether a void's reason is table-svc's own for
// an interrupted coup.
func interruptReason(reason string) bool { return strings.HasPrefix(reason, "interrupted") }

// snap is a table as observed at one moment.
type snap struct {
	t         *simTable
	view      *tablev1.Table
	waitKey   string
	waitStart time.Duration
}

func (s *sim) views() []snap {
	out := make([]snap, 0, len(s.tables))
	for _, t := range s.tables {
		out = append(out, snap{t: t, view: t.view, waitKey: t.waitKey, waitStart: t.waitStart})
	}
	return out
}

// waitKeyOf names the turn a table waits for ("" when it waits for
// nobody): a new key is a new turn.
func waitKeyOf(v *tablev1.Table) string {
	if v.GetTurnDeadline() == nil {
		return ""
	}
	cp := v.GetCoup()
	return fmt.Sprintf("%d|%s|%s|%s|%s|%s|%d|%d", v.GetState(), cp.GetCoupId(), cp.GetTurnPlayerId(), cp.GetDecisionPlayerId(),
		v.GetOfferedPlayerId(), v.GetHighestBidderPlayerId(), v.GetHighestBid(), v.GetTurnDeadline().AsTime().UnixNano())
}

// brief is a table in a few words, for the trace.
func brief(v *tablev1.Table) string {
	if v == nil {
		return "?"
	}
	out := stateName(v.GetState())
	if cp := v.GetCoup(); cp != nil {
		out += fmt.Sprintf(" coup %d", cp.GetNumber())
	}
	if v.GetBankerPlayerId() != "" {
		out += fmt.Sprintf(" banker %s %d", v.GetBankerPlayerId(), v.GetBank())
	}
	if cp := v.GetCoup(); cp != nil {
		if cp.GetTurnPlayerId() != "" {
			out += " turn " + cp.GetTurnPlayerId()
		}
		if len(cp.GetBets()) > 0 {
			out += fmt.Sprintf(" bets %d", len(cp.GetBets()))
		}
		if cp.GetDecisionPlayerId() != "" {
			out += " decision " + cp.GetDecisionPlayerId()
		}
	}
	if v.GetOfferedPlayerId() != "" {
		out += " offered " + v.GetOfferedPlayerId()
	}
	return out
}

// act is the step's client request: a request sent again, time running
// out on a turn, or what one table's players or croupier do next.
func (s *sim) act() {
	r := s.rng.Float64()
	if !s.cl.isUp(svcTable) {
		s.tracef("step %d: table-svc is down; the clients wait", s.step)
		return
	}
	switch {
	case r < 0.25:
		if a := s.takePending(); a != nil {
			s.do(a)
			return
		}
	case r < 0.33:
		s.idle()
		return
	case r < 0.34:
		d := time.Duration(15+s.rng.IntN(75)) * time.Minute
		s.tracef("step %d: a long pause of %v", s.step, d)
		s.pass(d)
		return
	}
	t := s.pickTable()
	if t.view == nil {
		return
	}
	if t.view.GetState() == stClosed {
		if !t.replaced {
			s.replace(t)
			return
		}
		// Read-only: whatever anyone asks is refused TABLE_CLOSED.
		if s.rng.IntN(2) == 0 {
			s.do(s.closeTable(t))
		} else {
			s.do(s.wrong(t))
		}
		return
	}
	choose := s.choose
	switch {
	case t.pb != nil:
		choose = s.choosePB
	case t.core():
		choose = s.chooseCore
	}
	if a := choose(t); a != nil {
		s.do(a)
	}
}

// pickTable is the table where something happens next: one in play (or
// closed and not yet replaced), now and then (5%) a closed one, where
// whatever is asked must be refused.
func (s *sim) pickTable() *simTable {
	var open, done []*simTable
	for _, t := range s.tables {
		if t.replaced {
			done = append(done, t)
		} else {
			open = append(open, t)
		}
	}
	if r := s.rng.Float64(); len(done) > 0 && (r < 0.05 || len(open) == 0) {
		return done[s.rng.IntN(len(done))]
	}
	return open[s.rng.IntN(len(open))]
}

// replace opens a new table for a closed one.
func (s *sim) replace(t *simTable) {
	if t.replaced || !s.cl.isUp(svcShoe) || !s.cl.isUp(svcWallet) {
		return
	}
	t.replaced = true
	s.tracef("step %d: t%d is replaced", s.step, t.n)
	if err := s.openTable(t.variant()); err != nil {
		s.violate("open-table", "", "a new table could not be opened: %v", err)
	}
}

// idle lets time run out on some table's turn.
func (s *sim) idle() {
	var deadlines []time.Time
	for _, t := range s.tables {
		if d := t.view.GetTurnDeadline(); d != nil {
			deadlines = append(deadlines, d.AsTime())
		}
	}
	now := s.clock.Now()
	d := 5 * time.Second
	if len(deadlines) > 0 {
		target := deadlines[s.rng.IntN(len(deadlines))]
		d = max(0, target.Sub(now)) + time.Duration(1+s.rng.IntN(500))*time.Millisecond
	}
	s.tracef("step %d: nobody acts for %v", s.step, d)
	s.pass(d)
}

// takePending picks a request to send again, if a client has one.
func (s *sim) takePending() *action {
	var with []*simTable
	for _, t := range s.tables {
		if len(t.pending) > 0 {
			with = append(with, t)
		}
	}
	if len(with) == 0 {
		return nil
	}
	t := with[s.rng.IntN(len(with))]
	a := t.pending[0]
	t.pending = t.pending[1:]
	amend := s.rng.Float64() < 0.3
	if s.cfg.Avoid.StaleRetry && !a.lostReply && a.coup != t.view.GetCoup().GetCoupId() {
		s.tracef("step %d t%d: %s gives up %s (its coup is over)", s.step, t.n, a.who, a.desc)
		return nil
	}
	if s.cfg.Avoid.VoidAfterKill && a.voids != "" && a.voids == t.view.GetCoup().GetCoupId() && t.afterKill && t.view.GetState() == stDealing {
		s.tracef("step %d t%d: %s gives up %s (avoided scenario)", s.step, t.n, a.who, a.desc)
		return nil
	}
	if a.move && !a.lostReply && s.avoidMove(t, a.who) {
		s.tracef("step %d t%d: %s gives up %s (avoided scenario)", s.step, t.n, a.who, a.desc)
		return nil
	}
	if amend && a.amend != nil && !s.cfg.Avoid.AmendedRetry {
		// The client changed its mind; a request applied (its reply lost)
		// is then refused REQUEST_ID_REUSED, one that may not have been
		// applied is taken, or refused so.
		b := a.amend()
		b.again, b.coup, b.amended = true, a.coup, a.lostReply
		return b
	}
	return a
}

// indefinite reports whether err leaves the client not knowing whether
// its request was applied: it may send it again with the same request_id.
func indefinite(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

// do sends one request and checks what the table says back: a request
// sent again after its reply was lost succeeds, answers as the first try
// did and changes nothing (retry.go); a refused request changes nothing.
func (s *sim) do(a *action) {
	before := a.t.view
	if !a.again {
		a.coup = before.GetCoup().GetCoupId()
	}
	var rest *rest
	if a.lostReply || a.amended {
		rest = s.restOf(a.t)
	}
	ctx, cancel := s.as(a.who)
	var resp answer
	var err error
	killed := s.killable(func() { resp, err = a.call(ctx) })
	cancel()
	label := fmt.Sprintf("step %d t%d: %s %s", s.step, a.t.n, a.who, a.desc)
	if a.again {
		label += " (sent again)"
	}
	if a.amended {
		label += " (amended)"
	}
	if killed {
		resp, err = nil, errKilled
		label += " (table-svc killed mid-request, started again)"
	}
	v := tableOf(resp)
	checks := func() {
		if !a.again && !killed {
			s.checkClosedRefuses(a, before, err)
			if a.check != nil {
				a.check(before, v, err)
			}
		}
	}
	if a.lostReply || a.amended {
		defer s.judgeRetry(a, rest, resp, err)
	}
	if err == nil {
		s.tracef("%s -> ok: %s", label, brief(v))
		checks()
		if !a.again && s.rng.Float64() < 0.08 {
			b := *a
			b.again, b.lostReply = true, true
			b.first = &firstAnswer{resp: proto.Clone(resp).(answer), tableStart: s.cl.tableStart}
			b.first.eventSeq, _ = s.cl.table.EventSeq(a.t.id)
			a.t.pending = append(a.t.pending, &b)
			s.tracef("    the reply is lost on its way to %s, who will send the request again", a.who)
		}
		return
	}
	s.tracef("%s -> %s %s", label, status.Code(err), errs.Reason(err))
	checks()
	if a.lostReply {
		s.violate("idempotent-retry", "", "t%d: %s's %s, applied once, failed when sent again with the same request_id: %v", a.t.n, a.who, a.desc, err)
	}
	if before != nil && !killed {
		ctx, cancel := s.as("croupier")
		resp, gerr := s.cl.tables.GetTable(ctx, &tablev1.GetTableRequest{TableId: a.t.id})
		cancel()
		if gerr == nil && !proto.Equal(before, resp.GetTable()) {
			s.violate("refusal-changes-nothing", "", "t%d: %s's %s was refused (%v) but the table changed: %s -> %s",
				a.t.n, a.who, a.desc, err, brief(before), brief(resp.GetTable()))
		}
	}
	if indefinite(err) && !a.amended && s.rng.Float64() < 0.7 {
		b := *a
		b.again = true
		a.t.pending = append(a.t.pending, &b)
	}
}

// interject is, for r below the last bound, what happens at table t
// instead of its own next move: a seat taken or left, or money in or out
// (r < b[0]), a move out of turn (< b[1]), the croupier's void (< b[2]) or
// close (< b[3]: mid-coup, to be refused; between coups now and then, to
// close). ok is false for r past the bounds.
func (s *sim) interject(t *simTable, r float64, b [4]float64) (a *action, ok bool) {
	switch {
	case r < b[0]:
		return s.misc(t), true
	case r < b[1]:
		return s.wrong(t), true
	case r < b[2]:
		return s.void(t), true
	case r < b[3]:
		if may, _ := betweenCoups(t.view); !may || s.rng.IntN(3) == 0 {
			return s.closeTable(t), true
		}
		return nil, true
	}
	return nil, false
}

// choose is what happens next at table t: mostly the move the table waits
// for, sometimes another player's move, a croupier's void, a seat taken or
// left, or money deposited or withdrawn.
func (s *sim) choose(t *simTable) *action {
	v := t.view
	if a, ok := s.interject(t, s.rng.Float64(), [4]float64{0.07, 0.10, 0.12, 0.14}); ok {
		return a
	}
	cp := v.GetCoup()
	switch v.GetState() {
	case stWaiting:
		return s.misc(t)
	case stOffering:
		if amt := v.GetOpenOfferAmount(); amt > 0 {
			seated := seatedOf(v)
			return s.acceptBank(t, seated[s.rng.IntN(len(seated))], amt)
		}
		if s.rng.Float64() < 0.75 {
			amount := int64(100 + 50*s.rng.IntN(30))
			if s.rng.Float64() < 0.05 {
				amount = 50 // below the minimum bank
			}
			return s.acceptBank(t, v.GetOfferedPlayerId(), amount)
		}
		return s.simple(t, v.GetOfferedPlayerId(), "DeclineBank")
	case stAuction:
		seated := seatedOf(v)
		p := seated[s.rng.IntN(len(seated))]
		if s.rng.Float64() < 0.5 {
			return s.bid(t, p, max(v.GetHighestBid(), 100)+int64(50*(1+s.rng.IntN(10))))
		}
		return s.simple(t, p, "DeclineBank")
	case stBetting:
		if suivi := v.GetBancoSuiviPlayerId(); suivi != "" && len(cp.GetBets()) == 0 && s.rng.Float64() < 0.5 {
			return s.simple(t, suivi, "CallBanco")
		}
		if len(cp.GetBets()) == 0 && s.rng.Float64() < 0.04 {
			return s.simple(t, v.GetBankerPlayerId(), "PassBank")
		}
		p := cp.GetTurnPlayerId()
		if p == "" {
			return s.misc(t)
		}
		uncovered := cp.GetUncovered()
		switch r := s.rng.Float64(); {
		case r < 0.55 && uncovered > 0:
			amount := uncovered
			if s.rng.Float64() < 0.7 {
				amount = 1 + s.rng.Int64N(uncovered)
			}
			return s.bet(t, p, amount, false)
		case r < 0.62:
			return s.bet(t, p, uncovered+int64(1+s.rng.IntN(500)), true)
		case r < 0.70:
			return s.simple(t, p, "CallBanco")
		}
		return s.simple(t, p, "DeclineBet")
	case stDecision:
		return s.decide(t, cp.GetDecisionPlayerId(), s.rng.IntN(2) == 0)
	case stRaise:
		return s.raise(t, v.GetBankerPlayerId(), s.rng.IntN(2) == 0)
	case stDealing:
		if s.rng.Float64() < 0.1 {
			return s.void(t)
		}
	}
	return nil
}

func seatedOf(v *tablev1.Table) []string {
	var out []string
	for _, st := range v.GetSeats() {
		out = append(out, st.GetPlayerId())
	}
	return out
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// misc: a player sits down, moves to the gallery or leaves; or money
// comes in or goes out of his account (the operator, not through the
// table).
func (s *sim) misc(t *simTable) *action {
	v := t.view
	p := t.players[s.rng.IntN(len(t.players))]
	seated, gallery := contains(seatedOf(v), p), contains(v.GetGalleryPlayerIds(), p)
	r := s.rng.Float64()
	if r < 0.8 && s.avoidMove(t, p) {
		return nil
	}
	switch {
	case r < 0.5 && !seated:
		return s.simple(t, p, "JoinTable")
	case r < 0.6 && !gallery:
		return s.simple(t, p, "JoinGallery")
	case r < 0.8 && (seated || gallery):
		return s.simple(t, p, "LeaveTable")
	case r < 0.9:
		if s.cl.isUp(svcWallet) {
			if err := s.deposit(p, int64(500*(1+s.rng.IntN(6)))); err != nil {
				s.violate("deposit", "", "%v", err)
			}
			s.tracef("step %d: operator deposits for %s", s.step, p)
		}
	default:
		if s.cl.isUp(svcWallet) {
			s.withdraw(p, int64(100*(1+s.rng.IntN(20))))
		}
	}
	return nil
}

func (s *sim) withdraw(p string, amount int64) {
	ctx, cancel := s.as("operator")
	defer cancel()
	_, err := s.cl.wallets.Withdraw(ctx, &walletv1.WithdrawRequest{RequestId: s.nextID(), AccountId: "player:" + p, Amount: amount})
	s.tracef("step %d: operator withdraws %d for %s -> %s %s", s.step, amount, p, status.Code(err), errs.Reason(err))
	if err == nil {
		s.players[p].withdrawn += amount
		s.withdrawn += amount
	}
}

// avoidMove reports whether p taking a seat, leaving it or moving to the
// gallery now is a scenario the configuration avoids (TurnLeave,
// GameStop).
func (s *sim) avoidMove(t *simTable, p string) bool {
	v := t.view
	if s.cfg.Avoid.TurnLeave && v.GetState() == stBetting && v.GetCoup().GetTurnPlayerId() == p {
		return true
	}
	return s.cfg.Avoid.GameStop && contains(seatedOf(v), p) && len(v.GetSeats()) <= 2 && len(v.GetCoup().GetBets()) > 0
}

// wrong: a player acts out of turn (or by chance in turn).
func (s *sim) wrong(t *simTable) *action {
	p := t.players[s.rng.IntN(len(t.players))]
	switch s.rng.IntN(8) {
	case 0:
		return s.bet(t, p, 100, false)
	case 1:
		return s.simple(t, p, "CallBanco")
	case 2:
		return s.decide(t, p, true)
	case 3:
		return s.acceptBank(t, p, 500)
	case 4:
		return s.simple(t, p, "PassBank")
	case 5:
		return s.raise(t, p, true)
	case 6:
		return s.simple(t, p, "DeclineBet")
	}
	return s.bid(t, p, 500)
}

// void: the croupier voids the coup in play, or names the wrong coup.
func (s *sim) void(t *simTable) *action {
	coupID := t.view.GetCoup().GetCoupId()
	desc := fmt.Sprintf("VoidCoup %d", t.view.GetCoup().GetNumber())
	if coupID == "" || s.rng.Float64() < 0.2 || (s.cfg.Avoid.VoidAfterKill && t.afterKill && t.view.GetState() == stDealing) {
		coupID, desc = t.view.GetLastCoup().GetCoupId(), "VoidCoup of the last coup"
		if coupID == "" {
			coupID = "no-such-coup"
		}
	}
	req := &tablev1.VoidCoupRequest{RequestId: s.nextID(), TableId: t.id, CoupId: coupID, Reason: "sim: misdeal"}
	return &action{t: t, who: "croupier", desc: desc, voids: coupID, call: func(ctx context.Context) (answer, error) {
		return s.cl.tables.VoidCoup(ctx, req)
	}}
}

// closeTable: the croupier closes the table (CloseTable), at any moment:
// between coups (WAITING_FOR_PLAYERS, OFFERING_BANK, AUCTION, or BETTING
// before any bet) it closes, the bank and the bids given back, and the
// table is read-only; mid-coup it is refused WRONG_STATE
// (close-between-coups).
func (s *sim) closeTable(t *simTable) *action {
	req := &tablev1.CloseTableRequest{RequestId: s.nextID(), TableId: t.id, Reason: "sim: the croupier closes the table"}
	return &action{t: t, who: "croupier", desc: "CloseTable", call: func(ctx context.Context) (answer, error) {
		return s.cl.tables.CloseTable(ctx, req)
	}, check: func(before, after *tablev1.Table, err error) { s.checkClose(t, before, after, err) }}
}

// betweenCoups reports whether a table may close: no coup in play, or
// its betting open with no bet (a banco suivi asked is mid-coup too,
// which the view does not show: unknown is false, true).
func betweenCoups(v *tablev1.Table) (may, known bool) {
	if v.GetVariant() == tablev1.Variant_VARIANT_PUNTO_BANCO {
		// The house banks: a coup without a bet may close.
		return len(v.GetCoup().GetBets()) == 0 && v.GetState() != stClosed, v.GetState() != stClosed
	}
	switch v.GetState() {
	case stWaiting, stOffering, stAuction:
		return true, true
	case stBetting:
		return len(v.GetCoup().GetBets()) == 0, len(v.GetCoup().GetBets()) > 0
	}
	return false, v.GetState() != stClosed
}

// checkClose checks a CloseTable's answer: accepted only between coups,
// and then the table closed with no bank, banker or bid left; refused
// WRONG_STATE only mid-coup.
func (s *sim) checkClose(t *simTable, before, after *tablev1.Table, err error) {
	if before == nil {
		return
	}
	if t.core() {
		// Only a close mid-coup is judged there (games.go).
		switch st := before.GetState(); {
		case err == nil && (st == stDealing || st == stDecision || st == stSettling):
			s.violate("close-between-coups", "", "t%d: CloseTable accepted mid-coup (%s)", t.n, brief(before))
		case err == nil && (after.GetState() != stClosed || after.GetBankerPlayerId() != "" || after.GetBank() != 0 || after.GetHighestBidderPlayerId() != "" || after.GetCoup() != nil):
			s.violate("table-closed", "", "t%d: CloseTable answered %s: not closed, or a bank, a bid or a coup left", t.n, brief(after))
		}
		return
	}
	may, known := betweenCoups(before)
	switch {
	case err == nil && !may:
		s.violate("close-between-coups", "", "t%d: CloseTable accepted mid-coup (%s)", t.n, brief(before))
	case err == nil && (after.GetState() != stClosed || after.GetBankerPlayerId() != "" || after.GetBank() != 0 || after.GetHighestBidderPlayerId() != "" || after.GetCoup() != nil):
		s.violate("table-closed", "", "t%d: CloseTable answered %s: not closed, or a bank, a bid or a coup left", t.n, brief(after))
	case errs.Reason(err) == "WRONG_STATE" && may && known:
		s.violate("close-between-coups", "", "t%d: CloseTable refused WRONG_STATE between coups (%s)", t.n, brief(before))
	}
}

// checkClosedRefuses: a new request to a closed table is refused
// TABLE_CLOSED (or fails without an answer).
func (s *sim) checkClosedRefuses(a *action, before *tablev1.Table, err error) {
	if before.GetState() != stClosed {
		return
	}
	if err == nil || (!indefinite(err) && errs.Reason(err) != "TABLE_CLOSED") {
		s.violate("closed-read-only", "", "t%d: %s's %s at the closed table answered %v; want FAILED_PRECONDITION TABLE_CLOSED", a.t.n, a.who, a.desc, err)
	}
}

// simple is a request with nothing but ids.
func (s *sim) simple(t *simTable, p, method string) *action {
	id, c := s.nextID(), s.cl.tables
	var call func(ctx context.Context) (answer, error)
	switch method {
	case "JoinTable":
		req := &tablev1.JoinTableRequest{RequestId: id, TableId: t.id, PlayerId: p}
		if t.bq != nil {
			req.Side = tablev1.BanqueSide(1 + s.rng.IntN(2))
		}
		call = func(ctx context.Context) (answer, error) {
			return c.JoinTable(ctx, req)
		}
	case "JoinGallery":
		req := &tablev1.JoinGalleryRequest{RequestId: id, TableId: t.id, PlayerId: p}
		call = func(ctx context.Context) (answer, error) {
			return c.JoinGallery(ctx, req)
		}
	case "LeaveTable":
		req := &tablev1.LeaveTableRequest{RequestId: id, TableId: t.id, PlayerId: p}
		call = func(ctx context.Context) (answer, error) {
			return c.LeaveTable(ctx, req)
		}
	case "DeclineBank":
		req := &tablev1.DeclineBankRequest{RequestId: id, TableId: t.id, PlayerId: p}
		call = func(ctx context.Context) (answer, error) {
			return c.DeclineBank(ctx, req)
		}
	case "DeclineBet":
		req := &tablev1.DeclineBetRequest{RequestId: id, TableId: t.id, PlayerId: p}
		call = func(ctx context.Context) (answer, error) {
			return c.DeclineBet(ctx, req)
		}
	case "CallBanco":
		req := &tablev1.CallBancoRequest{RequestId: id, TableId: t.id, PlayerId: p}
		call = func(ctx context.Context) (answer, error) {
			return c.CallBanco(ctx, req)
		}
	case "PassBank":
		req := &tablev1.PassBankRequest{RequestId: id, TableId: t.id, PlayerId: p}
		call = func(ctx context.Context) (answer, error) {
			return c.PassBank(ctx, req)
		}
	default:
		panic("sim: no simple request " + method)
	}
	move := method == "JoinTable" || method == "JoinGallery" || method == "LeaveTable"
	return &action{t: t, who: p, desc: method, call: call, move: move}
}

func (s *sim) acceptBank(t *simTable, p string, amount int64) *action {
	req := &tablev1.AcceptBankRequest{RequestId: s.nextID(), TableId: t.id, PlayerId: p, Amount: amount}
	var mk func(req *tablev1.AcceptBankRequest) *action
	mk = func(req *tablev1.AcceptBankRequest) *action {
		return &action{t: t, who: p, desc: fmt.Sprintf("AcceptBank %d", req.GetAmount()),
			call: func(ctx context.Context) (answer, error) {
				return s.cl.tables.AcceptBank(ctx, req)
			},
			amend: func() *action {
				r2 := proto.Clone(req).(*tablev1.AcceptBankRequest)
				r2.Amount += 50
				return mk(r2)
			}}
	}
	return mk(req)
}

func (s *sim) bid(t *simTable, p string, amount int64) *action {
	return s.bidReq(t, &tablev1.BidBankRequest{RequestId: s.nextID(), TableId: t.id, PlayerId: p, Amount: amount})
}

// bidReq is a BidBank; sent again amended, 50 more.
func (s *sim) bidReq(t *simTable, req *tablev1.BidBankRequest) *action {
	return &action{t: t, who: req.GetPlayerId(), desc: fmt.Sprintf("BidBank %d", req.GetAmount()),
		call: func(ctx context.Context) (answer, error) {
			return s.cl.tables.BidBank(ctx, req)
		},
		amend: func() *action {
			r2 := proto.Clone(req).(*tablev1.BidBankRequest)
			r2.Amount += 50
			return s.bidReq(t, r2)
		}}
}

func (s *sim) bet(t *simTable, p string, amount int64, over bool) *action {
	return s.placeBet(t, &tablev1.PlaceBetRequest{RequestId: s.nextID(), TableId: t.id, PlayerId: p, Amount: amount, OverBank: over})
}

// placeBet is a PlaceBet (a chemin de fer bet, over the bank or not, or
// a punto banco bet on a spot); sent again amended, half the amount.
func (s *sim) placeBet(t *simTable, req *tablev1.PlaceBetRequest) *action {
	desc := fmt.Sprintf("PlaceBet %d", req.GetAmount())
	if req.GetOverBank() {
		desc += " over the bank"
	}
	if req.GetSpot() != tablev1.BetSpot_BET_SPOT_UNSPECIFIED {
		desc += " on " + req.GetSpot().String()
	}
	return &action{t: t, who: req.GetPlayerId(), desc: desc,
		call: func(ctx context.Context) (answer, error) {
			return s.cl.tables.PlaceBet(ctx, req)
		},
		amend: func() *action {
			r2 := proto.Clone(req).(*tablev1.PlaceBetRequest)
			r2.Amount = max(1, r2.Amount/2)
			return s.placeBet(t, r2)
		}}
}

func (s *sim) decide(t *simTable, p string, draw bool) *action {
	return s.decideReq(t, s.nextID(), p, draw)
}

// decideReq is a DecideDraw; sent again amended, the other choice.
func (s *sim) decideReq(t *simTable, id, p string, draw bool) *action {
	ch, desc := tablev1.DrawChoice_DRAW_CHOICE_STAND, "DecideDraw stand"
	if draw {
		ch, desc = tablev1.DrawChoice_DRAW_CHOICE_DRAW, "DecideDraw draw"
	}
	req := &tablev1.DecideDrawRequest{RequestId: id, TableId: t.id, PlayerId: p, Choice: ch}
	return &action{t: t, who: p, desc: desc, call: func(ctx context.Context) (answer, error) {
		return s.cl.tables.DecideDraw(ctx, req)
	}, amend: func() *action { return s.decideReq(t, id, p, !draw) }}
}

func (s *sim) raise(t *simTable, p string, raise bool) *action {
	return s.raiseReq(t, s.nextID(), p, raise)
}

// raiseReq is a RaiseBank; sent again amended, the other answer.
func (s *sim) raiseReq(t *simTable, id, p string, raise bool) *action {
	req := &tablev1.RaiseBankRequest{RequestId: id, TableId: t.id, PlayerId: p, Raise: raise}
	desc := "RaiseBank no"
	if raise {
		desc = "RaiseBank yes"
	}
	return &action{t: t, who: p, desc: desc, call: func(ctx context.Context) (answer, error) {
		return s.cl.tables.RaiseBank(ctx, req)
	}, amend: func() *action { return s.raiseReq(t, id, p, !raise) }}
}
