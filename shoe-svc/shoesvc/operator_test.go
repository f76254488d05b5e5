package shoesvc

import (
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// TestOperatorsShareNothing: a shoe belongs to its creator's operator (a
// croupier's) or to the operator the table service names (its table's);
// every call of a caller of another operator naming it (GetShoe,
// GetShoeReveal, ListCardFates, DealCard, Cut, CloseShoe; DealCards and
// MoveTopCardsToBottom are the table service's only) is answered NOT_FOUND SHOE_NOT_FOUND with the
// message of a shoe that does not exist, and changes nothing; ClaimShoe
// for a table of another operator too. Two operators' croupiers of one
// subject and request id make two shoes. The shoe's operator, the
// service and a deployment-wide auditor read it; a shoe stored without an
// operator is the default operator's.
func TestOperatorsShareNothing(t *testing.T) {
	c, s, _ := newEnv(t, fixedSeed(41))
	aCroupier := auth.Caller{Subject: "carl", Role: auth.RoleCroupier, Operator: "casino-a"}
	bCroupier := auth.Caller{Subject: "carl", Role: auth.RoleCroupier, Operator: "casino-b"}
	others := []auth.Caller{bCroupier,
		{Subject: "olga", Role: auth.RoleOperator, Operator: "casino-b"},
		{Subject: "alice", Role: auth.RolePlayer, Operator: "casino-b"},
		{Subject: "aud", Role: auth.RoleAuditor, Operator: "casino-b"},
		croupier, // of no operator: the default one's
	}
	staff := createAs(t, c, aCroupier, &shoev1.CreateShoeRequest{RequestId: "same", CutterPlayerId: "alice"})
	table := create(t, c, &shoev1.CreateShoeRequest{RequestId: "table/TA/shoe/1", Owner: "TA", ClientSeed: "table/TA/shoe/1", OperatorId: "casino-a"})
	if staff.OperatorId != "casino-a" || table.OperatorId != "casino-a" {
		t.Fatalf("operators: croupier's shoe %q, table's %q; want casino-a", staff.OperatorId, table.OperatorId)
	}
	if other := createAs(t, c, bCroupier, &shoev1.CreateShoeRequest{RequestId: "same"}); other.ShoeId == staff.ShoeId || other.OperatorId != "casino-b" {
		t.Fatalf("casino-b's carl under casino-a's carl's request id: %v", other)
	}
	// A player's Operator is never the caller's choice: a croupier of
	// casino-b naming casino-a in operator_id makes casino-b's shoe.
	if forged := createAs(t, c, bCroupier, &shoev1.CreateShoeRequest{OperatorId: "casino-a"}); forged.OperatorId != "casino-b" {
		t.Fatalf("casino-b's croupier naming casino-a: a shoe of %q", forged.OperatorId)
	}
	_, unknown := c.GetShoe(as(aCroupier), &shoev1.GetShoeRequest{ShoeId: "no-such-shoe"})
	notFound := func(err error, who auth.Caller, what, id string) {
		t.Helper()
		wantErr(t, err, codes.NotFound, "SHOE_NOT_FOUND")
		if want := `no shoe "` + id + `"`; status.Convert(err).Message() != want {
			t.Errorf("%s of %s by %s/%s: %q, want %q (as %q for no shoe)", what, id, who.Operator, who.Subject,
				status.Convert(err).Message(), want, status.Convert(unknown).Message())
		}
	}
	before := map[string]*shoev1.Shoe{staff.ShoeId: getShoe(t, c, staff.ShoeId), table.ShoeId: getShoe(t, c, table.ShoeId)}
	for _, who := range others {
		for _, id := range []string{staff.ShoeId, table.ShoeId} {
			_, err := c.GetShoe(as(who), &shoev1.GetShoeRequest{ShoeId: id})
			notFound(err, who, "GetShoe", id)
			_, err = c.GetShoeReveal(as(who), &shoev1.GetShoeRevealRequest{ShoeId: id})
			notFound(err, who, "GetShoeReveal", id)
			_, err = c.ListCardFates(as(who), &shoev1.ListCardFatesRequest{ShoeId: id})
			notFound(err, who, "ListCardFates", id)
			if who.Role == auth.RoleAuditor {
				continue // his role may not write: refused first, whatever the shoe
			}
			_, err = c.Cut(as(who), &shoev1.CutRequest{RequestId: "cut", ShoeId: id, PlayerId: "alice", Position: 40})
			notFound(err, who, "Cut", id)
			if who.Role == auth.RolePlayer {
				continue // dealing and closing are refused his role first, whatever the shoe
			}
			_, err = c.DealCard(as(who), &shoev1.DealCardRequest{RequestId: "peek", ShoeId: id})
			notFound(err, who, "DealCard", id)
			_, err = c.CloseShoe(as(who), &shoev1.CloseShoeRequest{RequestId: "close", ShoeId: id, Force: who.Role == auth.RoleOperator, Reason: "x"})
			notFound(err, who, "CloseShoe", id)
		}
	}
	for id, was := range before {
		if now := getShoe(t, c, id); !proto.Equal(now, was) {
			t.Errorf("shoe %s changed by other operators' calls: %v, was %v", id, now, was)
		}
	}
	// Its operator's croupier, the service and a deployment-wide auditor
	// read it; casino-a's alice cuts it.
	for _, who := range []auth.Caller{aCroupier, tableSvc, {Subject: "aud", Role: auth.RoleAuditor, Operator: auth.AllOperators}} {
		if _, err := c.GetShoe(as(who), &shoev1.GetShoeRequest{ShoeId: staff.ShoeId}); err != nil {
			t.Errorf("%s/%s reads casino-a's shoe: %v", who.Operator, who.Subject, err)
		}
	}
	if _, err := c.Cut(as(auth.Caller{Subject: "alice", Role: auth.RolePlayer, Operator: "casino-a"}),
		&shoev1.CutRequest{RequestId: "cut", ShoeId: staff.ShoeId, PlayerId: "alice", Position: 40}); err != nil {
		t.Fatalf("casino-a's alice cuts casino-a's shoe: %v", err)
	}
	// ClaimShoe: for a table of another operator it is no shoe.
	prepared, err := c.CreateShoeFromOrder(as(auth.Caller{Subject: "olga", Role: auth.RoleOperator, Operator: "casino-a"}),
		&shoev1.CreateShoeFromOrderRequest{RequestId: "order", Cards: []string{"2C", "9H", "3D", "TC", "KD"}, TestShoe: true})
	if err != nil || prepared.Shoe.OperatorId != "casino-a" {
		t.Fatalf("casino-a's prepared shoe: %v %v", prepared, err)
	}
	_, err = c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "claim-b", ShoeId: prepared.Shoe.ShoeId, TableId: "TB", OperatorId: "casino-b"})
	notFound(err, tableSvc, "ClaimShoe for casino-b", prepared.Shoe.ShoeId)
	_, err = c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "claim-def", ShoeId: prepared.Shoe.ShoeId, TableId: "TD"})
	notFound(err, tableSvc, "ClaimShoe for the default operator", prepared.Shoe.ShoeId)
	if claimed, err := c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "claim-a", ShoeId: prepared.Shoe.ShoeId, TableId: "TA2", OperatorId: "casino-a"}); err != nil || claimed.Shoe.TableId != "TA2" {
		t.Fatalf("ClaimShoe for casino-a's table: %v %v", claimed, err)
	}

	// A shoe stored before shoes had operators is the default operator's.
	old := createAs(t, c, croupier, &shoev1.CreateShoeRequest{RequestId: "old"})
	if old.OperatorId != DefaultOperator {
		t.Fatalf("a shoe of a caller of no operator: operator %q, want %q", old.OperatorId, DefaultOperator)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		sh := &shoev1.Shoe{}
		if err := loadShoe(tx, old.ShoeId, sh); err != nil {
			return err
		}
		sh.OperatorId = ""
		return putShoe(tx, sh)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetShoe(as(auth.Caller{Subject: "carl", Role: auth.RoleCroupier, Operator: DefaultOperator}), &shoev1.GetShoeRequest{ShoeId: old.ShoeId}); err != nil {
		t.Errorf("the default operator's croupier reads an old shoe: %v", err)
	}
	_, err = c.GetShoe(as(aCroupier), &shoev1.GetShoeRequest{ShoeId: old.ShoeId})
	notFound(err, aCroupier, "GetShoe of an old shoe", old.ShoeId)
}
