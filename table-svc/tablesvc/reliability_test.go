package tablesvc

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// TestTimeoutUnderBancoFreePlayFollowsTheTableau: a banco player and a
// banker who let their decisions time out under banco free play get what
// the tableau does: the player stands on 7, the banker on 6 against a
// player who stood, and the bank loses (CF-BANCO-FREEDOM, CF-PLAYER-DRAW,
// CF-BANKER-DRAW; RULES.md, what the sources leave to the house).
func TestTimeoutUnderBancoFreePlayFollowsTheTableau(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "p0", "p1")
	id := h.tableWith(&tablev1.HouseRules{BancoFreePlay: true, DecisionTimeLimitMs: 1000}, 0,
		[]string{"7C", "QD", "JH", "6S", "6C", "JD"}, "p0", "p1")
	h.acceptBank(id, "p0", 100)
	if _, err := h.tables.CallBanco(h.as("p1"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "p1"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if st := h.get(id).GetState(); st != tablev1.TableState_TABLE_STATE_DECISION {
			t.Fatalf("decision %d: state %v", i+1, st)
		}
		h.clock.Advance(time.Second)
		h.expire()
	}
	last := h.get(id).GetLastCoup()
	if len(last.GetPlayerCards()) != 2 || len(last.GetBankerCards()) != 2 || last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES {
		t.Fatalf("coup after two timeouts: %v", last)
	}
	if b, _ := h.account("player:p1"); b != 10100 {
		t.Errorf("p1 has %d, want 10100", b)
	}
}

// lossy is a client interceptor that lets the wallet apply a call whose
// method is in drop and then loses the reply (DEADLINE_EXCEEDED).
type lossy struct{ drop map[string]int }

func (l *lossy) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if l.drop[method] > 0 {
		l.drop[method]--
		return status.Error(codes.DeadlineExceeded, "reply lost (test)")
	}
	return err
}

// TestLostTrimReplyDoesNotStickTheTable: the wallet's reply to the bet
// trim of RaiseBank(raise=false) is lost; the banker then tries to raise
// after all. The trim was stored with the decision, so the raise is
// refused, the trim is carried out by the saga and the coup settles.
func TestLostTrimReplyDoesNotStickTheTable(t *testing.T) {
	h := newHarness(t)
	l := &lossy{drop: map[string]int{}}
	h.restartTableWith(grpc.WithChainUnaryInterceptor(l.intercept))
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "9H", "3D", "TC", "KD", "KD"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 600)
	if _, err := h.tables.PlaceBet(h.as("carol"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 1000, OverBank: true}); err != nil {
		t.Fatal(err)
	}
	if st := h.get(id).GetState(); st != tablev1.TableState_TABLE_STATE_BANK_RAISE {
		t.Fatalf("state %v, want BANK_RAISE", st)
	}
	l.drop["/chemmy.wallet.v1.WalletService/ResizeHold"] = 1
	_, _ = h.tables.RaiseBank(h.as("alice"), &tablev1.RaiseBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Raise: false})
	_, err := h.tables.RaiseBank(h.as("alice"), &tablev1.RaiseBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Raise: true})
	if err == nil {
		t.Fatal("the raise after a stored trim was accepted")
	}
	h.settleLoop(id)
	last := h.get(id).GetLastCoup()
	if !last.GetSettled() {
		t.Fatalf("coup not settled: %v", h.get(id))
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, held := h.account("player:" + p); held != 0 && p != "alice" {
			t.Errorf("%s still holds %d", p, held)
		}
	}
}

// settleLoop waits (10 s at most) for the table's retry loop to take it
// out of DEALING and SETTLING.
func (h *harness) settleLoop(id string) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if st := h.get(id).GetState(); st != tablev1.TableState_TABLE_STATE_DEALING && st != tablev1.TableState_TABLE_STATE_SETTLING {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("table still %v", h.get(id).GetState())
}

// TestRetryWithAnotherAmountLeavesNoOrphanHold: a PlaceBet's hold is made
// but its reply lost; the client retries the same request_id with another
// amount. The retry is refused (REQUEST_ID_REUSED) without touching the
// first intent, which is rolled back once old enough: no hold is left.
func TestRetryWithAnotherAmountLeavesNoOrphanHold(t *testing.T) {
	h := newHarness(t)
	l := &lossy{drop: map[string]int{}}
	h.restartTableWith(grpc.WithChainUnaryInterceptor(l.intercept))
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	l.drop["/chemmy.wallet.v1.WalletService/PlaceHold"] = 1
	_, err := h.tables.PlaceBet(h.as("bob"), &tablev1.PlaceBetRequest{RequestId: "lost", TableId: id, PlayerId: "bob", Amount: 100})
	wantReason(t, err, codes.Unavailable, reasonDependencyUnavailable)
	_, err = h.tables.PlaceBet(h.as("bob"), &tablev1.PlaceBetRequest{RequestId: "lost", TableId: id, PlayerId: "bob", Amount: 200})
	wantReason(t, err, codes.AlreadyExists, reasonRequestIDReused)
	if _, held := h.account("player:bob"); held != 100 {
		t.Fatalf("bob holds %d, want the first try's 100 until it is rolled back", held)
	}
	h.clock.Advance(intentGrace)
	if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 0 {
		t.Fatalf("an orphaned hold of %d", held)
	}
	h.conserved(20000, "player:alice", "player:bob")
}

// TestTurnsGetTheirTimeAfterARestart: a decision with a few seconds left
// when table-svc goes down gets its full time limit again from the
// restart, however long the service was down.
func TestTurnsGetTheirTimeAfterARestart(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(&tablev1.HouseRules{DecisionTimeLimitMs: 10000}, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 1000)
	h.clock.Advance(8 * time.Second)
	h.table.Stop()
	if err := h.table.Wait(); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(15 * time.Second) // down past the deadline
	h.startTable()
	restart := h.clock.Now()
	h.expire()
	tbl := h.get(id)
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION {
		t.Fatalf("the decision was timed out while the service was down: %v", tbl.GetState())
	}
	if got := tbl.GetTurnDeadline().AsTime(); !got.Equal(restart.Add(10 * time.Second)) {
		t.Errorf("deadline %v, want the full 10 s after the restart (%v)", got, restart.Add(10*time.Second))
	}
	h.clock.Advance(10 * time.Second)
	h.expire()
	if st := h.get(id).GetState(); st == tablev1.TableState_TABLE_STATE_DECISION {
		t.Errorf("still waiting after the full time: %v", st)
	}
}

// TestHourlyFeeOfABankerWhoLost: under hourly_fee a banker who loses his
// whole bank still pays his seat time: the lost bank's hold is released
// before the fee is charged, and a fee his balance cannot pay is owed and
// charged with his next fee.
func TestHourlyFeeOfABankerWhoLost(t *testing.T) {
	h := newHarness(t)
	h.fund(1000, "alice")
	h.fund(100000, "bob")
	// Player natural 9 against the banker's 5: the bank loses 1000.
	// The bank's offer waits 10 minutes, and is taken within them: the
	// service's own retry loop must not time it out in between.
	id := h.tableWith(&tablev1.HouseRules{HourlyFee: 3600, BankOfferTimeLimitMs: 600000}, 0, []string{"4C", "2H", "5D", "3C"}, "alice", "bob")
	h.clock.Advance(10*time.Minute - time.Second)
	h.acceptBank(id, "alice", 1000)
	h.clock.Advance(time.Second)
	h.mustBet(id, "bob", 1000)
	// alice had 1000, all of it in the bank, and lost it: her 600 fee is
	// owed; bob paid his.
	if b, _ := h.account("player:bob"); b != 100000+1000-600 {
		t.Errorf("bob %d, want %d", b, 100000+1000-600)
	}
	h.fund(5000, "alice")
	h.clock.Advance(10 * time.Minute)
	if _, err := h.tables.LeaveTable(h.as("alice"), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	// Leaving, she pays the owed 600 and the 600 since.
	if b, _ := h.account("player:alice"); b != 5000-1200 {
		t.Errorf("alice %d, want %d", b, 5000-1200)
	}
	h.conserved(106000, "player:alice", "player:bob")
}

// TestCloseTable: a croupier closes a table between coups; the bank is
// returned, the table is read-only, and a table nobody banks at closes by
// itself after abandon_after_offers offers.
func TestCloseTable(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 500)
	tbl := h.get(id)
	_, err := h.tables.CloseTable(h.as("croupier"), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: id, Reason: "end of session"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState) // a coup in play
	if _, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, Reason: "x", CoupId: tbl.GetCoup().GetCoupId()}); err != nil {
		t.Fatal(err)
	}
	_, err = h.tables.CloseTable(h.as("bob"), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: id, Reason: "mine"})
	wantReason(t, err, codes.PermissionDenied, reasonRoleNotAllowed)
	resp, err := h.tables.CloseTable(h.as("croupier"), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: id, Reason: "end of session"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetTable().GetState() != tablev1.TableState_TABLE_STATE_CLOSED {
		t.Fatalf("after CloseTable: %v", resp.GetTable().GetState())
	}
	h.settleLoop(id)
	for _, p := range []string{"alice", "bob"} {
		if b, held := h.account("player:" + p); b != 10000 || held != 0 {
			t.Errorf("%s %d held %d after the close", p, b, held)
		}
	}
	_, err = h.tables.JoinTable(h.as("carol"), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"})
	wantReason(t, err, codes.FailedPrecondition, reasonTableClosed)

	// Abandoned: two players, nobody takes the bank three offers in a row.
	ab := h.tableWith(&tablev1.HouseRules{AbandonAfterOffers: 3, BankOfferTimeLimitMs: 1000}, 0, nil, "alice", "bob")
	for i := 0; i < 3; i++ {
		h.clock.Advance(time.Second)
		h.expire()
	}
	if st := h.get(ab).GetState(); st != tablev1.TableState_TABLE_STATE_CLOSED {
		t.Fatalf("abandoned table is %v", st)
	}
	var closed bool
	for _, ev := range h.events(ab) {
		closed = closed || ev.GetTableClosed().GetAbandoned()
	}
	if !closed {
		t.Error("no table_closed event with abandoned")
	}
}

// TestInterruptedCoupIsVoided: a coup whose shoe-svc is unreachable past
// InterruptAfter, before its result, is voided and every bet returned.
func TestInterruptedCoupIsVoided(t *testing.T) {
	h := newHarness(t)
	down := &lossy{drop: map[string]int{}}
	h.restartTableWith(grpc.WithChainUnaryInterceptor(down.unreachable))
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	down.drop["/chemmy.shoe.v1.ShoeService/DealCard"] = 1 << 30
	down.drop["/chemmy.shoe.v1.ShoeService/DealCards"] = 1 << 30 // the opening cards
	if _, err := h.tables.PlaceBet(h.as("bob"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Amount: 500}); err != nil {
		t.Fatal(err) // the bet stands; the deal waits
	}
	if st := h.get(id).GetState(); st != tablev1.TableState_TABLE_STATE_DEALING {
		t.Fatalf("state %v, want DEALING", st)
	}
	h.clock.Advance(3 * time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for !h.get(id).GetLastCoup().GetVoided() {
		if time.Now().After(deadline) {
			t.Fatalf("not voided: %v", h.get(id))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, held := h.account("player:bob"); held != 0; _, held = h.account("player:bob") {
		if time.Now().After(deadline) {
			t.Fatalf("bob still holds %d after the interrupted coup", held)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if b, _ := h.account("player:bob"); b != 10000 {
		t.Errorf("bob %d after the interrupted coup", b)
	}
	if st := h.get(id).GetState(); st != tablev1.TableState_TABLE_STATE_BETTING {
		t.Errorf("state %v, want BETTING (the banker keeps the bank)", st)
	}
}

// unreachable fails the calls in drop without making them.
func (l *lossy) unreachable(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if l.drop[method] > 0 {
		l.drop[method]--
		return status.Error(codes.Unavailable, "unreachable (test)")
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// TestCreateTableUnknownShoe answers NOT_FOUND, not INTERNAL, and a
// shoe of another table is refused.
func TestCreateTableUnknownShoe(t *testing.T) {
	h := newHarness(t)
	_, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), ShoeId: "01NOSUCHSHOE"})
	wantReason(t, err, codes.NotFound, reasonShoeNotFound)
	// Another table's shoe is not to be had.
	other, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), ShoeId: other.GetTable().GetShoeId()})
	wantReason(t, err, codes.FailedPrecondition, reasonShoeUnusable)
}

// TestRetryAfterLostVoidIsAbandoned: a bet's hold is made but its answer
// lost; the rollback of its escrow intent voids the hold, and the void's
// answer is lost too (the void is applied). The bet's retry, before the
// rollback is done, is REQUEST_ABANDONED: it never goes on with the
// voided hold (whose coup could then never be settled). A new request
// bets and the coup settles.
func TestRetryAfterLostVoidIsAbandoned(t *testing.T) {
	h := newHarness(t)
	h.table.Stop()
	if err := h.table.Wait(); err != nil {
		t.Fatal(err)
	}
	l := &lossy{drop: map[string]int{}}
	h.startTableRetry(-1, grpc.WithChainUnaryInterceptor(l.intercept)) // no retry loop: the test drives the rollback
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"2C", "9H", "3D", "TC"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	bet := &tablev1.PlaceBetRequest{RequestId: "bet-1", TableId: id, PlayerId: "bob", Amount: 1000}
	l.drop[walletv1.WalletService_PlaceHold_FullMethodName] = 1
	_, err := h.tables.PlaceBet(h.as("bob"), bet)
	wantReason(t, err, codes.Unavailable, reasonDependencyUnavailable) // held; the answer lost
	l.drop[walletv1.WalletService_VoidHold_FullMethodName] = 1
	h.clock.Advance(intentGrace)
	if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 0 {
		t.Fatalf("bob's hold not voided: %d held", held)
	}
	_, err = h.tables.PlaceBet(h.as("bob"), bet)
	wantReason(t, err, codes.Aborted, reasonRequestAbandoned)
	bet.RequestId = "bet-2"
	if tb := h.mustBet(id, "bob", 1000); !tb.GetLastCoup().GetSettled() {
		t.Fatalf("the coup of the new bet: %v", tb)
	}
	if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
		t.Fatal(err)
	}
	h.conserved(20000, "player:alice", "player:bob")
}

// TestCreateTableClaimsShoe: the shoe an operator names is the table's
// from CreateTable on (shoe-svc ClaimShoe), before the table's first deal:
// the operator cannot deal from it during the first betting, a second
// table cannot take it, and the table deals the prepared order from its
// first card. A claim whose reply was lost is found again by the retried
// CreateTable, which opens the table under the id the shoe was claimed for.
func TestCreateTableClaimsShoe(t *testing.T) {
	h := newHarness(t)
	l := &lossy{drop: map[string]int{shoev1.ShoeService_ClaimShoe_FullMethodName: 1}}
	h.restartTableWith(grpc.WithChainUnaryInterceptor(l.intercept))
	h.fund(10000, "alice", "bob")
	order := []string{"2C", "KD", "3D", "6H", "4S", "KD"}
	for len(order) < 40 {
		order = append(order, "QS")
	}
	sh, err := h.shoes.CreateShoeFromOrder(h.as("op"), &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: order, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	shoeID := sh.GetShoe().GetShoeId()
	req := &tablev1.CreateTableRequest{RequestId: "claims", HouseRules: certMoney(nil), ShoeId: shoeID}
	_, err = h.tables.CreateTable(h.as("op"), req)
	wantReason(t, err, codes.Unavailable, reasonDependencyUnavailable) // claimed, the answer lost
	claimed, err := h.shoes.GetShoe(h.as("op"), &shoev1.GetShoeRequest{ShoeId: shoeID})
	if err != nil || !claimed.GetShoe().GetOwnedByTable() || claimed.GetShoe().GetTableId() == "" {
		t.Fatalf("the lost claim: %v %v", claimed, err)
	}
	resp, err := h.tables.CreateTable(h.as("op"), req)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	if id != claimed.GetShoe().GetTableId() {
		t.Fatalf("table %s on a shoe claimed for %s", id, claimed.GetShoe().GetTableId())
	}
	if again, err := h.tables.CreateTable(h.as("op"), req); err != nil || again.GetTable().GetTableId() != id {
		t.Fatalf("the retry: %v %v", again, err)
	}
	h.join(id, "alice")
	h.join(id, "bob")
	h.acceptBank(id, "alice", 1000)
	// The first betting: the operator's probe and a second table fail.
	_, err = h.shoes.DealCard(h.as("op"), &shoev1.DealCardRequest{RequestId: "peek", ShoeId: shoeID})
	if status.Code(err) != codes.PermissionDenied || errs.Reason(err) != "SHOE_OWNED_BY_TABLE" {
		t.Fatalf("the operator's DealCard in the first betting: %v", err)
	}
	_, err = h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: "second", HouseRules: certMoney(nil), ShoeId: shoeID})
	wantReason(t, err, codes.FailedPrecondition, reasonShoeUnusable)
	h.mustBet(id, "bob", 1000)
	if _, err := h.decide(id, "bob", false); err != nil { // on 5, he stands; the banker stands on 6
		t.Fatal(err)
	}
	last := h.get(id).GetLastCoup()
	if got := cardCodes(last.GetPlayerCards()) + " / " + cardCodes(last.GetBankerCards()); got != "2C 3D / KD 6H" {
		t.Fatalf("the table's first coup: %s, want the prepared 2C 3D / KD 6H", got)
	}
}

// TestRepublishAfterLongOutageSkipsPublishedEvents: events still in the
// outbox at start (published just before a crash, their removal lost) are
// not published again when the stream already holds them, even past
// JetStream's duplicate window (simulated here by new message ids).
func TestRepublishAfterLongOutageSkipsPublishedEvents(t *testing.T) {
	r := newWatchRig(t)
	h := r.h
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	pending, err := outbox.Pending(h.table.db, 1000)
	if err != nil {
		t.Fatal(err)
	}
	r.relay(t) // all published
	check := h.table.publishedCheck()
	ctx := context.Background()
	var mine int
	for _, m := range pending {
		evs, err := tableevents.Decode("", m.Subject, m.Payload)
		if err != nil || evs[0].GetTableId() != id {
			continue
		}
		mine += len(evs)
		m.ID = "again-" + m.ID // past the duplicate window: a new id would not be dropped
		done, err := check(ctx, r.js, m)
		if err != nil || !done {
			t.Fatalf("batch of events %d-%d of %s: published %v, %v", evs[0].GetSequence(), evs[len(evs)-1].GetSequence(), id, done, err)
		}
	}
	if mine == 0 {
		t.Fatal("no events")
	}
	// A batch past the stream's last event is not published yet.
	next, _ := tableevents.Batch([]*eventsv1.TableEvent{{TableId: id, Sequence: uint64(mine) + 1}})
	b, _ := proto.Marshal(next)
	if done, err := check(ctx, r.js, outbox.Message{Subject: tableevents.BatchSubject(id), Payload: b}); err != nil || done {
		t.Fatalf("a new batch counted as published: %v, %v", done, err)
	}
}

// TestOddsKeepVoidedHoleCardsSecret: after a void, the odds everyone but
// auditors gets count the voided coup's face-down cards as still in the
// shoe; an auditor's count them out.
func TestOddsKeepVoidedHoleCardsSecret(t *testing.T) {
	h := newHarness(t)
	h.fund(1_000_000, "alice", "bob")
	id := h.shuffledTable("alice", "bob")
	h.acceptBank(id, "alice", 1000)
	count := func(who string) int32 {
		ctx := h.as(who)
		if who == "auditor" {
			ctx = h.asRole("auditor-1", auth.RoleAuditor)
		}
		o, err := h.tables.GetOdds(ctx, &tablev1.GetOddsRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		var n int32
		for _, c := range o.GetComposition().GetRankCounts() {
			n += c
		}
		return n
	}
	// Play until a coup waits for a decision (its four cards face down),
	// then void it.
	for i := 0; i < 400; i++ {
		tbl := h.get(id)
		if tbl.GetState() == tablev1.TableState_TABLE_STATE_OFFERING_BANK {
			h.acceptBank(id, tbl.GetOfferedPlayerId(), 1000)
			continue
		}
		punter := "bob"
		if tbl.GetBankerPlayerId() == "bob" {
			punter = "alice"
		}
		seeded := tbl.GetShoeEntropy().GetSeeded()
		before := count(punter)
		tbl = h.mustBet(id, punter, 100)
		if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION {
			continue
		}
		if !seeded {
			// The shoe's first coup: its burn came with its seeding.
			sh, err := h.shoes.GetShoe(h.as("auditor"), &shoev1.GetShoeRequest{ShoeId: tbl.GetShoeId()})
			if err != nil {
				t.Fatal(err)
			}
			before -= int32(len(sh.GetShoe().GetBurned()))
		}
		// A third card (the player's, at the banker's decision) is face up.
		before -= int32(len(tbl.GetCoup().GetPlayerCards()) + len(tbl.GetCoup().GetBankerCards()) - 4)
		if _, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, Reason: "x", CoupId: tbl.GetCoup().GetCoupId()}); err != nil {
			t.Fatal(err)
		}
		if got := count(punter); got != before {
			t.Fatalf("%s's odds count %d cards after the void, %d before: the voided hole cards show", punter, got, before)
		}
		if got := count("auditor"); got != before-4 {
			t.Fatalf("the auditor's odds count %d cards, want %d", got, before-4)
		}
		return
	}
	t.Fatal("no decision in 400 tries")
}

// TestClosedTableClosesItsShoe: the shoe of a closed table is closed, so
// its reveal is public.
func TestClosedTableClosesItsShoe(t *testing.T) {
	h := newHarness(t)
	created, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid()})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	if _, err := h.tables.CloseTable(h.as("croupier"), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: id, Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	sh, err := h.shoes.GetShoe(h.as("alice"), &shoev1.GetShoeRequest{ShoeId: created.GetTable().GetShoeId()})
	if err != nil || sh.GetShoe().GetState() != shoev1.ShoeState_SHOE_STATE_CLOSED {
		t.Fatalf("the closed table's shoe: %v, %v", sh.GetShoe().GetState(), err)
	}
}

// TestSeatFeeRefusedDoesNotJamTheTable: a seat fee the wallet refuses
// (here: a player without an account) is recorded unpaid; the table goes
// on.
func TestSeatFeeRefusedDoesNotJamTheTable(t *testing.T) {
	h := newHarness(t)
	h.fund(100000, "alice", "bob")
	id := h.tableWith(&tablev1.HouseRules{HourlyFee: 3600, BetTimeLimitMs: 600000}, 0, []string{"2C", "9H", "3D", "TC", "2C", "9H", "3D", "TC"}, "alice", "bob")
	h.join(id, "nobody")
	h.acceptBank(id, "alice", 1000)
	h.clock.Advance(5 * time.Minute) // seat time to bill, within bob's turn
	h.mustBet(id, "bob", 1000)       // covers the bank: the coup is dealt
	h.settleLoop(id)
	for _, ev := range h.events(id) {
		t.Logf("%s %v", ev.kind, ev.GetPayload())
	}
	tbl := h.mustBet(id, "bob", 2000)
	if tbl.GetCoupsPlayed() != 2 {
		t.Fatalf("coups played %d, want 2: %v", tbl.GetCoupsPlayed(), tbl)
	}
	var unpaid bool
	for _, ev := range h.events(id) {
		if f := ev.GetSeatFeeCharged(); f != nil && f.GetPlayerId() == "nobody" && !f.GetPaid() {
			unpaid = true
		}
	}
	if !unpaid {
		t.Error("no unpaid seat_fee_charged for the player without an account")
	}
}

// TestCreateTableRequestIDsAreTheCallers: another caller's CreateTable
// with the same request id opens another table.
func TestCreateTableRequestIDsAreTheCallers(t *testing.T) {
	h := newHarness(t)
	a, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: "same"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: "same"})
	if err != nil {
		t.Fatal(err)
	}
	if a.GetTable().GetTableId() == b.GetTable().GetTableId() {
		t.Fatal("the operator got the croupier's table")
	}
}

// TestCreateTableOnTheCallersClock: CreateTable's call to shoe-svc for
// the table's first shoe is bounded by the caller's deadline, not by the
// 5 s of one internal call (bulk setup on a busy machine waits for
// shoe-svc longer than that), and by a minute when the caller set none.
func TestCreateTableOnTheCallersClock(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	var left []time.Duration // time left to CreateShoe's deadline; -1: none
	h.restartTableWith(grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(method, "/CreateShoe") {
			d := time.Duration(-1)
			if dl, ok := ctx.Deadline(); ok {
				d = time.Until(dl)
			}
			mu.Lock()
			left = append(left, d)
			mu.Unlock()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}))
	croupier := auth.Caller{Subject: "croupier-1", Role: auth.RoleCroupier}
	ctx, cancel := context.WithTimeout(auth.Outgoing(context.Background(), croupier), 5*time.Minute)
	defer cancel()
	if _, err := h.tables.CreateTable(ctx, &tablev1.CreateTableRequest{RequestId: h.rid()}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tables.CreateTable(auth.Outgoing(context.Background(), croupier), &tablev1.CreateTableRequest{RequestId: h.rid()}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(left) != 2 {
		t.Fatalf("%d CreateShoe calls, want 2", len(left))
	}
	// The caller's 5 minutes reach shoe-svc (less the time spent getting
	// there); without a deadline, one minute.
	if left[0] < 4*time.Minute || left[0] > 5*time.Minute {
		t.Errorf("with the caller's 5 minutes, CreateShoe had %v", left[0])
	}
	if left[1] < 50*time.Second || left[1] > time.Minute {
		t.Errorf("without a caller's deadline, CreateShoe had %v, want about a minute", left[1])
	}
}

// heldRaise is a client interceptor that holds the first raise's
// ResizeHold in the network: table-svc gets UNAVAILABLE at once and the
// wallet nothing, until the test delivers the request, as sent, late.
type heldRaise struct {
	mu   sync.Mutex
	late *walletv1.ResizeHoldRequest
}

func (l *heldRaise) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if r, ok := req.(*walletv1.ResizeHoldRequest); ok && strings.Contains(r.GetRequestId(), "/raise/") {
		l.mu.Lock()
		first := l.late == nil
		if first {
			l.late = proto.Clone(r).(*walletv1.ResizeHoldRequest)
		}
		l.mu.Unlock()
		if first {
			return status.Error(codes.Unavailable, "the raise is held in the network (test)")
		}
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// TestLateRaiseOfAnEarlierRequestGrowsNothing: the banker's raise gets no
// answer from the wallet (its ResizeHold is on its way, late); he raises
// again with a new request, which goes through, and the bank wins the
// coup. The first raise's ResizeHold, arriving after the settlement, must
// not set the bank hold back to the raised bank: it is refused
// (REQUEST_CANCELLED) and the banker's escrow is his whole new bank
// (CF-BANK-RAISE). It used to be applied: the bank hold shrank to the
// raise's amount while the table played on with the bank won.
func TestLateRaiseOfAnEarlierRequestGrowsNothing(t *testing.T) {
	h := newHarness(t)
	l := &heldRaise{}
	h.restartTableWith(grpc.WithChainUnaryInterceptor(l.intercept))
	h.fund(10000, "alice", "bob", "carol")
	// Player 2C 3D = 5, banker 4H 5S = 9: a natural, the bank wins.
	id := h.tableWith(nil, 0, []string{"2C", "4H", "3D", "5S"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 600)
	if _, err := h.tables.PlaceBet(h.as("carol"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 700, OverBank: true}); err != nil {
		t.Fatal(err)
	}
	first := &tablev1.RaiseBankRequest{RequestId: "raise-1", TableId: id, PlayerId: "alice", Raise: true}
	_, err := h.tables.RaiseBank(h.as("alice"), first)
	wantReason(t, err, codes.Unavailable, reasonDependencyUnavailable)
	resp, err := h.tables.RaiseBank(h.as("alice"), &tablev1.RaiseBankRequest{RequestId: "raise-2", TableId: id, PlayerId: "alice", Raise: true})
	if err != nil {
		t.Fatal(err)
	}
	last := resp.GetTable().GetLastCoup()
	if last.GetStake() != 1300 || last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS {
		t.Fatalf("raised coup %v", last)
	}
	// The bank won 1300 less 5% commission (65): 1300 + 1235.
	const bank = 2535
	if b := h.get(id).GetBank(); b != bank {
		t.Fatalf("bank %d, want %d", b, bank)
	}
	l.mu.Lock()
	late := l.late
	l.mu.Unlock()
	if late == nil {
		t.Fatal("the first raise's ResizeHold was never sent")
	}
	_, err = h.wallets.ResizeHold(h.asRole("table-svc", auth.RoleService), late)
	wantReason(t, err, codes.FailedPrecondition, "REQUEST_CANCELLED")
	if b, held := h.account("player:alice"); held != bank || b != 10000+1235 {
		t.Fatalf("alice has %d, %d held; want %d, %d held (her whole bank)", b, held, 10000+1235, bank)
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
	// The first raise, sent again, changes nothing.
	_, err = h.tables.RaiseBank(h.as("alice"), first)
	wantReason(t, err, codes.Aborted, reasonRequestAbandoned)
}

// TestVoidDuringRaiseCancelsALostRaise: the banker's raise gets no answer
// (its ResizeHold is late), then the croupier voids the coup: the bank
// stays as it was (CF-ERROR), every bet is returned, and the late raise,
// arriving after the void, grows nothing (REQUEST_CANCELLED): the
// banker's escrow is his bank, not the raised one.
func TestVoidDuringRaiseCancelsALostRaise(t *testing.T) {
	h := newHarness(t)
	l := &heldRaise{}
	h.restartTableWith(grpc.WithChainUnaryInterceptor(l.intercept))
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, nil, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 600)
	if _, err := h.tables.PlaceBet(h.as("carol"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 700, OverBank: true}); err != nil {
		t.Fatal(err)
	}
	_, err := h.tables.RaiseBank(h.as("alice"), &tablev1.RaiseBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Raise: true})
	wantReason(t, err, codes.Unavailable, reasonDependencyUnavailable)
	coup := h.get(id).GetCoup().GetCoupId()
	if _, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, CoupId: coup, Reason: "misdeal"}); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	late := l.late
	l.mu.Unlock()
	_, err = h.wallets.ResizeHold(h.asRole("table-svc", auth.RoleService), late)
	wantReason(t, err, codes.FailedPrecondition, "REQUEST_CANCELLED")
	if b := h.get(id).GetBank(); b != 1000 {
		t.Fatalf("bank %d after the void, want 1000", b)
	}
	for p, want := range map[string]int64{"alice": 1000, "bob": 0, "carol": 0} {
		if b, held := h.account("player:" + p); held != want || b != 10000 {
			t.Errorf("%s has %d, %d held; want 10000, %d held", p, b, held, want)
		}
	}
	wantIntents(t, h, 0)
}
