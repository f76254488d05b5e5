package shoesvc

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

// TestTableShoeOwnership: a shoe the table service opened for a table is
// dealt and closed by the table service only. An operator's or a
// croupier's DealCard (also replaying the table's own request_id, which
// would show the table's face-down card) and CloseShoe (at 5/6, in the
// middle of a coup; forced) are refused with SHOE_OWNED_BY_TABLE, and the
// table's coup goes on at the very next card, which is the one the
// shuffle put there. The table then closes the shoe between coups.
func TestTableShoeOwnership(t *testing.T) {
	c, _, _ := newEnv(t, fixedSeed(31))
	want := loadedOrder(t, 6, fixedSeed(31)(), "table/T1/shoe/1")
	shoe := create(t, c, &shoev1.CreateShoeRequest{RequestId: "table/T1/shoe/1", Owner: "T1", ClientSeed: "table/T1/shoe/1"})
	if !shoe.OwnedByTable || shoe.CreatedBy != "table-svc" || shoe.Owner != "T1" || shoe.Certification {
		t.Fatalf("table's shoe: %v", shoe)
	}
	// The table deals coups of 5 cards up to 5/6 of the shoe (260 of 312
	// out with the 3 burned: 257 dealt), and stops in the middle of the
	// coup of the 258th card.
	rid := func(i int) string { return fmt.Sprintf("coup-%d/card/%d", i/5, i%5) }
	for i := range 258 {
		if d := deal(t, c, shoe.ShoeId, rid(i)); fromProto(t, d.Card) != want[3+i] {
			t.Fatalf("card %d: %s, want %s", i, d.Card.Code, want[3+i])
		}
	}
	before := getShoe(t, c, shoe.ShoeId)
	staff := []auth.Caller{operator, croupier,
		{Subject: "wallet-svc", Role: auth.RoleService}, // a service that is not the table's
	}
	for _, who := range staff {
		_, err := c.DealCard(as(who), &shoev1.DealCardRequest{RequestId: "peek-" + who.Subject, ShoeId: shoe.ShoeId})
		wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
		_, err = c.DealCard(as(who), &shoev1.DealCardRequest{RequestId: rid(257), ShoeId: shoe.ShoeId})
		wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
		_, err = c.CloseShoe(as(who), &shoev1.CloseShoeRequest{RequestId: "close-" + who.Subject, ShoeId: shoe.ShoeId})
		wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	}
	_, err := c.CloseShoe(as(operator), &shoev1.CloseShoeRequest{RequestId: "force", ShoeId: shoe.ShoeId, Force: true, Reason: "mid-coup"})
	wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	if after := getShoe(t, c, shoe.ShoeId); !proto.Equal(after, before) || after.State != shoev1.ShoeState_SHOE_STATE_OPEN {
		t.Fatalf("the refused calls changed the shoe: %v", after)
	}
	// The coup goes on at the next card, as shuffled.
	for i := 258; i < 260; i++ {
		d := deal(t, c, shoe.ShoeId, rid(i))
		if int(d.Position) != i || fromProto(t, d.Card) != want[3+i] {
			t.Fatalf("the table's card %d: %v, want %s at %d", i, d, want[3+i], i)
		}
	}
	// While it is open its dealt cards (the coup in play's face-down
	// cards among them) are the table's alone.
	for _, who := range []auth.Caller{croupier, alice, {Subject: "a", Role: auth.RoleAuditor}} {
		_, err := c.ListCardFates(as(who), &shoev1.ListCardFatesRequest{ShoeId: shoe.ShoeId})
		wantErr(t, err, codes.FailedPrecondition, "SHOE_NOT_CLOSED")
		_, err = c.ListCardFates(as(who), &shoev1.ListCardFatesRequest{CoupId: "coup-51"})
		wantErr(t, err, codes.FailedPrecondition, "SHOE_NOT_CLOSED")
	}
	if _, err := c.ListCardFates(as(tableSvc), &shoev1.ListCardFatesRequest{ShoeId: shoe.ShoeId}); err != nil {
		t.Fatal(err)
	}
	// Between coups the table closes it (5/6 out).
	closed, err := c.CloseShoe(as(tableSvc), &shoev1.CloseShoeRequest{RequestId: "table/T1/close/1", ShoeId: shoe.ShoeId})
	if err != nil || closed.Shoe.State != shoev1.ShoeState_SHOE_STATE_CLOSED || closed.Shoe.CloseReason != "5/6 dealt" {
		t.Fatalf("the table's close: %v %v", closed, err)
	}
	if rv := reveal(t, c, shoe.ShoeId); len(rv.Dealt) != 260 {
		t.Fatalf("reveal lists %d dealt cards", len(rv.Dealt))
	}
	// Closed, its fates are open to all.
	if _, err := c.ListCardFates(as(croupier), &shoev1.ListCardFatesRequest{CoupId: "coup-51"}); err != nil {
		t.Fatal(err)
	}
}

// TestTableShoeCut: a table's shoe waiting for its cutter is cut by him
// (a player for himself) or by the table service; staff get
// SHOE_OWNED_BY_TABLE, another player NOT_YOURSELF / NOT_THE_CUTTER.
func TestTableShoeCut(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := create(t, c, &shoev1.CreateShoeRequest{Owner: "T2", ClientSeed: "table/T2/shoe/2", CutterPlayerId: "alice"})
	cut := func(who auth.Caller, player string) error {
		_, err := c.Cut(as(who), &shoev1.CutRequest{RequestId: "cut-" + who.Subject, ShoeId: shoe.ShoeId, PlayerId: player,
			Position: 40, PlayerSeed: who.Subject + "'s seed"})
		return err
	}
	wantErr(t, cut(croupier, "alice"), codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	wantErr(t, cut(operator, "alice"), codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	wantErr(t, cut(bob, "alice"), codes.PermissionDenied, "NOT_YOURSELF")
	wantErr(t, cut(bob, "bob"), codes.PermissionDenied, "NOT_THE_CUTTER")
	if err := cut(alice, "alice"); err != nil {
		t.Fatal(err)
	}
	if s := getShoe(t, c, shoe.ShoeId); s.CutBy != "alice" || !slices.Equal(s.PlayerSeeds, []string{"alice's seed"}) {
		t.Fatalf("after alice's cut: %v", s)
	}
	// The table service may cut for the cutter.
	other := create(t, c, &shoev1.CreateShoeRequest{Owner: "T2", CutterPlayerId: "alice"})
	if _, err := c.Cut(as(tableSvc), &shoev1.CutRequest{RequestId: "t", ShoeId: other.ShoeId, PlayerId: "alice", Position: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestStaffShoeOwnership: a shoe created by staff belongs to no table
// (owner is a label): staff deal and close it; its named cutter cuts it. Once the table
// service deals from it (a table opened on it) it is the table's.
func TestStaffShoeOwnership(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := createAs(t, c, operator, &shoev1.CreateShoeRequest{Owner: "T9", CutterPlayerId: "alice"})
	if shoe.OwnedByTable || shoe.CreatedBy != "olga" || shoe.Owner != "T9" {
		t.Fatalf("staff shoe: %v", shoe)
	}
	// The cut is the named cutter's own (his seed is the shoe's player
	// entropy): staff do not cut for him.
	_, err := c.Cut(as(croupier), &shoev1.CutRequest{RequestId: "c", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 3, PlayerSeed: "chosen by the croupier"})
	wantErr(t, err, codes.PermissionDenied, "NOT_THE_CUTTER")
	if _, err := c.Cut(as(alice), &shoev1.CutRequest{RequestId: "c", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 3}); err != nil {
		t.Fatalf("the cutter cuts: %v", err)
	}
	for i, who := range []auth.Caller{operator, croupier} {
		if _, err := c.DealCard(as(who), &shoev1.DealCardRequest{RequestId: fmt.Sprint("staff/card/", i), ShoeId: shoe.ShoeId}); err != nil {
			t.Fatalf("%s deals a staff shoe: %v", who.Role, err)
		}
	}
	// A table deals from it: from now on it is the table's.
	if d := deal(t, c, shoe.ShoeId, "coup-1/card/0"); d.Position != 2 {
		t.Fatalf("the table's first card at %d", d.Position)
	}
	if s := getShoe(t, c, shoe.ShoeId); !s.OwnedByTable || s.Owner != "T9" || s.CreatedBy != "olga" {
		t.Fatalf("after the table's deal: %v", s)
	}
	_, err = c.DealCard(as(operator), &shoev1.DealCardRequest{RequestId: "staff/card/9", ShoeId: shoe.ShoeId})
	wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	_, err = c.CloseShoe(as(operator), &shoev1.CloseShoeRequest{RequestId: "f", ShoeId: shoe.ShoeId, Force: true, Reason: "x"})
	wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")

	// Staff close a staff shoe: forced by an operator.
	other := createAs(t, c, croupier, &shoev1.CreateShoeRequest{})
	if other.OwnedByTable || other.CreatedBy != "carl" {
		t.Fatalf("croupier's shoe: %v", other)
	}
	if _, err := c.CloseShoe(as(operator), &shoev1.CloseShoeRequest{RequestId: "f", ShoeId: other.ShoeId, Force: true, Reason: "x"}); err != nil {
		t.Fatal(err)
	}
	// The table service without an owner makes no table's shoe either.
	free := create(t, c, &shoev1.CreateShoeRequest{})
	if free.OwnedByTable || free.CreatedBy != "table-svc" {
		t.Fatalf("table service's shoe without owner: %v", free)
	}
}

// TestCertificationShoes: CreateShoeFromOrder takes only full decks (2, 3,
// 6 or 8 times each card) unless test_shoe; the shoe says certification
// (and test_shoe) in every answer and in its shoe_opened event; it has
// no reveal.
func TestCertificationShoes(t *testing.T) {
	c, s, _ := newEnv(t, nil)
	create := func(r *shoev1.CreateShoeFromOrderRequest) (*shoev1.Shoe, error) {
		r.RequestId = fmt.Sprint(len(r.Cards), r.TestShoe, strings.Join(r.Cards[:min(3, len(r.Cards))], ""), r.Owner)
		resp, err := c.CreateShoeFromOrder(as(operator), r)
		return resp.GetShoe(), err
	}
	nines := slices.Repeat([]string{"9H"}, 832)
	_, err := create(&shoev1.CreateShoeFromOrderRequest{Cards: nines})
	wantErr(t, err, codes.InvalidArgument, "NOT_FULL_DECKS")
	swapped := fullDecksOrder(6)
	swapped[100] = "9H" // one 9H too many, one card missing
	_, err = create(&shoev1.CreateShoeFromOrderRequest{Cards: swapped})
	wantErr(t, err, codes.InvalidArgument, "NOT_FULL_DECKS")
	for _, n := range []int{1, 4, 5, 7, 16} {
		_, err = create(&shoev1.CreateShoeFromOrderRequest{Cards: fullDecksOrder(n)})
		wantErr(t, err, codes.InvalidArgument, "NOT_FULL_DECKS")
	}
	_, err = create(&shoev1.CreateShoeFromOrderRequest{Cards: fullDecksOrder(6)[:311]})
	wantErr(t, err, codes.InvalidArgument, "NOT_FULL_DECKS")

	for _, n := range []int{2, 3, 6, 8} {
		order := fullDecksOrder(n)
		slices.Reverse(order)
		shoe, err := create(&shoev1.CreateShoeFromOrderRequest{Cards: order, CutCardFromEnd: 16, Owner: "certification run 7"})
		if err != nil {
			t.Fatalf("%d full decks: %v", n, err)
		}
		if !shoe.Certification || shoe.TestShoe || shoe.Decks != int32(n) || shoe.CardsTotal != int32(52*n) ||
			shoe.OwnedByTable || shoe.CreatedBy != "olga" || len(shoe.Commitment) != 0 {
			t.Fatalf("%d decks: %v", n, shoe)
		}
		if got := getShoe(t, c, shoe.ShoeId); !got.Certification || got.TestShoe {
			t.Fatalf("GetShoe: %v", got)
		}
	}
	test, err := create(&shoev1.CreateShoeFromOrderRequest{Cards: nines, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	if !test.Certification || !test.TestShoe || test.Decks != 0 || test.CardsTotal != 832 {
		t.Fatalf("test shoe: %v", test)
	}
	if got := getShoe(t, c, test.ShoeId); !got.Certification || !got.TestShoe {
		t.Fatalf("GetShoe of a test shoe: %v", got)
	}
	_, err = create(&shoev1.CreateShoeFromOrderRequest{Cards: append(nines, "9H"), TestShoe: true})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	_, err = c.GetShoeReveal(as(operator), &shoev1.GetShoeRevealRequest{ShoeId: test.ShoeId})
	wantErr(t, err, codes.FailedPrecondition, "NOT_PROVABLY_FAIR")

	// The shoe_opened events say so.
	msgs, err := outbox.Pending(s.db, 100)
	if err != nil {
		t.Fatal(err)
	}
	opened := map[string]*eventsv1.ShoeOpened{}
	for _, m := range msgs {
		ev := &eventsv1.ShoeEvent{}
		if err := proto.Unmarshal(m.Payload, ev); err != nil {
			t.Fatal(err)
		}
		if o := ev.GetShoeOpened(); o != nil {
			opened[ev.ShoeId] = o
		}
	}
	if len(opened) != 5 {
		t.Fatalf("%d shoe_opened events, want 5", len(opened))
	}
	if o := opened[test.ShoeId]; !o.GetCertification() || !o.GetTestShoe() || o.GetCreatedBy() != "olga" || len(o.GetCommitment()) != 0 {
		t.Fatalf("test shoe opened: %v", o)
	}
	for id, o := range opened {
		if !o.Certification || (id != test.ShoeId && (o.TestShoe || o.Owner != "certification run 7")) {
			t.Fatalf("shoe %s opened: %v", id, o)
		}
	}
}

// TestCreateRequestIDPerCaller: an operator who creates a shoe under the
// request id the table service will use for its next shoe (with the very
// same request) does not get his shoe handed to the table: the table's
// CreateShoe makes its own shoe, the table's.
func TestCreateRequestIDPerCaller(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	req := func() *shoev1.CreateShoeRequest {
		return &shoev1.CreateShoeRequest{RequestId: "table/T1/shoe/2", Owner: "T1", ClientSeed: "table/T1/shoe/2"}
	}
	squat := createAs(t, c, operator, req())
	mine := create(t, c, req())
	if mine.ShoeId == squat.ShoeId || !mine.OwnedByTable || mine.CreatedBy != "table-svc" || squat.OwnedByTable {
		t.Fatalf("table's shoe %v, operator's %v", mine, squat)
	}
	if again := create(t, c, req()); !proto.Equal(again, mine) {
		t.Fatalf("the table's retry: %v", again)
	}
	order := &shoev1.CreateShoeFromOrderRequest{RequestId: "table/T1/shoe/3", Cards: fullDecksOrder(6), Owner: "T1"}
	a, err := c.CreateShoeFromOrder(as(operator), order)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateShoeFromOrder(as(tableSvc), order)
	if err != nil || a.Shoe.ShoeId == b.Shoe.ShoeId || !b.Shoe.OwnedByTable || a.Shoe.OwnedByTable {
		t.Fatalf("from order: operator's %v, table's %v (%v)", a, b, err)
	}
}

// TestClaimShoe: a table claims the staff shoe it is opened on before its
// first deal (ClaimShoe, from CreateTable): from then on an operator can
// neither deal from it (the probe of issue 10: he took the table's first
// card during its first betting), nor cut nor close it, and no second
// table claims it; the claim is idempotent for its table and recorded
// (shoe_claimed). The table then deals the prepared order from its first
// card. Who closes a shoe is recorded too (closed_by, shoe_closed).
func TestClaimShoe(t *testing.T) {
	c, s, _ := newEnv(t, nil)
	order := fullDecksOrder(6)
	order[1], order[12] = order[12], order[1] // KC second: the prepared order, the probe's prize
	prepared, err := c.CreateShoeFromOrder(as(operator), &shoev1.CreateShoeFromOrderRequest{RequestId: "prepared", Cards: order})
	if err != nil {
		t.Fatal(err)
	}
	id := prepared.Shoe.ShoeId
	claim := func(who auth.Caller, rid, table string) (*shoev1.Shoe, error) {
		resp, err := c.ClaimShoe(as(who), &shoev1.ClaimShoeRequest{RequestId: rid, ShoeId: id, TableId: table})
		return resp.GetShoe(), err
	}
	_, err = claim(operator, "op", "T1")
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = claim(tableSvc, "c0", "")
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	first, err := claim(tableSvc, "table/create/1", "T1")
	if err != nil || !first.OwnedByTable || first.TableId != "T1" || first.CreatedBy != "olga" || !first.Certification {
		t.Fatalf("the claim: %v %v", first, err)
	}
	before := getShoe(t, c, id)
	_, err = c.DealCard(as(operator), &shoev1.DealCardRequest{RequestId: "peek", ShoeId: id})
	wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	_, err = c.CloseShoe(as(operator), &shoev1.CloseShoeRequest{RequestId: "f", ShoeId: id, Force: true, Reason: "x"})
	wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	_, err = c.Cut(as(operator), &shoev1.CutRequest{RequestId: "c", ShoeId: id, PlayerId: "alice", Position: 3})
	wantErr(t, err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	// A second table is refused; the first one's retry gets the first
	// answer, its claim under another request id the shoe as it stands.
	_, err = claim(tableSvc, "table/create/2", "T2")
	wantErr(t, err, codes.FailedPrecondition, "SHOE_CLAIMED")
	if again, err := claim(tableSvc, "table/create/1", "T1"); err != nil || !proto.Equal(again, first) {
		t.Fatalf("the retried claim: %v %v", again, err)
	}
	if again, err := claim(tableSvc, "table/create/1b", "T1"); err != nil || again.TableId != "T1" {
		t.Fatalf("the table's claim again: %v %v", again, err)
	}
	// A retry proposing another id (a CreateTable retried after a crash)
	// learns the table the shoe was claimed for.
	if again, err := claim(tableSvc, "table/create/1", "T1b"); err != nil || again.TableId != "T1" {
		t.Fatalf("the retried claim with another id: %v %v", again, err)
	}
	if after := getShoe(t, c, id); !proto.Equal(after, before) {
		t.Fatalf("refused calls changed the shoe: %v", after)
	}
	// The table deals the prepared order from its first card.
	for i, want := range []string{"AC", "KC"} {
		if d := deal(t, c, id, fmt.Sprintf("coup-1/card/%d", i+1)); d.Card.Code != want || d.Position != int32(i) {
			t.Fatalf("the table's card %d: %v, want %s", i+1, d, want)
		}
	}

	// A shoe a table created is that table's; a dealt or closed staff
	// shoe cannot be claimed.
	tables := create(t, c, &shoev1.CreateShoeRequest{Owner: "T3", ClientSeed: "table/T3/shoe/1"})
	if tables.TableId != "T3" {
		t.Fatalf("a table's shoe names its table: %v", tables)
	}
	_, err = c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "x", ShoeId: tables.ShoeId, TableId: "T4"})
	wantErr(t, err, codes.FailedPrecondition, "SHOE_CLAIMED")
	if _, err := c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "x", ShoeId: tables.ShoeId, TableId: "T3"}); err != nil {
		t.Fatal(err)
	}
	dealt := createAs(t, c, croupier, &shoev1.CreateShoeRequest{})
	if _, err := c.DealCard(as(croupier), &shoev1.DealCardRequest{RequestId: "d", ShoeId: dealt.ShoeId}); err != nil {
		t.Fatal(err)
	}
	_, err = c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "x", ShoeId: dealt.ShoeId, TableId: "T5"})
	wantErr(t, err, codes.FailedPrecondition, "DEAL_STARTED")
	closed := createAs(t, c, croupier, &shoev1.CreateShoeRequest{})
	shut, err := c.CloseShoe(as(operator), &shoev1.CloseShoeRequest{RequestId: "f", ShoeId: closed.ShoeId, Force: true, Reason: "audit 12"})
	if err != nil || shut.Shoe.ClosedBy != "olga" || shut.Shoe.ClosedByRole != "operator" {
		t.Fatalf("an operator's forced close names him: %v %v", shut, err)
	}
	_, err = c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "x", ShoeId: closed.ShoeId, TableId: "T5"})
	wantErr(t, err, codes.FailedPrecondition, "SHOE_CLOSED")
	_, err = c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "x", ShoeId: "nope", TableId: "T5"})
	wantErr(t, err, codes.NotFound, "SHOE_NOT_FOUND")

	// The events: one shoe_claimed, the forced close with its actor.
	msgs, err := outbox.Pending(s.db, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var claims []string
	sawClose := false
	for _, m := range msgs {
		ev := &eventsv1.ShoeEvent{}
		if err := proto.Unmarshal(m.Payload, ev); err != nil {
			t.Fatal(err)
		}
		if cl := ev.GetShoeClaimed(); cl != nil {
			claims = append(claims, ev.ShoeId+" "+cl.TableId+" "+cl.ClaimedBy+" "+m.Subject)
		}
		if sc := ev.GetShoeClosed(); sc != nil && ev.ShoeId == closed.ShoeId {
			sawClose = true
			if sc.GetClosedBy() != "olga" || sc.GetClosedByRole() != "operator" || !sc.GetForced() {
				t.Errorf("shoe_closed of the forced close: %v", sc)
			}
		}
	}
	if !sawClose {
		t.Error("no shoe_closed event for the forced close")
	}
	if want := []string{id + " T1 table-svc chemmy.shoe." + id + ".shoe_claimed"}; !slices.Equal(claims, want) {
		t.Errorf("shoe_claimed events %q, want %q", claims, want)
	}
}

// TestCoupFatesCheckEveryShoe (issue 24): the fates of a coup may come
// from several shoes: a staff shoe opened before the table's (so its
// fates sort first) dealt a card under the coup's id before the table
// dealt the coup. ListCardFates of that coup is refused to all but the
// table service while the table's shoe is open, whatever the first fate
// is; once it is closed everybody reads every fate of the coup.
func TestCoupFatesCheckEveryShoe(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	staff := fromOrder(t, c, fullDecksOrder(6), 0)
	table := create(t, c, &shoev1.CreateShoeRequest{RequestId: "table/T5/shoe/1", Owner: "T5", ClientSeed: "table/T5/shoe/1"})
	if staff.ShoeId >= table.ShoeId {
		t.Fatalf("the staff shoe %s must sort before the table's %s", staff.ShoeId, table.ShoeId)
	}
	if _, err := c.DealCard(as(operator), &shoev1.DealCardRequest{RequestId: "x", ShoeId: staff.ShoeId, CoupId: "coup-7"}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		deal(t, c, table.ShoeId, fmt.Sprintf("coup-7/card/%d", i))
	}
	for _, who := range []auth.Caller{alice, croupier, operator, {Subject: "a", Role: auth.RoleAuditor}} {
		resp, err := c.ListCardFates(as(who), &shoev1.ListCardFatesRequest{CoupId: "coup-7"})
		wantErr(t, err, codes.FailedPrecondition, "SHOE_NOT_CLOSED")
		if n := len(resp.GetFates()); n != 0 {
			t.Errorf("%s reads %d fates of the coup in play", who.Subject, n)
		}
	}
	if all, err := c.ListCardFates(as(tableSvc), &shoev1.ListCardFatesRequest{CoupId: "coup-7"}); err != nil || len(all.Fates) != 5 {
		t.Fatalf("the table service's ListCardFates: %d fates, %v", len(all.GetFates()), err)
	}
	if _, err := c.CloseShoe(as(tableSvc), &shoev1.CloseShoeRequest{RequestId: "close", ShoeId: table.ShoeId, Force: true, Reason: "end"}); err != nil {
		t.Fatal(err)
	}
	if all, err := c.ListCardFates(as(alice), &shoev1.ListCardFatesRequest{CoupId: "coup-7"}); err != nil || len(all.Fates) != 5 {
		t.Fatalf("alice's ListCardFates once the table's shoe is closed: %d fates, %v", len(all.GetFates()), err)
	}
}

// TestStaffDealNamingATableCoup (issue 24): a deal by anybody but the
// table service may not name a table's coup, by coup_id or by a request
// id "<coup>/card/<n>": one of the form of table-svc's coup ids (a ULID,
// with or without a shard prefix), dealt or not yet, or one dealt from a
// table's shoe whatever its form (COUP_OWNED_BY_TABLE, before any stored
// answer, the staff shoe unchanged). Staff name their own coups
// otherwise; the table service is never refused for its coup id.
func TestStaffDealNamingATableCoup(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	staff := fromOrder(t, c, fullDecksOrder(6), 0)
	table := create(t, c, &shoev1.CreateShoeRequest{RequestId: "table/T6/shoe/1", Owner: "T6", ClientSeed: "table/T6/shoe/1"})
	deal(t, c, table.ShoeId, "coup-8/card/0")
	// A ULID coup the table has not dealt yet (its betting), with and
	// without a shard prefix; lowercase is the same ULID.
	ulidCoup := "01JD0Q7Z8V9W5M3K2H1G0F9E8D"
	for _, coup := range []string{"coup-8", ulidCoup, "s2-" + ulidCoup, strings.ToLower(ulidCoup), "s0-" + ulidCoup} {
		for _, who := range []auth.Caller{operator, croupier} {
			_, err := c.DealCard(as(who), &shoev1.DealCardRequest{RequestId: "peek-" + coup, ShoeId: staff.ShoeId, CoupId: coup})
			wantErr(t, err, codes.PermissionDenied, "COUP_OWNED_BY_TABLE")
			_, err = c.DealCard(as(who), &shoev1.DealCardRequest{RequestId: coup + "/card/5", ShoeId: staff.ShoeId})
			wantErr(t, err, codes.PermissionDenied, "COUP_OWNED_BY_TABLE")
		}
	}
	if got := getShoe(t, c, staff.ShoeId); got.CardsDealt != 0 {
		t.Fatalf("refused deals dealt %d cards from the staff shoe", got.CardsDealt)
	}
	// Staff's own coups: any other name, even one close to a ULID.
	for i, coup := range []string{"coup-9", "staff", ulidCoup[:25], "s2-coup-9", "x" + ulidCoup} {
		if _, err := c.DealCard(as(operator), &shoev1.DealCardRequest{RequestId: fmt.Sprint("own-", i), ShoeId: staff.ShoeId, CoupId: coup}); err != nil {
			t.Errorf("a staff deal of coup %q: %v", coup, err)
		}
	}
	// The table service deals its coups, also one a staff shoe named
	// first (before this rule): it is never stopped by a coup id.
	deal(t, c, table.ShoeId, "coup-9/card/0")
	deal(t, c, table.ShoeId, ulidCoup+"/card/0")
}
