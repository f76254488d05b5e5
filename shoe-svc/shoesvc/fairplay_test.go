package shoesvc

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

var (
	operator = auth.Caller{Subject: "olga", Role: auth.RoleOperator}
	croupier = auth.Caller{Subject: "carl", Role: auth.RoleCroupier}
	alice    = auth.Caller{Subject: "alice", Role: auth.RolePlayer}
	bob      = auth.Caller{Subject: "bob", Role: auth.RolePlayer}
)

// clock is a settable clock for cut deadlines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClockEnv(t *testing.T, seed func() []byte, sweep time.Duration) (shoev1.ShoeServiceClient, *Service, *clock) {
	clk := &clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	o := testOptions(seed)
	o.now, o.sweep = clk.now, sweep
	s := startWith(t, filepath.Join(t.TempDir(), "shoe.db"), o)
	return dial(t, s.Addr()), s, clk
}

func reveal(t *testing.T, c shoev1.ShoeServiceClient, id string) *shoev1.ShoeReveal {
	t.Helper()
	r, err := c.GetShoeReveal(as(auth.Caller{Subject: "audrey", Role: auth.RoleAuditor}), &shoev1.GetShoeRevealRequest{ShoeId: id})
	if err != nil {
		t.Fatal(err)
	}
	if err := fair.Verify(FairReveal(r.Reveal)); err != nil {
		t.Fatalf("reveal does not verify: %v", err)
	}
	return r.Reveal
}

func closeShoe(t *testing.T, c shoev1.ShoeServiceClient, id string) *shoev1.Shoe {
	t.Helper()
	r, err := c.CloseShoe(as(tableSvc), &shoev1.CloseShoeRequest{ShoeId: id, RequestId: "close"})
	if err != nil {
		t.Fatal(err)
	}
	return r.Shoe
}

// SHOE-DECKS per variant: chemin de fer and punto banco 6 or 8, banque 3,
// the old game 2.
func TestSHOEDecksVariants(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	for _, tc := range []struct {
		v     shoev1.Variant
		decks int32
		want  int32
		ok    bool
	}{
		{shoev1.Variant_VARIANT_UNSPECIFIED, 0, 6, true}, {shoev1.Variant_VARIANT_CHEMIN_DE_FER, 8, 8, true},
		{shoev1.Variant_VARIANT_PUNTO_BANCO, 0, 6, true}, {shoev1.Variant_VARIANT_PUNTO_BANCO, 8, 8, true},
		{shoev1.Variant_VARIANT_BANQUE, 0, 3, true}, {shoev1.Variant_VARIANT_BANQUE, 3, 3, true},
		{shoev1.Variant_VARIANT_OLD, 0, 2, true}, {shoev1.Variant_VARIANT_OLD, 2, 2, true},
		{shoev1.Variant_VARIANT_UNSPECIFIED, 3, 0, false}, {shoev1.Variant_VARIANT_PUNTO_BANCO, 2, 0, false},
		{shoev1.Variant_VARIANT_BANQUE, 6, 0, false}, {shoev1.Variant_VARIANT_OLD, 8, 0, false}, {shoev1.Variant(9), 0, 0, false},
	} {
		r := &shoev1.CreateShoeRequest{RequestId: fmt.Sprint(tc), Variant: tc.v, Decks: tc.decks}
		resp, err := c.CreateShoe(as(tableSvc), r)
		if !tc.ok {
			wantErr(t, err, codes.InvalidArgument, "INVALID_HOUSE_RULE")
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc, err)
		}
		if s := resp.Shoe; s.Decks != tc.want || int(s.CardsTotal)+len(s.Burned) != 52*int(tc.want) {
			t.Fatalf("%v: shoe %v", tc, s)
		}
		// Every card of the decks is accounted for at the end.
		dealAll(t, c, resp.Shoe)
		rv := reveal(t, c, resp.Shoe.ShoeId)
		if len(rv.Dealt)+len(rv.Burned) != 52*int(tc.want) || rv.CardsLeft != 0 {
			t.Fatalf("%v: reveal accounts for %d cards", tc, len(rv.Dealt)+len(rv.Burned))
		}
	}
}

// SHOE-CUT: a named player cuts where he chooses, only he, only once.
func TestSHOECutByPlayer(t *testing.T) {
	c, _, _ := newClockEnv(t, fixedSeed(11), time.Hour)
	shoe := create(t, c, &shoev1.CreateShoeRequest{CutterPlayerId: "alice", ClientSeed: "alice's seed",
		CutTimeLimit: durationpb.New(20 * time.Second)})
	if shoe.State != shoev1.ShoeState_SHOE_STATE_AWAITING_CUT || len(shoe.Burned) != 0 || shoe.CardsTotal != 312 ||
		shoe.CutDeadline == nil || len(shoe.Commitment) != 32 {
		t.Fatalf("shoe = %v", shoe)
	}
	_, err := c.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: "x/card/1"})
	wantErr(t, err, codes.FailedPrecondition, "SHOE_NOT_CUT")
	_, err = c.Cut(as(bob), &shoev1.CutRequest{RequestId: "b", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 5})
	if codeOf(err) != codes.PermissionDenied {
		t.Fatalf("bob cutting for alice: %v", err)
	}
	_, err = c.Cut(as(bob), &shoev1.CutRequest{RequestId: "b", ShoeId: shoe.ShoeId, PlayerId: "bob", Position: 5})
	wantErr(t, err, codes.PermissionDenied, "NOT_THE_CUTTER")
	_, err = c.Cut(as(alice), &shoev1.CutRequest{RequestId: "a", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 312})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	_, err = c.Cut(as(alice), &shoev1.CutRequest{RequestId: "a", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 100,
		PlayerSeed: strings.Repeat("x", 257)})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")

	cutReq := &shoev1.CutRequest{RequestId: "a", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 100, PlayerSeed: "a1c3-fresh"}
	resp, err := c.Cut(as(alice), cutReq)
	if err != nil {
		t.Fatal(err)
	}
	cut := resp.Shoe
	order, _ := fair.Shuffle(6, fair.Seeds{Server: fixedSeed(11)(), Client: "alice's seed", Players: []string{"a1c3-fresh"}})
	loaded, _ := fair.Cards(fair.Cut(order, 100))
	if cut.State != shoev1.ShoeState_SHOE_STATE_OPEN || cut.CutPosition != 100 || cut.CutRandom || cut.CutBy != "alice" ||
		len(cut.Burned) != 3 || cut.CardsTotal != 309 || !bytes.Equal(cut.Commitment, shoe.Commitment) ||
		!bytes.Equal(cut.Commitment, fair.Commit(fixedSeed(11)())) || !slices.Equal(cut.PlayerSeeds, []string{"a1c3-fresh"}) {
		t.Fatalf("after the cut: %v", cut)
	}
	for i, b := range cut.Burned {
		if fromProto(t, b) != loaded[i] {
			t.Fatalf("burned[%d] = %s, want %s", i, b.Code, loaded[i])
		}
	}
	if d := deal(t, c, shoe.ShoeId, "c1/card/1"); fromProto(t, d.Card) != loaded[3] {
		t.Fatalf("first card %s, want %s", d.Card.Code, loaded[3])
	}
	again, err := c.Cut(as(alice), cutReq)
	if err != nil || !proto.Equal(again, resp) {
		t.Fatalf("retry: %v %v", again, err)
	}
	_, err = c.Cut(as(tableSvc), &shoev1.CutRequest{RequestId: "k", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 1})
	wantErr(t, err, codes.FailedPrecondition, "ALREADY_CUT")
	// The table service dealt from it: it is the table's now.
	_, err = c.Cut(as(croupier), &shoev1.CutRequest{RequestId: "k", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 1})
	wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
}

func codeOf(err error) codes.Code { return statusCode(err) }

// SHOE-CUT: when the cutter's time runs out the shoe is cut at random
// (the stream's draw after the shuffle): by the call that finds it late,
// or by the sweep.
func TestSHOECutTimeout(t *testing.T) {
	c, _, clk := newClockEnv(t, fixedSeed(12), 10*time.Millisecond)
	order, st := fair.Shuffle(6, fair.Seeds{Server: fixedSeed(12)()})
	p := fair.RandomCut(st, len(order))
	req := func(id string) *shoev1.CreateShoeRequest {
		return &shoev1.CreateShoeRequest{RequestId: id, CutterPlayerId: "alice"} // default 30 s
	}
	late := create(t, c, req("late"))
	swept := create(t, c, req("swept"))
	clk.add(29 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if s := getShoe(t, c, swept.ShoeId); s.State != shoev1.ShoeState_SHOE_STATE_AWAITING_CUT {
		t.Fatalf("cut before the deadline: %v", s)
	}
	clk.add(time.Second)
	_, err := c.Cut(as(alice), &shoev1.CutRequest{RequestId: "a", ShoeId: late.ShoeId, PlayerId: "alice", Position: 3, PlayerSeed: "too late"})
	if err != nil {
		// The sweep may have cut it first.
		if r := statusReason(err); r != "CUT_TIME_EXPIRED" && r != "ALREADY_CUT" {
			t.Fatalf("late cut: %v", err)
		}
	} else {
		t.Fatal("late cut accepted")
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, id := range []string{late.ShoeId, swept.ShoeId} {
		for {
			s := getShoe(t, c, id)
			if s.State == shoev1.ShoeState_SHOE_STATE_OPEN {
				if !s.CutRandom || s.CutPosition != int32(p) || s.CutBy != "" || len(s.Burned) != 3 || len(s.PlayerSeeds) != 0 {
					t.Fatalf("random cut: %v, want position %d", s, p)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("shoe %s never cut: %v", id, s)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// A deal on an expired, uncut shoe cuts it first.
	third := create(t, c, req("third"))
	clk.add(time.Minute)
	d := deal(t, c, third.ShoeId, "c/card/1")
	if d.Position != 0 {
		t.Fatalf("deal %v", d)
	}
	// A random cut has no player entropy, and the reveal says so.
	closeReq := &shoev1.CloseShoeRequest{RequestId: "c", ShoeId: late.ShoeId, Force: true, Reason: "test"}
	if _, err := c.CloseShoe(as(operator), closeReq); err != nil {
		t.Fatal(err)
	}
	if rv := reveal(t, c, late.ShoeId); len(rv.PlayerSeeds) != 0 || !rv.CutRandom {
		t.Fatalf("reveal of a random cut: %v", rv)
	}
}

// SHOE-BURN by first card value: the first card is shown and burned with
// as many more as its value.
func TestSHOEBurnByFirstCard(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	for i := range 20 {
		shoe := create(t, c, &shoev1.CreateShoeRequest{BurnMode: shoev1.BurnMode_BURN_MODE_BY_FIRST_CARD, Decks: 8})
		first := fromProto(t, shoe.Burned[0])
		if want := 1 + fair.BurnValue(byte(first.Index())); len(shoe.Burned) != want || int(shoe.CardsTotal) != 416-want {
			t.Fatalf("shoe %d: first %s, %d burned, want %d", i, first, len(shoe.Burned), want)
		}
	}
	_, err := c.CreateShoe(as(tableSvc), &shoev1.CreateShoeRequest{RequestId: "b", BurnMode: shoev1.BurnMode_BURN_MODE_BY_FIRST_CARD, Burn: 3})
	wantErr(t, err, codes.InvalidArgument, "INVALID_HOUSE_RULE")
}

// SHOE-RESHUFFLE: no close before 5/6 (unless an operator forces it with
// a reason); once the cut card is out only its coup is completed; then the
// shoe closes and deals nothing more.
func TestSHOEReshuffleClose(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := create(t, c, &shoev1.CreateShoeRequest{})
	closeReq := func(id string, force bool, reason string) *shoev1.CloseShoeRequest {
		return &shoev1.CloseShoeRequest{RequestId: id, ShoeId: shoe.ShoeId, Force: force, Reason: reason}
	}
	_, err := c.CloseShoe(as(tableSvc), closeReq("early", false, ""))
	wantErr(t, err, codes.FailedPrecondition, "RESHUFFLE_TOO_EARLY")
	_, err = c.CloseShoe(as(croupier), closeReq("force", true, "spill"))
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = c.CloseShoe(as(operator), closeReq("force", true, ""))
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")

	// 312 cards: 5/6 is 260 out, 3 burned: 257 dealt. Coups of 5 cards.
	coupOfCard := func(i int) string { return fmt.Sprintf("coup-%d", i/5) }
	for i := range 256 {
		deal(t, c, shoe.ShoeId, fmt.Sprintf("%s/card/%d", coupOfCard(i), i%5))
	}
	_, err = c.CloseShoe(as(tableSvc), closeReq("early2", false, ""))
	wantErr(t, err, codes.FailedPrecondition, "RESHUFFLE_TOO_EARLY")
	T, C := int(shoe.CardsTotal), int(shoe.CutCardFromEnd)
	var cutCoup string
	for i := 256; i < T-C; i++ {
		r := deal(t, c, shoe.ShoeId, fmt.Sprintf("%s/card/%d", coupOfCard(i), i%5))
		if r.CutCardOut {
			cutCoup = coupOfCard(i)
		}
	}
	if got := getShoe(t, c, shoe.ShoeId); !got.CutCardOut || got.CutCardCoupId != cutCoup {
		t.Fatalf("cut card out in %q: %v", cutCoup, got)
	}
	_, err = c.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: "next-coup/card/0"})
	wantErr(t, err, codes.FailedPrecondition, "CUT_CARD_OUT")
	deal(t, c, shoe.ShoeId, cutCoup+"/card/extra") // the cut card's coup goes on
	closed := closeShoe(t, c, shoe.ShoeId)
	if closed.State != shoev1.ShoeState_SHOE_STATE_CLOSED || closed.CloseReason != "cut card out" || closed.CloseTime == nil {
		t.Fatalf("closed = %v", closed)
	}
	_, err = c.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: cutCoup + "/card/more"})
	wantErr(t, err, codes.FailedPrecondition, "SHOE_CLOSED")
	again, err := c.CloseShoe(as(tableSvc), closeReq("another", false, ""))
	if err != nil || !proto.Equal(again.Shoe, closed) {
		t.Fatalf("closing again: %v %v", again, err)
	}
	rv := reveal(t, c, shoe.ShoeId)
	if int(rv.CardsLeft) != C-1 || len(rv.Dealt) != T-C+1 {
		t.Fatalf("reveal: %d left, %d dealt", rv.CardsLeft, len(rv.Dealt))
	}

	// 5/6 reached without the cut card: a close is allowed; a forced
	// close by an operator with a reason works any time.
	s2 := create(t, c, &shoev1.CreateShoeRequest{CutCardFromEnd: 16})
	for i := range 257 {
		deal(t, c, s2.ShoeId, fmt.Sprint(i))
	}
	if r, err := c.CloseShoe(as(tableSvc), &shoev1.CloseShoeRequest{RequestId: "c", ShoeId: s2.ShoeId}); err != nil || r.Shoe.CloseReason != "5/6 dealt" {
		t.Fatalf("close at 5/6: %v %v", r, err)
	}
	reveal(t, c, s2.ShoeId)
	s3 := create(t, c, &shoev1.CreateShoeRequest{CutterPlayerId: "bob"})
	r, err := c.CloseShoe(as(operator), &shoev1.CloseShoeRequest{RequestId: "c", ShoeId: s3.ShoeId, Force: true, Reason: "table closed"})
	if err != nil || r.Shoe.CloseReason != "forced: table closed" || !r.Shoe.CutRandom {
		t.Fatalf("forced close: %v %v", r, err)
	}
	if rv := reveal(t, c, s3.ShoeId); rv.CardsLeft != 309 || len(rv.Dealt) != 0 {
		t.Fatalf("forced reveal %v", rv)
	}
}

// The order of an open shoe is in no response: reveal refused, fates only
// of burned and dealt cards, no seed bytes anywhere.
func TestOpenShoeOrderSecret(t *testing.T) {
	c, _, _ := newEnv(t, fixedSeed(21))
	seed := fixedSeed(21)()
	shoe := create(t, c, &shoev1.CreateShoeRequest{ClientSeed: "t"})
	deal(t, c, shoe.ShoeId, "k/card/1")
	_, err := c.GetShoeReveal(as(operator), &shoev1.GetShoeRevealRequest{ShoeId: shoe.ShoeId})
	wantErr(t, err, codes.FailedPrecondition, "SHOE_NOT_CLOSED")
	// A table's open shoe lists its fates to the table alone.
	fates, err := c.ListCardFates(as(tableSvc), &shoev1.ListCardFatesRequest{ShoeId: shoe.ShoeId})
	if err != nil || len(fates.Fates) != 4 {
		t.Fatalf("fates of an open shoe: %v %v", fates, err)
	}
	order, _ := fair.Shuffle(6, fair.Seeds{Server: seed, Client: "t"})
	for _, m := range []proto.Message{shoe, getShoe(t, c, shoe.ShoeId), fates} {
		b, _ := proto.Marshal(m)
		if bytes.Contains(b, seed[:16]) || bytes.Contains(b, order[:16]) {
			t.Fatalf("%T carries the seed or the order", m)
		}
	}
	from := fromOrder(t, c, fullDecksOrder(2), 0)
	dealAll(t, c, from)
	_, err = c.GetShoeReveal(as(operator), &shoev1.GetShoeRevealRequest{ShoeId: from.ShoeId})
	wantErr(t, err, codes.FailedPrecondition, "NOT_PROVABLY_FAIR")
}

// Every card's fate is stored and queryable per shoe and per coup.
func TestCardFates(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	// A staff shoe (an operator deals it and may force it closed).
	shoe := createAs(t, c, operator, &shoev1.CreateShoeRequest{Decks: 8})
	hands := []string{"player", "banker", "player", "banker", "player"}
	for i := range 300 {
		r := &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: fmt.Sprintf("id-%d", i), Hand: hands[i%5]}
		if i < 10 {
			r.CoupId = "explicit"
		} else {
			r.RequestId = fmt.Sprintf("coup-%d/card/%d", i/5, i%5) // coup inferred
		}
		if _, err := c.DealCard(as(operator), r); err != nil {
			t.Fatal(err)
		}
	}
	closeReq := &shoev1.CloseShoeRequest{RequestId: "c", ShoeId: shoe.ShoeId, Force: true, Reason: "test"}
	if _, err := c.CloseShoe(as(operator), closeReq); err != nil {
		t.Fatal(err)
	}
	rv := reveal(t, c, shoe.ShoeId)
	all, err := c.ListCardFates(as(alice), &shoev1.ListCardFatesRequest{ShoeId: shoe.ShoeId})
	if err != nil || len(all.Fates) != 416 {
		t.Fatalf("%d fates, %v", len(all.GetFates()), err)
	}
	var per [52]int
	count := map[shoev1.Fate]int{}
	for i, f := range all.Fates {
		if int(f.LoadPosition) != i {
			t.Fatalf("fate %d at load position %d", i, f.LoadPosition)
		}
		card := fromProto(t, f.Card)
		per[card.Index()]++
		count[f.Fate]++
		if f.Fate == shoev1.Fate_FATE_DEALT && (rv.Dealt[f.DealtPosition] != f.Card.Code || f.Hand != hands[f.DealtPosition%5]) {
			t.Fatalf("fate %v vs reveal", f)
		}
	}
	for i, n := range per {
		if n != 8 {
			c, _ := rules.CardFromIndex(i)
			t.Fatalf("card %s accounted %d times", c, n)
		}
	}
	if count[shoev1.Fate_FATE_BURNED] != 3 || count[shoev1.Fate_FATE_DEALT] != 300 || count[shoev1.Fate_FATE_LEFT] != 113 {
		t.Fatalf("fates %v", count)
	}
	for coup, n := range map[string]int{"explicit": 10, "coup-7": 5, "coup-59": 5, "none": 0} {
		got, err := c.ListCardFates(as(auth.Caller{Subject: "a", Role: auth.RoleAuditor}), &shoev1.ListCardFatesRequest{CoupId: coup})
		if err != nil || len(got.Fates) != n {
			t.Fatalf("coup %s: %d fates, %v", coup, len(got.GetFates()), err)
		}
		for _, f := range got.Fates {
			if f.CoupId != coup || f.Fate != shoev1.Fate_FATE_DEALT {
				t.Fatalf("coup %s: %v", coup, f)
			}
		}
	}
	_, err = c.ListCardFates(as(alice), &shoev1.ListCardFatesRequest{ShoeId: "x", CoupId: "y"})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	_, err = c.ListCardFates(as(alice), &shoev1.ListCardFatesRequest{ShoeId: "nope"})
	wantErr(t, err, codes.NotFound, "SHOE_NOT_FOUND")
}

// Events: shoe_opened (commitment, no seed), cards_burned, cut_card_out,
// shoe_closed (a reveal that verifies), in the outbox with the state.
func TestShoeEvents(t *testing.T) {
	c, s, _ := newEnv(t, nil)
	shoe := create(t, c, &shoev1.CreateShoeRequest{CutterPlayerId: "alice", Owner: "table-1"})
	if _, err := c.Cut(as(alice), &shoev1.CutRequest{RequestId: "a", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 7,
		PlayerSeed: "alice 9d2e"}); err != nil {
		t.Fatal(err)
	}
	dealAll(t, c, getShoe(t, c, shoe.ShoeId))
	msgs, err := outbox.Pending(s.db, 100)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, m := range msgs {
		ev := &eventsv1.ShoeEvent{}
		if err := proto.Unmarshal(m.Payload, ev); err != nil {
			t.Fatal(err)
		}
		kind := m.Subject[len("chemmy.shoe."+shoe.ShoeId+"."):]
		kinds = append(kinds, kind)
		if m.ID != shoe.ShoeId+"/"+kind || ev.EventId != m.ID || ev.ShoeId != shoe.ShoeId {
			t.Fatalf("event %s: %v", m.Subject, ev)
		}
		switch p := ev.Payload.(type) {
		case *eventsv1.ShoeEvent_ShoeOpened:
			o := p.ShoeOpened
			if !bytes.Equal(o.Commitment, shoe.Commitment) || o.CutterPlayerId != "alice" || !o.OwnedByTable ||
				o.CreatedBy != "table-svc" || o.Owner != "table-1" || o.Certification || o.TestShoe {
				t.Fatalf("opened %v", p)
			}
		case *eventsv1.ShoeEvent_CardsBurned:
			if p.CardsBurned.CutPosition != 7 || p.CardsBurned.CutBy != "alice" || len(p.CardsBurned.Burned) != 3 ||
				!slices.Equal(p.CardsBurned.PlayerSeeds, []string{"alice 9d2e"}) {
				t.Fatalf("burned %v", p)
			}
		case *eventsv1.ShoeEvent_ShoeClosed:
			if err := fair.Verify(FairReveal(p.ShoeClosed.Reveal)); err != nil || p.ShoeClosed.Reason != "exhausted" ||
				!slices.Equal(p.ShoeClosed.Reveal.PlayerSeeds, []string{"alice 9d2e"}) {
				t.Fatalf("closed %v: %v", p.ShoeClosed.Reason, err)
			}
		}
	}
	if fmt.Sprint(kinds) != "[shoe_opened cards_burned cut_card_out shoe_closed]" {
		t.Fatalf("events %v", kinds)
	}
}

// Roles of the new methods (the service checks them again behind the
// gateway).
func TestRolesFairPlay(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := create(t, c, &shoev1.CreateShoeRequest{CutterPlayerId: "someone"})
	for _, tc := range []struct {
		role auth.Role
		call func(ctx context.Context) error
		ok   bool
	}{
		{auth.RoleAuditor, func(ctx context.Context) error {
			_, err := c.Cut(ctx, &shoev1.CutRequest{RequestId: "r", ShoeId: shoe.ShoeId, PlayerId: "someone"})
			return err
		}, false},
		{auth.RolePlayer, func(ctx context.Context) error {
			_, err := c.CloseShoe(ctx, &shoev1.CloseShoeRequest{RequestId: "r", ShoeId: shoe.ShoeId})
			return err
		}, false},
		{auth.RoleAuditor, func(ctx context.Context) error {
			_, err := c.CloseShoe(ctx, &shoev1.CloseShoeRequest{RequestId: "r", ShoeId: shoe.ShoeId})
			return err
		}, false},
		{auth.RolePlayer, func(ctx context.Context) error {
			_, err := c.ListCardFates(ctx, &shoev1.ListCardFatesRequest{ShoeId: shoe.ShoeId})
			return err
		}, true},
		{auth.RolePlayer, func(ctx context.Context) error {
			_, err := c.Cut(ctx, &shoev1.CutRequest{RequestId: "r", ShoeId: shoe.ShoeId, PlayerId: "someone", Position: 2})
			return err
		}, true},
	} {
		err := tc.call(as(auth.Caller{Subject: "someone", Role: tc.role}))
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.role, err)
		}
		if !tc.ok {
			wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
		}
	}
}

func statusCode(err error) codes.Code { return status.Code(err) }

func statusReason(err error) string {
	if i := errs.Info(err); i != nil {
		return i.Reason
	}
	return ""
}

// SHOE-SHUFFLE with the player's part: the commitment (SHA-256 of the
// server seed) is published before the cutter's seed is known; the order
// is fixed by his seed at the cut. Same server seed, same client seed,
// same cut position: another player seed, another shoe. The shoe, the
// cards_burned event and the reveal carry the seed; the reveal verifies
// and names it. A cut without seed adds no player entropy.
func TestPlayerSeedFixesOrder(t *testing.T) {
	c, _, _ := newEnv(t, fixedSeed(41))
	seed := fixedSeed(41)()
	var firsts [][]string
	for i, ps := range []string{"alice 5be0c1d2", "alice 5be0c1d3", ""} {
		shoe := create(t, c, &shoev1.CreateShoeRequest{Owner: "T", ClientSeed: "table/T/shoe/1", CutterPlayerId: "alice"})
		if !bytes.Equal(shoe.Commitment, fair.Commit(seed)) || len(shoe.PlayerSeeds) != 0 || len(shoe.Burned) != 0 {
			t.Fatalf("opened: %v", shoe)
		}
		resp, err := c.Cut(as(alice), &shoev1.CutRequest{RequestId: fmt.Sprint(i), ShoeId: shoe.ShoeId, PlayerId: "alice",
			Position: 57, PlayerSeed: ps})
		if err != nil {
			t.Fatal(err)
		}
		var players []string
		if ps != "" {
			players = []string{ps}
		}
		if !slices.Equal(resp.Shoe.PlayerSeeds, players) || !bytes.Equal(resp.Shoe.Commitment, shoe.Commitment) {
			t.Fatalf("cut: %v", resp.Shoe)
		}
		order, _ := fair.Shuffle(6, fair.Seeds{Server: seed, Client: "table/T/shoe/1", Players: players})
		loaded, _ := fair.Cards(fair.Cut(order, 57))
		dealt, _ := dealAll(t, c, resp.Shoe)
		if !slices.Equal(dealt, loaded[3:]) {
			t.Fatalf("seed %q: the shoe dealt another order than the seeds give", ps)
		}
		rv := reveal(t, c, shoe.ShoeId)
		if !slices.Equal(rv.PlayerSeeds, players) || !bytes.Equal(rv.Order, order) || rv.CutBy != "alice" {
			t.Fatalf("reveal %v", rv)
		}
		var codes []string
		for _, d := range dealt[:20] {
			codes = append(codes, d.String())
		}
		firsts = append(firsts, codes)
	}
	if slices.Equal(firsts[0], firsts[1]) || slices.Equal(firsts[0], firsts[2]) {
		t.Fatal("the player's seed does not change the order")
	}
}
