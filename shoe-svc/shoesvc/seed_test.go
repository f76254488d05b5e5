package shoesvc

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

// TestSeedShoe: a table's shoe created with await_player_seeds commits to
// its server seed and waits (AWAITING_SEEDS, deals nothing) for the seeds
// the table's players give after the commitment; SeedShoe mixes them in
// sorted, so the order depends on which seeds were given, not on the
// order they came in; it cuts at random and burns. The first SeedShoe
// fixes the order (a later one answers the shoe as it stands); the reveal
// verifies with the seeds, and names who gave them, and not with another
// seed in place of a player's.
func TestSeedShoe(t *testing.T) {
	c, s, _ := newEnv(t, fixedSeed(7)) // every shoe the same server seed
	awaiting := func(table string) *shoev1.Shoe {
		t.Helper()
		shoe := create(t, c, &shoev1.CreateShoeRequest{Owner: table, ClientSeed: "table/T/shoe/1", AwaitPlayerSeeds: true})
		if shoe.State != shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS || !shoe.AwaitPlayerSeeds || len(shoe.Commitment) != fair.CommitmentSize ||
			len(shoe.Burned) != 0 || shoe.CardsRemaining != 312 {
			t.Fatalf("a shoe awaiting its table's seeds: %v", shoe)
		}
		return shoe
	}
	a, b := awaiting("T1"), awaiting("T2")
	_, err := c.DealCard(as(tableSvc), &shoev1.DealCardRequest{RequestId: "early", ShoeId: a.ShoeId})
	wantErr(t, err, codes.FailedPrecondition, "SHOE_NOT_SEEDED")
	_, err = c.Cut(as(alice), &shoev1.CutRequest{RequestId: "cut", ShoeId: a.ShoeId, PlayerId: "alice", Position: 9, PlayerSeed: "mine"})
	wantErr(t, err, codes.PermissionDenied, "NOT_THE_CUTTER")
	seed := func(shoe *shoev1.Shoe, seeds ...string) (*shoev1.Shoe, error) {
		req := &shoev1.SeedShoeRequest{RequestId: "table/" + shoe.Owner + "/shoe/1/seed", ShoeId: shoe.ShoeId}
		for i := 0; i < len(seeds); i += 2 {
			req.Seeds = append(req.Seeds, &shoev1.PlayerSeed{PlayerId: seeds[i], Seed: seeds[i+1]})
		}
		resp, err := c.SeedShoe(as(tableSvc), req)
		return resp.GetShoe(), err
	}
	_, err = c.SeedShoe(as(operator), &shoev1.SeedShoeRequest{RequestId: "x", ShoeId: a.ShoeId})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")

	// The same seeds in two orders: the same shoe.
	sa, err := seed(a, "alice", "a-seed", "bob", "b-seed", "carol", "0-seed")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := seed(b, "carol", "0-seed", "bob", "b-seed", "alice", "a-seed")
	if err != nil {
		t.Fatal(err)
	}
	if sa.State != shoev1.ShoeState_SHOE_STATE_OPEN || !sa.CutRandom || sa.CutBy != "" ||
		!slices.Equal(sa.PlayerSeeds, []string{"0-seed", "a-seed", "b-seed"}) || !slices.Equal(sa.PlayerSeedPlayerIds, []string{"carol", "alice", "bob"}) {
		t.Fatalf("seeded: %v", sa)
	}
	if sa.CutPosition != sb.CutPosition || !proto.Equal(&shoev1.Shoe{Burned: sa.Burned}, &shoev1.Shoe{Burned: sb.Burned}) {
		t.Fatalf("the order depends on the seeds' order: cut %d vs %d, burned %v vs %v", sa.CutPosition, sb.CutPosition, sa.Burned, sb.Burned)
	}
	for i := range 20 {
		da, db := deal(t, c, a.ShoeId, fmt.Sprintf("c/card/%d", i)), deal(t, c, b.ShoeId, fmt.Sprintf("c/card/%d", i))
		if da.Card.Code != db.Card.Code {
			t.Fatalf("card %d: %s vs %s", i, da.Card.Code, db.Card.Code)
		}
	}
	// Without the players' seeds the shoe would be another one.
	if plain := loadedOrder(t, 6, fixedSeed(7)(), "table/T/shoe/1"); plain[0].String() == sa.Burned[0].Code && plain[1].String() == sa.Burned[1].Code &&
		plain[2].String() == sa.Burned[2].Code {
		t.Fatalf("the seeds changed nothing: burned %v", sa.Burned)
	}
	// The first SeedShoe fixed the order: a later one (more seeds) gets the
	// shoe as it stands.
	again, err := seed(a, "dave", "d-seed")
	if err != nil || !slices.Equal(again.PlayerSeeds, sa.PlayerSeeds) || again.CardsDealt != 20 {
		t.Fatalf("a second SeedShoe: %v %v", again, err)
	}

	// Closed, it verifies with the seeds given, and names their givers;
	// another seed in place of alice's does not verify.
	if _, err := c.CloseShoe(as(tableSvc), &shoev1.CloseShoeRequest{RequestId: "close", ShoeId: a.ShoeId, Force: true, Reason: "table closed"}); err != nil {
		t.Fatal(err)
	}
	rv := reveal(t, c, a.ShoeId)
	if !slices.Equal(rv.PlayerSeeds, sa.PlayerSeeds) || !slices.Equal(rv.PlayerSeedPlayerIds, sa.PlayerSeedPlayerIds) || len(rv.Dealt) != 20 {
		t.Fatalf("reveal: seeds %q by %q, %d dealt", rv.PlayerSeeds, rv.PlayerSeedPlayerIds, len(rv.Dealt))
	}
	forged := proto.CloneOf(rv)
	forged.PlayerSeeds[1] = "not-alice's"
	if err := fair.Verify(FairReveal(forged)); !errors.Is(err, fair.ErrMismatch) {
		t.Fatalf("a reveal with another seed for alice verifies: %v", err)
	}

	// Nobody gave a seed: the shoe opens without player entropy.
	none := awaiting("T3")
	sn, err := seed(none)
	if err != nil || sn.State != shoev1.ShoeState_SHOE_STATE_OPEN || len(sn.PlayerSeeds) != 0 || !sn.CutRandom {
		t.Fatalf("seeded with none: %v %v", sn, err)
	}
	deal(t, c, none.ShoeId, "n/card/1")
	// Closed while it waits: cut at random without seeds; a late SeedShoe
	// answers it closed.
	late := awaiting("T4")
	if _, err := c.CloseShoe(as(tableSvc), &shoev1.CloseShoeRequest{RequestId: "close", ShoeId: late.ShoeId, Force: true, Reason: "table closed"}); err != nil {
		t.Fatal(err)
	}
	if sl, err := seed(late, "alice", "too late"); err != nil || sl.State != shoev1.ShoeState_SHOE_STATE_CLOSED || len(sl.PlayerSeeds) != 0 {
		t.Fatalf("SeedShoe after the close: %v %v", sl, err)
	}
	if rv := reveal(t, c, late.ShoeId); len(rv.PlayerSeeds) != 0 || !rv.CutRandom {
		t.Fatalf("reveal of a shoe closed while it waited: %v", rv)
	}

	// Refused: bad seeds, a shoe that does not wait for seeds, await for
	// anyone but a table's shoe.
	many := []string{}
	for i := range 17 {
		many = append(many, fmt.Sprint("p", i), fmt.Sprint("s", i))
	}
	for name, seeds := range map[string][]string{
		"17 seeds": many, "twice": {"alice", "x", "alice", "y"}, "empty seed": {"alice", ""}, "no player": {"", "x"},
		"long seed": {"alice", string(make([]byte, 257))},
	} {
		_, err := seed(awaiting("T5"), seeds...)
		if err == nil {
			t.Fatalf("%s: accepted", name)
		}
		wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	}
	plain := create(t, c, &shoev1.CreateShoeRequest{Owner: "T6"})
	_, err = seed(plain, "alice", "x")
	wantErr(t, err, codes.FailedPrecondition, "NOT_AWAITING_SEEDS")
	for name, r := range map[string]*shoev1.CreateShoeRequest{
		"no owner":    {RequestId: "n1", AwaitPlayerSeeds: true},
		"with cutter": {RequestId: "n2", Owner: "T7", AwaitPlayerSeeds: true, CutterPlayerId: "alice"},
	} {
		_, err := c.CreateShoe(as(tableSvc), r)
		if err == nil {
			t.Fatalf("%s: accepted", name)
		}
		wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	}
	_, err = c.CreateShoe(as(croupier), &shoev1.CreateShoeRequest{RequestId: "n3", Owner: "T8", AwaitPlayerSeeds: true})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")

	// The cards_burned event names the seeds and their givers.
	msgs, err := outbox.Pending(s.db, 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range msgs {
		ev := &eventsv1.ShoeEvent{}
		if err := proto.Unmarshal(m.Payload, ev); err != nil {
			t.Fatal(err)
		}
		if cb := ev.GetCardsBurned(); cb != nil && ev.ShoeId == a.ShoeId {
			found = slices.Equal(cb.PlayerSeeds, sa.PlayerSeeds) && slices.Equal(cb.PlayerSeedPlayerIds, sa.PlayerSeedPlayerIds)
		}
		if o := ev.GetShoeOpened(); o != nil && ev.ShoeId == a.ShoeId && !o.AwaitPlayerSeeds {
			t.Errorf("shoe_opened of a shoe awaiting seeds: %v", o)
		}
	}
	if !found {
		t.Error("no cards_burned event with the seeds and their givers")
	}
}
