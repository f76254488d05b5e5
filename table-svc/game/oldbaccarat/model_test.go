package oldbaccarat

// A randomized model-based test of the old baccarat core. A driver plays
// the shell (applies commands, places the holds Bid and Stake wait for,
// carries out the Pending effects, ticks the clock) and the world around
// it (a fake clock, fresh ids, a two-deck shoe with a cut card, a wallet
// of balances and holds, players sending legal and illegal commands, and
// effect results at the wrong time). After every step it checks:
//
//  1. money is conserved: balances plus open holds equal the deposits;
//     every open hold is one the state refers to (bank, bid, stake, a
//     release due) and the bank hold holds the bank;
//  2. a refusal is a *game.Error with a reason and changes nothing;
//  3. Apply never changes its input state;
//  4. no stake changes once the staking of its coup closed;
//  5. every coup with stakes ends settled or voided, exactly once;
//  6. the result follows from the cards (OLD-VALUES, OLD-RANK,
//     OLD-NATURAL, OLD-DRAW, OLD-SETTLE computed here apart from the
//     rules engine), and every settlement's moves sum to 0.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

type hold struct {
	player string
	amount int64
}

type bogus struct{}

func (bogus) CommandName() string { return "bogus" }

type driver struct {
	tb   testing.TB
	seed uint64
	name string
	r    Rules
	rng  *rand.Rand
	step int
	cmd  string
	now  time.Time
	ids  int
	st   State

	down int // steps the services stay down

	cards  []string
	pos    int
	cutAt  int
	dealt  map[string]game.CardDealt
	moved  map[string]bool
	shoes  int32
	shoeOf map[int32]string

	players   []string
	balance   map[string]int64
	holds     map[string]hold
	deposited int64
	holdSeq   int
	settled   map[string]Settled

	frozen   map[string][]Hand
	withBets map[string]bool
	settledN map[string]int
	voidedN  map[string]int
	counts   map[string]int
	refused  map[string]int
}

func modelRules() []Rules {
	base := testRules()
	small := base
	small.MaxSeats, small.MaxMoveTop, small.StandOnTimeout, small.MaxStake = 3, 0, true, 400
	wide := base
	wide.MaxSeats, wide.MaxMoveTop, wide.MinStake, wide.MinBank = 17, 52, 1, 2
	return []Rules{base, small, wide}
}

func newDriver(tb testing.TB, seed uint64, r Rules) *driver {
	d := &driver{tb: tb, seed: seed, r: r, rng: rand.New(rand.NewPCG(seed, 0x01d)), now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		dealt: map[string]game.CardDealt{}, moved: map[string]bool{}, shoeOf: map[int32]string{1: "shoe-1"}, shoes: 1,
		balance: map[string]int64{}, holds: map[string]hold{}, settled: map[string]Settled{},
		frozen: map[string][]Hand{}, withBets: map[string]bool{}, settledN: map[string]int{}, voidedN: map[string]int{},
		counts: map[string]int{}, refused: map[string]int{}}
	d.name = fmt.Sprintf("seats=%d move=%d", r.MaxSeats, r.MaxMoveTop)
	for i := range 10 {
		p := fmt.Sprintf("p%02d", i)
		d.players = append(d.players, p)
		dep := r.MinBank * (1 + d.rng.Int64N(20))
		if i == 0 {
			dep = 0
		}
		d.balance[p] = dep
		d.deposited += dep
	}
	d.newShoe()
	st, err := New(r, "shoe-1")
	if err != nil {
		tb.Fatal(err)
	}
	d.st = st
	return d
}

func (d *driver) fail(format string, args ...any) {
	d.tb.Helper()
	d.tb.Fatalf("seed %d (%s) step %d, %s: %s\nstate: %s", d.seed, d.name, d.step, d.cmd, fmt.Sprintf(format, args...), d.st)
}

func (d *driver) newShoe() {
	d.cards = d.cards[:0]
	for range Decks {
		for _, s := range "CDHS" {
			for _, rk := range "A23456789TJQK" {
				d.cards = append(d.cards, string(rk)+string(s))
			}
		}
	}
	d.rng.Shuffle(len(d.cards), func(i, j int) { d.cards[i], d.cards[j] = d.cards[j], d.cards[i] })
	d.pos, d.cutAt = 0, len(d.cards)-16
	if d.rng.IntN(3) > 0 {
		d.cutAt = 1 + d.rng.IntN(40)
	}
}

// --- applying ---

func (d *driver) apply(cmd game.Command) (Outcome, error) {
	d.tb.Helper()
	d.ids++
	return d.applyIn(game.Input{Now: d.now, NewID: fmt.Sprintf("id%06d", d.ids), Cmd: cmd})
}

func (d *driver) applyIn(in game.Input) (Outcome, error) {
	d.tb.Helper()
	before := copyState(d.st)
	out, err := Apply(d.st, in)
	if !reflect.DeepEqual(d.st, before) { // invariant 3
		d.fail("Apply(%s) changed its input", in.Cmd.CommandName())
	}
	if err != nil { // invariant 2
		var ge *game.Error
		if !errors.As(err, &ge) || ge.Reason == "" {
			d.fail("Apply(%s): %v is not a *game.Error with a reason", in.Cmd.CommandName(), err)
		}
		if out.Events != nil || out.Hold != nil || !reflect.DeepEqual(out.State, State{}) {
			d.fail("Apply(%s) refused but returned something", in.Cmd.CommandName())
		}
		d.refused[ge.Reason]++
		return out, err
	}
	if out.Hold != nil {
		if !reflect.DeepEqual(out.State, before) || len(out.Events) > 0 {
			d.fail("Apply(%s) asked a hold and changed the state", in.Cmd.CommandName())
		}
		return out, nil
	}
	checkNoAlias(d, d.st, out.State)
	d.observe(before, in, out)
	d.st = out.State
	d.counts[in.Cmd.CommandName()]++
	d.check()
	return out, nil
}

// withHold applies a command that waits for a hold: the wallet places it
// if the money is there, and the command is applied again with its id.
func (d *driver) withHold(cmd game.HoldCommand) bool {
	d.tb.Helper()
	d.ids++
	in := game.Input{Now: d.now, NewID: fmt.Sprintf("id%06d", d.ids), Cmd: cmd}
	out, err := d.applyIn(in)
	if err != nil || out.Hold == nil {
		return err == nil
	}
	h := out.Hold
	if d.balance[h.PlayerID] < h.Amount || d.down > 0 {
		return false // INSUFFICIENT_FUNDS, or the wallet is down
	}
	d.holdSeq++
	id := fmt.Sprintf("hold%05d", d.holdSeq)
	d.balance[h.PlayerID] -= h.Amount
	d.holds[id] = hold{h.PlayerID, h.Amount}
	in.Cmd = cmd.WithHold(id)
	if out, err = d.applyIn(in); err != nil || out.Hold != nil {
		d.fail("the command with its hold: %v", err)
	}
	return true
}

func (d *driver) observe(prev State, in game.Input, out Outcome) {
	cur := out.State
	for _, ev := range out.Events {
		switch p := ev.Payload.(type) {
		case *eventsv1.BetPlaced:
			if prev.Phase != PhaseStaking {
				d.fail("a stake in phase %d", prev.Phase)
			}
		case *eventsv1.CoupResulted:
			d.checkResult(cur.Coup)
		case *eventsv1.CoupSettled:
			d.settledN[ev.CoupID]++
		case *eventsv1.CoupVoided:
			d.voidedN[ev.CoupID]++
		case nil:
			d.fail("an event without payload")
		default:
			_ = p
		}
	}
	if cp := cur.Coup; cp != nil {
		if len(cp.Hands) > 0 {
			d.withBets[cp.ID] = true
		}
		if cp.StakingClosed {
			if f, ok := d.frozen[cp.ID]; !ok {
				d.frozen[cp.ID] = stakesOf(cp.Hands)
			} else if !reflect.DeepEqual(f, stakesOf(cp.Hands)) { // invariant 4
				d.fail("the stakes of coup %s changed after the staking closed: %v -> %v", cp.ID, f, stakesOf(cp.Hands))
			}
		}
	}
}

func stakesOf(hs []Hand) []Hand {
	out := make([]Hand, len(hs))
	for i, h := range hs {
		out[i] = Hand{PlayerID: h.PlayerID, Seat: h.Seat, Stake: h.Stake, HoldID: h.HoldID}
	}
	return out
}

// checkResult recomputes the coup's result from its cards (invariant 6).
func (d *driver) checkResult(cp *Coup) {
	value := func(code string) int {
		switch code[0] {
		case 'A':
			return 11
		case 'T', 'J', 'Q', 'K':
			return 10
		}
		return int(code[0] - '0')
	}
	pts := func(cards []string) int {
		n := 0
		for _, c := range cards {
			n += value(c)
		}
		return n
	}
	natural := pts(cp.Banker[:2])%10 >= 8
	for _, h := range cp.Hands {
		natural = natural || pts(h.Cards[:2])%10 >= 8
	}
	for _, cards := range append([][]string{cp.Banker}, func() (x [][]string) {
		for _, h := range cp.Hands {
			x = append(x, h.Cards)
		}
		return
	}()...) {
		if len(cards) < 2 || len(cards) > 3 || (len(cards) == 3 && (natural || pts(cards[:2])%10 >= 4)) {
			d.fail("hand %v: drawn against OLD-DRAW (natural %v)", cards, natural)
		}
	}
	b := pts(cp.Banker) % 10
	var tied []int
	net := make([]int64, len(cp.Hands))
	for i, h := range cp.Hands {
		p := pts(h.Cards) % 10
		net[i] = -h.Stake
		if p > b {
			net[i] = h.Stake
		} else if p == b {
			tied = append(tied, i)
		}
	}
	if !natural && len(tied) == 2 {
		x, y := tied[0], tied[1]
		net[x], net[y] = cp.Hands[y].Stake, cp.Hands[x].Stake
	}
	var bank int64
	for i, h := range cp.Hands {
		if h.Net != net[i] || h.Points != pts(h.Cards) {
			d.fail("hand %s %v: net %d points %d, want %d %d", h.PlayerID, h.Cards, h.Net, h.Points, net[i], pts(h.Cards))
		}
		bank -= net[i]
	}
	if cp.BankerNet != bank || cp.Natural != natural || cp.BankerPoints != pts(cp.Banker) {
		d.fail("banker net %d natural %v, want %d %v", cp.BankerNet, cp.Natural, bank, natural)
	}
}

// check: invariant 1 (money and holds).
func (d *driver) check() {
	var sum int64
	for _, b := range d.balance {
		sum += b
	}
	for _, h := range d.holds {
		sum += h.amount
	}
	if sum != d.deposited {
		d.fail("money not conserved: %d, deposited %d", sum, d.deposited)
	}
	s := d.st
	ref := map[string]bool{}
	for _, id := range s.PendingVoids {
		ref[id] = true
	}
	if s.BankHoldID != "" {
		ref[s.BankHoldID] = true
		if h, ok := d.holds[s.BankHoldID]; ok && !contains(s.PendingVoids, s.BankHoldID) && (h.amount != s.Bank || h.player != s.BankerID) {
			d.fail("the bank hold holds %d for %s, the bank is %d of %s", h.amount, h.player, s.Bank, s.BankerID)
		}
	}
	if s.Auction != nil {
		for _, b := range s.Auction.Bids {
			ref[b.HoldID] = true
		}
	}
	if s.Coup != nil {
		for _, h := range s.Coup.Hands {
			ref[h.HoldID] = true
		}
	}
	for id := range d.holds {
		if !ref[id] {
			d.fail("hold %s is open but the state does not know it", id)
		}
	}
}

// --- the shell: effects ---

func (d *driver) drain() {
	d.tb.Helper()
	for i := 0; ; i++ {
		if i > 100 {
			d.fail("effects never end")
		}
		eff := Pending(d.st)
		if !reflect.DeepEqual(eff, Pending(d.st)) {
			d.fail("Pending is not a function of the state")
		}
		if eff == nil || d.down > 0 {
			return
		}
		d.cmd = "effect " + eff.EffectName()
		cmd := d.carryOut(eff)
		if d.rng.IntN(8) == 0 { // a crash before the result is stored: the same call again
			if again := Pending(d.st); !reflect.DeepEqual(again, eff) {
				d.fail("after a crash Pending asks %#v, before %#v", again, eff)
			} else if cmd2 := d.carryOut(again); !reflect.DeepEqual(cmd2, cmd) {
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
	case game.NewShoe:
		n := d.st.ShoeNumber + 1
		if _, ok := d.shoeOf[n]; !ok {
			d.shoeOf[n] = fmt.Sprintf("shoe-%d", n)
			d.newShoe()
		}
		return game.ShoeOpened{ShoeID: d.shoeOf[n], Number: n}
	case game.CloseShoe:
		return game.ShoeClosed{}
	case MoveToBottom:
		if e.N < 1 || e.N > d.r.MaxMoveTop || e.ShoeID != d.st.ShoeID {
			d.fail("MoveToBottom %+v", e)
		}
		if !d.moved[e.RequestID] {
			d.moved[e.RequestID] = true
			top := append([]string(nil), d.cards[d.pos:d.pos+int(e.N)]...)
			d.cards = append(append(d.cards[:d.pos:d.pos], d.cards[d.pos+int(e.N):]...), top...)
		}
		return MovedToBottom{}
	case game.DealCard:
		if c, ok := d.dealt[e.RequestID]; ok {
			return c
		}
		cp := d.st.Coup
		if want := fmt.Sprintf("%s/card/%d", cp.ID, cp.cardsDealt()+1); e.RequestID != want {
			d.fail("DealCard %q, want %q", e.RequestID, want)
		}
		if e.Hand != "banker" && !strings.HasPrefix(e.Hand, "punter:") {
			d.fail("DealCard hand %q", e.Hand)
		}
		if d.pos >= len(d.cards) {
			d.fail("the shoe ran out")
		}
		c := game.CardDealt{Code: d.cards[d.pos], CutCardOut: d.pos == d.cutAt}
		d.pos++
		d.dealt[e.RequestID] = c
		return c
	case Settle:
		if s, ok := d.settled[e.CoupID]; ok {
			return s
		}
		var sum int64
		for _, m := range e.Moves {
			sum += m.Amount
		}
		bh, ok := d.holds[e.BankHoldID]
		if sum != 0 || len(e.Moves) != len(e.Stakes)+1 || !ok || bh.amount != e.Bank || bh.player != e.BankerID {
			d.fail("settlement %+v: moves sum %d, bank hold %+v", e, sum, bh)
		}
		for i, sh := range e.Stakes {
			h, ok := d.holds[sh.HoldID]
			if !ok || h.amount != sh.Amount || h.player != sh.PlayerID || e.Moves[i].PlayerID != sh.PlayerID || e.Moves[i].Amount < -sh.Amount {
				d.fail("stake %+v, hold %+v, move %+v", sh, h, e.Moves[i])
			}
			delete(d.holds, sh.HoldID)
			d.balance[sh.PlayerID] += sh.Amount + e.Moves[i].Amount
		}
		bh.amount += e.Moves[len(e.Moves)-1].Amount
		if bh.amount < 0 || bh.amount != e.NewBank {
			d.fail("the bank hold would be %d, NewBank %d", bh.amount, e.NewBank)
		}
		if bh.amount == 0 {
			delete(d.holds, e.BankHoldID)
		} else {
			d.holds[e.BankHoldID] = bh
		}
		d.settled[e.CoupID] = Settled{NewBank: e.NewBank}
		return d.settled[e.CoupID]
	}
	d.fail("unknown effect %T", eff)
	return nil
}

// --- the players ---

func (d *driver) player() string { return d.players[d.rng.IntN(len(d.players))] }

func (d *driver) amount(min int64) int64 {
	switch d.rng.IntN(8) {
	case 0:
		return -d.rng.Int64N(3)
	case 1:
		return min - 1
	case 2:
		return min * (1 + d.rng.Int64N(100))
	}
	return min + d.rng.Int64N(min*4+1)
}

func (d *driver) randomCommand(n int) {
	s := d.st
	k := d.rng.IntN(100)
	switch {
	case k < 8:
		p := d.player()
		d.cmd = "join " + p
		d.apply(Join{PlayerID: p})
	case k < 11:
		p := d.player()
		d.cmd = "leave " + p
		d.apply(Leave{PlayerID: p})
	case k < 20:
		p, amt := d.player(), d.amount(d.r.MinBank)
		if s.Phase == PhaseOffering && d.rng.IntN(2) == 0 {
			p = s.OfferedTo
		}
		d.cmd = fmt.Sprintf("bid %s %d", p, amt)
		d.withHold(Bid{PlayerID: p, Amount: amt})
	case k < 25:
		p := d.player()
		if s.Phase == PhaseOffering && d.rng.IntN(2) == 0 {
			p = s.OfferedTo
		}
		d.cmd = "pass bank " + p
		d.apply(PassBank{PlayerID: p})
	case k < 42:
		d.stake()
	case k < 46:
		p := d.player()
		d.cmd = "pass stake " + p
		d.apply(PassStake{PlayerID: p})
	case k < 50:
		p, nn := d.player(), int32(d.rng.IntN(int(d.r.MaxMoveTop)+3))-1
		if s.Coup != nil && d.rng.IntN(2) == 0 {
			p = s.Coup.BankerID
		}
		d.cmd = fmt.Sprintf("move %s %d", p, nn)
		_, err := d.apply(MoveTopCards{PlayerID: p, N: nn})
		if err == nil != (s.Phase == PhaseDealing && s.Coup.CutDue && p == s.Coup.BankerID && nn >= 0 && nn <= d.r.MaxMoveTop) {
			d.fail("move top cards: %v", err)
		}
	case k < 65:
		who, _ := s.decider()
		p := d.player()
		if d.rng.IntN(4) > 0 && who != "" {
			p = who
		}
		d.cmd = "decide " + p
		if _, err := d.apply(Decide{PlayerID: p, Draw: d.rng.IntN(2) == 0}); (err == nil) != (who != "" && p == who) {
			d.fail("decide by %s (decider %q): %v", p, who, err)
		}
	case k < 82:
		d.now = d.now.Add(time.Duration(d.rng.IntN(20000)) * time.Millisecond)
		if dl := Deadline(d.st); !dl.IsZero() && d.rng.IntN(3) == 0 {
			d.now = dl
		}
		d.cmd = "tick"
		if _, err := d.apply(game.Tick{}); err != nil {
			d.fail("tick: %v", err)
		}
	case k < 90:
		cmds := []game.Command{game.CardDealt{Code: "ZZ"}, game.CardDealt{Code: "9C"}, Settled{NewBank: -1}, MovedToBottom{},
			game.HoldsVoided{}, game.ShoeOpened{ShoeID: "x", Number: 99}, game.ShoeClosed{}, bogus{}}
		cmd := cmds[d.rng.IntN(len(cmds))]
		if _, isBogus := cmd.(bogus); Pending(s) != nil && !isBogus {
			return // an effect is due (a service is down): its result would be right
		}
		d.cmd = fmt.Sprintf("wrong result %#v", cmd)
		if _, err := d.apply(cmd); err == nil {
			d.fail("a result not due was taken")
		}
	case k < 91:
		id := "nope"
		if s.Coup != nil && d.rng.IntN(3) > 0 {
			id = s.Coup.ID
		}
		d.cmd = "void " + id
		d.apply(Void{CoupID: id, Reason: "misdeal", By: "croupier"})
	case k < 92:
		if d.step > n*3/4 && d.rng.IntN(4) == 0 {
			d.cmd = "close"
			d.apply(Close{Reason: "end"})
		}
	}
}

func (d *driver) stake() {
	s := d.st
	p := d.player()
	if len(s.Seats) > 0 && d.rng.IntN(2) == 0 {
		p = s.Seats[d.rng.IntN(len(s.Seats))].PlayerID
	}
	amt := d.amount(d.r.MinStake)
	if d.rng.IntN(3) > 0 {
		// A plain stake: a seated punter who has not acted, within the cover.
		for _, st := range s.Seats {
			if st.PlayerID != s.BankerID && (s.Coup == nil || (!s.Coup.staked(st.PlayerID) && !contains(s.Coup.Passed, st.PlayerID))) {
				p, amt = st.PlayerID, d.r.MinStake*(1+d.rng.Int64N(3))
				break
			}
		}
	}
	d.cmd = fmt.Sprintf("stake %s %d", p, amt)
	legal := s.Phase == PhaseStaking && p != s.BankerID && amt >= d.r.MinStake && (d.r.MaxStake == 0 || amt <= d.r.MaxStake)
	_, seated := s.seat(p)
	legal = legal && seated
	var staked int64
	if cp := s.Coup; cp != nil {
		legal = legal && !contains(cp.Passed, p) && !cp.staked(p)
		for _, h := range cp.Hands {
			staked += h.Stake
		}
	}
	legal = legal && 2*(staked+amt) <= s.Bank
	_, err := Apply(d.st, game.Input{Now: d.now, NewID: "probe", Cmd: Stake{PlayerID: p, Amount: amt}})
	if (err == nil) != legal {
		d.fail("stake legal=%v: %v", legal, err)
	}
	d.withHold(Stake{PlayerID: p, Amount: amt})
}

func (d *driver) run(n int) {
	d.tb.Helper()
	for d.step = 0; d.step < n; d.step++ {
		if d.down > 0 {
			d.down--
		} else if d.rng.IntN(40) == 0 {
			d.down = 1 + d.rng.IntN(5)
		}
		d.randomCommand(n)
		d.drain()
	}
	d.finish()
}

// finish: the services come back, time passes, the coups end, and every
// coup with stakes was settled or voided exactly once (invariant 5).
func (d *driver) finish() {
	d.tb.Helper()
	d.down, d.cmd = 0, "finish"
	for range 200 {
		d.drain()
		s := d.st
		if who, _ := s.decider(); who != "" {
			d.apply(Decide{PlayerID: who, Draw: d.rng.IntN(2) == 0})
			continue
		}
		if s.Coup == nil || len(s.Coup.Hands) == 0 {
			break
		}
		if dl := Deadline(s); !dl.IsZero() {
			d.now = dl
			d.apply(game.Tick{})
			continue
		}
		d.apply(Void{CoupID: s.Coup.ID, Reason: "end"}) // staking with no window: void
	}
	d.drain()
	if s := d.st; (s.Coup != nil && len(s.Coup.Hands) > 0) || Pending(s) != nil {
		d.fail("the table does not rest: pending %#v", Pending(s))
	}
	for id := range d.withBets {
		if d.settledN[id]+d.voidedN[id] != 1 {
			d.fail("coup %s: settled %d, voided %d", id, d.settledN[id], d.voidedN[id])
		}
	}
}

func TestModel(t *testing.T) {
	seeds, steps := 300, 400
	if testing.Short() {
		seeds, steps = 60, 200
	}
	sets := modelRules()
	var mu sync.Mutex
	total, refused := map[string]int{}, map[string]int{}
	coups := 0
	t.Run("seeds", func(t *testing.T) {
		for seed := range seeds {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
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
	for _, name := range []string{"join", "leave", "bid", "pass_bank", "stake", "pass_stake", "move_top_cards", "moved_to_bottom",
		"decide", "tick", "card_dealt", "settled", "void", "holds_voided", "shoe_opened", "close", "shoe_closed"} {
		if total[name] == 0 {
			t.Errorf("no %s was ever applied (applied %v)", name, total)
		}
	}
	for _, reason := range []string{ReasonBetExceedsBank, ReasonBidTooLow, ReasonNotYourTurn, ReasonBankerCannotBet, ReasonNotBanker,
		ReasonBankBelowMinimum, ReasonWrongState, ReasonNotSeated, ReasonTableClosed, ReasonBetOutOfLimits} {
		if refused[reason] == 0 {
			t.Errorf("no refusal %s was ever seen (%v)", reason, refused)
		}
	}
	var names []string
	for k := range total {
		names = append(names, k)
	}
	sort.Strings(names)
	t.Logf("%d seeds x %d steps: %d coups with stakes; applied %v; refused %v", seeds, steps, coups, total, refused)
}

// copyState is a deep copy of s, written apart from the core's clone.
func copyState(s State) State {
	c := s
	c.Seats = cp(s.Seats)
	c.PendingVoids = cp(s.PendingVoids)
	if s.Auction != nil {
		au := *s.Auction
		au.Bids, au.Passed = cp(au.Bids), cp(au.Passed)
		c.Auction = &au
	}
	c.Coup, c.LastCoup = copyCoup(s.Coup), copyCoup(s.LastCoup)
	return c
}

func copyCoup(x *Coup) *Coup {
	if x == nil {
		return nil
	}
	c := *x
	c.Hands, c.Passed, c.Banker = cp(x.Hands), cp(x.Passed), cp(x.Banker)
	for i := range c.Hands {
		c.Hands[i].Cards = cp(x.Hands[i].Cards)
	}
	return &c
}

func cp[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// checkNoAlias: the new state shares no slice with the old one, so that
// the shell may keep both (invariant 3, for later appends).
func checkNoAlias(d *driver, old, cur State) {
	same := func(a, b any) bool {
		va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
		return va.Cap() > 0 && vb.Cap() > 0 && va.Pointer() == vb.Pointer()
	}
	if same(old.Seats, cur.Seats) || same(old.PendingVoids, cur.PendingVoids) {
		d.fail("the new state shares a slice with the old one")
	}
	for _, o := range []*Coup{old.Coup, old.LastCoup} {
		for _, c := range []*Coup{cur.Coup, cur.LastCoup} {
			if o == nil || c == nil {
				continue
			}
			if o == c || same(o.Hands, c.Hands) || same(o.Banker, c.Banker) || same(o.Passed, c.Passed) {
				d.fail("the new state shares coup %s with the old one", c.ID)
			}
			for i := range o.Hands {
				for j := range c.Hands {
					if same(o.Hands[i].Cards, c.Hands[j].Cards) {
						d.fail("the new state shares a hand's cards with the old one")
					}
				}
			}
		}
	}
}
