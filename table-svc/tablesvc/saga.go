package tablesvc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/oklog/ulid/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// The shell of the tables that run on a pure game core (package game;
// docs/game-core.md). The shell does what a core cannot: it loads and
// locks the table, turns each request into a command, places the hold a
// command waits for, stores state, events and the request's idempotency
// record in one transaction (save), carries out the effects the core asks
// for (advanceCore, with request ids derived from the state, so a retry
// after a crash repeats the same calls), feeds their results back as
// commands, applies a Tick when the core's deadline has passed, and makes
// each viewer's view. One shell serves every core through its adapter (the adapter interface, gamecore.go).

// addRanks adds the ranks of card codes to n.

func addRanks(n *[13]int, codes []string) {
	for _, code := range codes {
		if c, err := rules.ParseCard(code); err == nil {
			n[c.Rank-1]++
		}
	}
}

// mutateCore applies a request to a core table under its lock (mutate
// holds it): the command, its hold, the save with the idempotency record.
func (s *Service) mutateCore(ctx context.Context, c *change, method string, req proto.Message) error {
	caller, _ := auth.FromContext(ctx)
	if method == "CommitSeed" || method == "RevealSeed" {
		return s.mutateSeed(c, req) // seeds.go
	}
	// A seed commitment given with the request is checked before anything
	// is held, and taken with it (seeds.go).
	commitment := seedCommitmentOf(req)
	if r, ok := req.(playerRequest); ok && len(commitment) > 0 {
		if err := c.t.canCommit(r.GetPlayerId(), commitment); err != nil {
			return err
		}
	}
	cmd, err := c.t.adapter().command(c.t, method, req, caller)
	if err != nil {
		return err
	}
	if v, ok := cmd.(game.Voiding); ok {
		if err := s.voidable(ctx, c.t, v); err != nil {
			return err
		}
	}
	if err := s.applyCore(ctx, c, cmd); err != nil {
		return err
	}
	if r, ok := req.(playerRequest); ok {
		if len(commitment) > 0 {
			c.commit(r.GetPlayerId(), commitment)
		}
		if !caller.Is(auth.RoleCroupier, auth.RoleOperator) {
			c.t.touch(r.GetPlayerId(), c.now) // sessions.go
		}
	}
	switch method {
	case "VoidCoup", "CloseTable":
		// Staff actions are on the record, with who did them.
		r := req.(interface{ GetReason() string })
		action := map[string]string{"VoidCoup": "void_coup", "CloseTable": "close_table"}[method]
		c.emit("", &eventsv1.StaffAction{Action: action, ActorId: caller.Subject, ActorRole: string(caller.Role), Reason: r.GetReason()})
	case "LeaveTable":
		if p := req.(*tablev1.LeaveTableRequest).GetPlayerId(); caller.Is(auth.RoleCroupier, auth.RoleOperator) {
			c.emit("", &eventsv1.StaffAction{Action: "stand_up", ActorId: caller.Subject, ActorRole: string(caller.Role), Detail: "player " + p})
		}
	}
	return nil
}

// applyCore applies cmd to the table's core within change c: when the
// command waits for a hold, the hold is placed (under an escrow intent of
// the request, intent.go) and the command applied again with it. The
// core's events are emitted in c and the record follows its state.
func (s *Service) applyCore(ctx context.Context, c *change, cmd game.Command) error {
	t, gc := c.t, c.t.adapter()
	if p, ok := gc.(preparer); ok {
		var err error
		if cmd, err = p.prepare(ctx, s, c, cmd); err != nil {
			return err
		}
	}
	// New ids (a coup's) carry the shard, as the table's does, so that a
	// call naming only a coup (ListCardFates) is routed to its shard.
	in := game.Input{Now: c.now.UTC(), NewID: s.idPrefix + ulid.Make().String(), Cmd: cmd}
	events, h, err := gc.apply(t, in)
	if err != nil {
		return coreError(err)
	}
	if h != nil {
		hc, ok := cmd.(game.HoldCommand)
		if !ok {
			return fmt.Errorf("%s core asked a hold for %s", gc.name(), cmd.CommandName())
		}
		if err := realMoney(t); err != nil {
			return err
		}
		if err := t.realityCheckAnswered(h.PlayerID); err != nil {
			return err
		}
		coupID := gc.coupID(t)
		fresh := coupID == ""
		if fresh {
			coupID = in.NewID
		}
		// One hold per request of a caller: the wallet's request id is
		// derived from the request's idempotency key (a digest, to stay
		// within the wallet's id length).
		sum := sha256.Sum256([]byte(c.key))
		hold, round, err := s.hold(ctx, c, "table/"+t.ID+"/hold/"+hex.EncodeToString(sum[:16]), h.PlayerID, h.Amount, "tables/"+t.ID+"/coups/"+coupID, h.Bank)
		if err != nil {
			if fresh && round != "" && definite(err) {
				// The stake that was to open a coup under the round's id
				// was refused: the table opens none, the round is over.
				s.cancelStaked(round)
			}
			return err
		}
		if fresh && round != "" && round != in.NewID && s.stakedOnly(round) {
			// The hold of an earlier try of this request, whose round
			// was a fresh id of that try (no coup took it): the coup it
			// opens is that round. An earlier try made during a coup that
			// has ended since names that coup: the new coup keeps its own
			// id (it must never open a finished coup again). A first try
			// names in.NewID itself: nothing to read.
			in.NewID = round
		}
		failpoint("core-hold") // held, the request not stored yet
		failpoint("core-hold-" + cmd.CommandName())
		in.Cmd = hc.WithHold(hold)
		// Under the table's lock nothing changed since: it applies. (Were
		// it refused, the intent would stay and recoverIntents would void
		// the hold.)
		if events, _, err = gc.apply(t, in); err != nil {
			return coreError(err)
		}
	}
	for _, ev := range events {
		t.followSeats(ev.Payload, c.now)
		c.emit(ev.CoupID, ev.Payload)
		if _, voided := ev.Payload.(*eventsv1.CoupVoided); voided {
			// A voided coup's hole cards stay secret (but to auditors):
			// the odds count them as still in the shoe.
			h := gc.hidden(t, ev.CoupID, viewer{})
			for r := range h {
				t.ShoeVoidHidden[r] += h[r]
			}
		}
	}
	gc.sync(t)
	return nil
}

// voidable refuses the void of a coup the wallet has settled: a table
// stopped after it settled a coup and before it stored the result holds
// the coup as still dealing; the retry loop finishes it (the same cards,
// the settlement asked again answers as the first), so the void is
// refused FAILED_PRECONDITION WRONG_STATE and the table is queued for the
// retry loop. Without the wallet's answer nothing is voided
// (UNAVAILABLE).
func (s *Service) voidable(ctx context.Context, t *table, v game.Voiding) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	r, err := s.wallet.GetCoupSettlement(cctx, &walletv1.GetCoupSettlementRequest{CoupId: v.VoidedCoup(), OperatorId: t.walletOperator()})
	if err != nil {
		return fromDependency("ask whether the coup is settled", err)
	}
	if r.GetSettled() {
		s.markStuck(t.ID)
		return fail(codes.FailedPrecondition, reasonWrongState, "coup %s is settled at the wallet: the table is finishing it, it cannot be voided", v.VoidedCoup())
	}
	return nil
}

// noSide refuses a request naming a side of the table (a baccarat
// banque bet or seat) at a table of game, which has none: it is never
// read as that game's (the money would be held). WRONG_VARIANT.
func noSide(req proto.Message, game string) error {
	if r, ok := req.(interface{ GetSide() tablev1.BanqueSide }); ok && r.GetSide() != tablev1.BanqueSide_BANQUE_SIDE_UNSPECIFIED {
		return fail(codes.InvalidArgument, reasonWrongVariant, "side is baccarat banque's; this table plays %s", game)
	}
	return nil
}

// coreError maps a core's refusal to a gRPC status with its reason.
func coreError(err error) error {
	var ge *game.Error
	if !errors.As(err, &ge) {
		return err
	}
	code := map[game.Code]codes.Code{
		game.InvalidArgument: codes.InvalidArgument, game.FailedPrecondition: codes.FailedPrecondition,
		game.NotFound: codes.NotFound, game.AlreadyExists: codes.AlreadyExists,
		game.ResourceExhausted: codes.ResourceExhausted, game.PermissionDenied: codes.PermissionDenied,
	}[ge.Code]
	if code == codes.OK {
		code = codes.Internal
	}
	return fail(code, ge.Reason, "%s", ge.Msg)
}

// advanceCore carries out the effects the core asks for, one after the
// other, feeding each result back, until none is due or one fails. It
// reports whether the table changed, and whether an effect waits for the
// change to be stored (again: the caller saves and calls it again).
func (s *Service) advanceCore(ctx context.Context, c *change) (changed, again bool, err error) {
	for {
		eff := c.t.adapter().pending(c.t)
		if sf, ok := eff.(storedFirst); eff == nil || ok && sf.StoredFirst() && changed {
			again = eff != nil
			moved, err := s.react(ctx, c)
			if moved && !again && err == nil {
				changed = true
				continue // the reaction's own effects
			}
			return changed || moved, again && err == nil, err
		}
		cmd, err := s.carryOut(ctx, c, eff)
		if errors.Is(err, errAwaitingSeeds) {
			// The shoe's first card waits for its players' seeds
			// (seeds.go): the table goes on at a reveal or a deadline.
			moved, err := s.react(ctx, c)
			if moved && err == nil {
				changed = true
				continue
			}
			return changed || moved || c.seedsFixed, false, err
		}
		if err != nil {
			return changed, false, err
		}
		// Carried out, its result not stored yet (a crash test kills the
		// process here: failpoint_on.go).
		failpoint(coreStep(eff))
		if err := s.applyCore(ctx, c, cmd); err != nil {
			return changed, false, fmt.Errorf("%s: %w", eff.EffectName(), err)
		}
		changed = true
	}
}

// react is the shell's reaction to a coup settled in c, once the effects
// the core asked for are carried out (or wait): the game may make a
// banker whose limits no longer allow his bank give it up (bankKeeper),
// and the coup counts in its players' sessions with the reality checks
// it makes due (realitycheck.go). It runs once a change, on the change's
// events (a change settles one coup at most: every next coup waits for
// bets), before the change's one save, so what it writes is stored with
// the settlement. It reports whether it changed the table.
func (s *Service) react(ctx context.Context, c *change) (bool, error) {
	if c.reacted || !slices.ContainsFunc(c.events, func(ev *eventsv1.TableEvent) bool { return ev.GetCoupSettled() != nil }) {
		return false, nil
	}
	c.reacted = true
	n := len(c.events)
	if k, ok := c.t.adapter().(bankKeeper); ok {
		if err := k.keepBank(ctx, s, c); err != nil {
			return len(c.events) > n, err
		}
	}
	s.realityChecks(ctx, c)
	return len(c.events) > n || len(c.private) > 0, nil
}

// coreStep names an effect carried out and not yet stored, for the
// failpoints of the crash tests: "core-<effect>" ("core-settle"), a deal
// with the card's number in its coup, from its request id
// ("<coup_id>/card/3": "core-deal_card-3").
func coreStep(eff game.Effect) string {
	if d, ok := eff.(game.DealCard); ok {
		if i := strings.LastIndex(d.RequestID, "/card/"); i >= 0 {
			return "core-deal_card-" + d.RequestID[i+len("/card/"):]
		}
	}
	return "core-" + eff.EffectName()
}

// carryOut makes the calls of one effect (each idempotent by a request id
// derived from the table's state) and returns the command that reports
// its result: the effects every game shares here, the game's own by its
// core. The shoe's first card (or move) comes after its players' seeds
// (seeds.go).
func (s *Service) carryOut(ctx context.Context, c *change, eff game.Effect) (game.Command, error) {
	if d, ok := eff.(game.DealCard); ok {
		if ahead, ok := c.dealt[d.RequestID]; ok {
			// Dealt ahead with the coup's opening card (DealCards).
			delete(c.dealt, d.RequestID)
			if ahead.card.CoupID != d.CoupID || ahead.card.Hand != d.Hand {
				return nil, fmt.Errorf("card %s was dealt ahead for %s %s, asked for %s %s", d.RequestID,
					ahead.card.CoupID, ahead.card.Hand, d.CoupID, d.Hand)
			}
			return cardDealt(c.t, d, ahead.resp), nil
		}
	}
	if !shoeFirst(eff) {
		return s.carryOutEffect(ctx, c, eff)
	}
	if err := s.seedShoe(ctx, c); err != nil {
		return nil, err
	}
	cmd, err := s.carryOutEffect(ctx, c, eff)
	if err == nil && !c.t.Entropy.Seeded {
		s.noteSeeded(ctx, c)
	}
	return cmd, err
}

// carryOutEffect is carryOut of one effect, the players' seeds aside.
func (s *Service) carryOutEffect(ctx context.Context, c *change, eff game.Effect) (game.Command, error) {
	t := c.t
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	switch e := eff.(type) {
	case game.VoidHolds:
		for _, h := range e.HoldIDs {
			_, err := s.wallet.VoidHold(cctx, &walletv1.VoidHoldRequest{RequestId: "void/" + h, HoldId: h, OperatorId: t.walletOperator()})
			if err != nil && errs.Reason(err) != "HOLD_NOT_OPEN" {
				return nil, fmt.Errorf("void hold %s: %w", h, err)
			}
		}
		return game.HoldsVoided{}, nil
	case game.CloseShoe:
		if err := s.closeShoe(ctx, t, true); err != nil {
			return nil, err
		}
		return game.ShoeClosed{}, nil
	case game.NewShoe:
		if err := s.nextShoe(ctx, t); err != nil {
			return nil, err
		}
		return game.ShoeOpened{ShoeID: t.ShoeID, Number: int32(t.Shoes)}, nil
	case game.DealCard:
		resp, err := s.deal(cctx, c, e)
		n := e.RequestID[strings.LastIndex(e.RequestID, "/")+1:]
		if err != nil && t.adapter().renewsSpentShoe() && n == "1" && shoeSpent(err) {
			// A chemin de fer coup that has no card yet starts on a fresh
			// shoe when the current one is spent (e.g. after a voided
			// cut-card coup); its first card is then dealt again.
			if err := s.nextShoe(ctx, t); err != nil {
				return nil, err
			}
			if t.Entropy.Collecting {
				// The coup's bets are in: its players commit to the new
				// shoe in a round of its own (seeds.go).
				t.Entropy.CommitBy = c.now.Add(s.seedWindow)
			}
			return game.ShoeOpened{ShoeID: t.ShoeID, Number: int32(t.Shoes)}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("deal card %s of coup %s: %w", n, e.CoupID, err)
		}
		return cardDealt(t, e, resp), nil
	}
	cmd, ok, err := t.adapter().carryOut(cctx, s, t, eff)
	if !ok {
		return nil, fmt.Errorf("unknown effect %s", eff.EffectName())
	}
	return cmd, err
}

// deal deals the card of e; with the cards that follow it (e.Then, a
// coup's opening) in the same call (shoe-svc DealCards: one commit for
// them all), those kept in c.dealt until the core asks for them. Each
// card keeps its own request id, so a retry or a resumed coup gets the
// same cards whether dealt one by one or together.
func (s *Service) deal(ctx context.Context, c *change, e game.DealCard) (*shoev1.DealCardResponse, error) {
	req := func(d game.DealCard) *shoev1.DealCardRequest {
		return &shoev1.DealCardRequest{RequestId: d.RequestID, ShoeId: c.t.ShoeID, CoupId: d.CoupID, Hand: shoeHand(d.Hand)}
	}
	if len(e.Then) == 0 {
		return s.shoe.DealCard(ctx, req(e))
	}
	r := &shoev1.DealCardsRequest{ShoeId: c.t.ShoeID, Cards: []*shoev1.DealCardRequest{req(e)}}
	ahead := append([]game.DealCard(nil), e.Then...)
	if len(e.ThirdCards) > 0 && len(e.Then) == 3 {
		// The opening and the third cards the tableau forces, up to its
		// first option (shoe-svc applies the same rules engine; the hand
		// of each third card is the tableau's, in the answer).
		r.ThirdCards = &shoev1.ThirdCards{Tableau: shoev1.Tableau_TABLEAU_CHEMIN_DE_FER,
			BankerOption_3Vs_9: e.Tableau.BankerOption3vs9, BankerOption_5Vs_4: e.Tableau.BankerOption5vs4}
		if e.Tableau.PuntoBanco {
			r.ThirdCards = &shoev1.ThirdCards{Tableau: shoev1.Tableau_TABLEAU_PUNTO_BANCO}
		}
		ahead = append(ahead, e.ThirdCards...)
	}
	for _, d := range ahead {
		r.Cards = append(r.Cards, req(d))
	}
	resp, err := s.shoe.DealCards(ctx, r)
	if err != nil {
		return nil, err
	}
	if len(resp.GetCards()) == 0 || len(resp.GetCards()) > len(r.Cards) {
		return nil, fmt.Errorf("deal cards of coup %s: %d cards in the answer", e.CoupID, len(resp.GetCards()))
	}
	// A card the shoe could not deal (fewer cards answered) is asked for
	// alone when its turn comes: DealCard gives the reason. A third card
	// goes to the hand the shoe's tableau gave it; carryOut checks it is
	// the one the core asks for.
	for i, card := range resp.Cards[1:] {
		if c.dealt == nil {
			c.dealt = map[string]dealtAhead{}
		}
		d := ahead[i]
		if i >= len(e.Then) {
			d.Hand = card.GetHand()
		}
		c.dealt[d.RequestID] = dealtAhead{d, card}
	}
	return resp.Cards[0], nil
}

// cardDealt counts a dealt card for the odds and is the command that
// reports it to the core.
func cardDealt(t *table, e game.DealCard, resp *shoev1.DealCardResponse) game.Command {
	code := resp.GetCard().GetCode()
	if card, err := rules.ParseCard(code); err == nil {
		t.ShoeDealt[card.Rank-1]++
	}
	failpoint("card-" + e.RequestID[strings.LastIndex(e.RequestID, "/")+1:])
	return game.CardDealt{Code: code, CutCardOut: resp.GetCutCardOut()}
}

// syncCore copies what the shared machinery reads (the phase, the shoe,
// the counters) from a core's state to the table's record.
func syncCore(t *table, phase int8, b game.Bookkeeping, played, seq int64) {
	t.Phase = tablev1.TableState(phase)
	t.ShoeID, t.Shoes, t.ShoeToClose = b.ShoeID, int(b.ShoeNumber), b.ShoeToClose
	t.CoupsPlayed, t.CoupSeq = played, seq
}

// playerRequest is what every player action has.
type playerRequest interface {
	proto.Message
	GetRequestId() string
	GetTableId() string
	GetPlayerId() string
}

// realMoney refuses money on a certification table whose house rules do
// not allow it: FAILED_PRECONDITION CERTIFICATION_TABLE.
func realMoney(t *table) error {
	if t.Certification && !t.Rules.CertRealMoney {
		return fail(codes.FailedPrecondition, reasonCertificationTable,
			"the table deals from a certification shoe (a prepared order) and takes no money: house rule certification_real_money is off")
	}
	return nil
}

// advance moves a table through every step that needs no decision:
// releasing cancelled holds, dealing, drawing by the tableau, settling,
// opening the next shoe. The caller holds the table's lock. Every call it
// makes is idempotent, so after a crash it is simply called again.
func (s *Service) advance(ctx context.Context, id string) error {
	_, err := s.advanceFrom(ctx, id, nil)
	return err
}

// advanceFrom is advance from t, the table exactly as stored (nil: read
// from the store), and returns the table as stored after it (nil with an
// error): a caller that has just saved the table reads it no more.
func (s *Service) advanceFrom(ctx context.Context, id string, t *table) (*table, error) {
	for {
		var again bool
		var err error
		t, again, err = s.advancePass(ctx, id, t)
		if err != nil {
			s.markStuck(id)
			return nil, err
		}
		if !again {
			s.unstick(id)
			return t, nil
		}
	}
}

// advancePass carries out the effects the table's core asks for, from the
// stored table (t, or read when nil), and saves once; it returns the
// table as stored after it. It reports whether another pass is due: an
// effect that must start from a stored state (seat fees, billed by the
// clock, so that a retried charge is the same request) waits for it.
func (s *Service) advancePass(ctx context.Context, id string, t *table) (_ *table, again bool, err error) {
	if t == nil {
		if t, err = s.load(id); err != nil {
			return nil, false, err
		}
	}
	c := &change{t: t, now: s.now()}
	changed, again, err := s.advanceCore(ctx, c)
	// The effects' calls are idempotent, so one save for all of them keeps
	// the coup crash-safe: after a crash they are simply made again and
	// answer the same.
	if changed {
		if serr := s.save(c, "", nil, nil); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		return nil, false, err
	}
	return t, again, nil
}

// markStuck queues a table for the retry loop, noting when it first
// failed to advance.
func (s *Service) markStuck(id string) {
	s.mu.Lock()
	if _, ok := s.stuck[id]; !ok {
		s.stuck[id] = s.now()
	}
	s.mu.Unlock()
}

func (s *Service) unstick(id string) {
	s.mu.Lock()
	delete(s.stuck, id)
	s.mu.Unlock()
}
