package tablesvc

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// launched makes a game-launch session of player's for table id (the
// operator's CreateLaunchSession) and returns a context acting as the
// player in it, as the gateway names him after his token, and the
// session's id.
func (h *harness) launched(player, id string) (func() context.Context, string) {
	h.t.Helper()
	resp, err := h.wallets.CreateLaunchSession(h.as("op"), &walletv1.CreateLaunchSessionRequest{RequestId: h.rid(), PlayerId: player, TableId: id})
	if err != nil {
		h.t.Fatal(err)
	}
	sid := resp.GetLaunchSession().GetLaunchSessionId()
	return func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h.t.Cleanup(cancel)
		return auth.Outgoing(ctx, auth.Caller{Subject: player, Role: auth.RolePlayer, Session: sid})
	}, sid
}

func (h *harness) revoke(sid string) {
	h.t.Helper()
	if _, err := h.wallets.RevokeLaunchSession(h.as("op"), &walletv1.RevokeLaunchSessionRequest{RequestId: h.rid(), LaunchSessionId: sid, Reason: "test"}); err != nil {
		h.t.Fatal(err)
	}
}

// TestRaiseBankChecksLaunchSession: a bank raise is a stake: asked in the
// banker's game-launch session once it is revoked, it is refused
// FAILED_PRECONDITION SESSION_EXPIRED, nothing is raised and no money
// moves; the table still waits for his answer, and his decline (which
// stakes nothing) is taken: the excess bet is cut back (CF-BANK-RAISE).
// The raise used to go through: the wallet's ResizeHold was not told the
// session.
func TestRaiseBankChecksLaunchSession(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	// Player 4C 5D = 9: the bank loses what is at stake.
	id := h.tableWith(nil, 0, []string{"4C", "3H", "5D", "5S"}, "alice", "bob", "carol")
	alice, sid := h.launched("alice", id)
	if _, err := h.tables.AcceptBank(alice(), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatalf("alice's bank in her session: %v", err)
	}
	h.mustBet(id, "bob", 600)
	if _, err := h.tables.PlaceBet(h.as("carol"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 700, OverBank: true}); err != nil {
		t.Fatal(err)
	}
	h.revoke(sid)
	before := h.get(id)
	_, err := h.tables.RaiseBank(alice(), &tablev1.RaiseBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Raise: true})
	wantReason(t, err, codes.FailedPrecondition, reasonSessionExpired)
	for p, want := range map[string]int64{"alice": 1000, "bob": 600, "carol": 700} {
		if b, held := h.account("player:" + p); b != 10000 || held != want {
			t.Errorf("%s has %d, %d held after the refused raise; want 10000, %d held", p, b, held, want)
		}
	}
	if after := h.get(id); after.GetState() != tablev1.TableState_TABLE_STATE_BANK_RAISE || after.GetBank() != 1000 || after.GetEventSequence() != before.GetEventSequence() {
		t.Fatalf("the table after the refused raise: %v, bank %d, events %d (was %d)", after.GetState(), after.GetBank(), after.GetEventSequence(), before.GetEventSequence())
	}
	wantIntents(t, h, 0)
	resp, err := h.tables.RaiseBank(alice(), &tablev1.RaiseBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Raise: false})
	if err != nil {
		t.Fatalf("alice declines: %v", err)
	}
	// The bank (1000) loses bob's 600 and carol's bet cut back to 400.
	if last := resp.GetTable().GetLastCoup(); last.GetStake() != 1000 || last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES {
		t.Fatalf("the coup after the decline: %v", last)
	}
	for p, want := range map[string]int64{"alice": 9000, "bob": 10600, "carol": 10400} {
		if b, held := h.account("player:" + p); b != want || held != 0 {
			t.Errorf("%s has %d, %d held; want %d, none held", p, b, held, want)
		}
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}

// TestHourlyFeeChargedAfterTheSessionEnds: the hourly seat fee is owed
// for seat time already sat, as a coup already staked is settled: a
// player whose game-launch session is revoked while he sits is still
// charged it, after the coup and when he leaves (CF-BANK-WINS house rule
// hourly_fee; table.proto HouseRules.hourly_fee).
func TestHourlyFeeChargedAfterTheSessionEnds(t *testing.T) {
	h := newHarness(t)
	h.fund(100000, "alice", "bob")
	// A banker natural: the bank wins 1000, commission-free.
	id := h.tableWith(&tablev1.HouseRules{HourlyFee: 3600}, 0, []string{"2C", "9H", "3D", "TC"}, "alice", "bob")
	bob, sid := h.launched("bob", id)
	h.clock.Advance(30 * time.Minute)
	h.expire() // alice's offer of the bank runs out: bob's turn
	if _, err := h.tables.AcceptBank(bob(), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Amount: 1000}); err != nil {
		t.Fatalf("bob's bank in his session: %v", err)
	}
	h.revoke(sid)
	h.mustBet(id, "alice", 1000)
	// 30 minutes at 3600 an hour: 1800 each, bob's too.
	if b, _ := h.account("player:bob"); b != 100000+1000-1800 {
		t.Errorf("bob %d, want %d: his fee charged though his session ended", b, 100000+1000-1800)
	}
	h.clock.Advance(10 * time.Minute)
	// The croupier stands bob up (his own call would be refused at the
	// gateway): his bank is passed back to him, and his last 10 minutes
	// are charged as he leaves.
	if _, err := h.tables.LeaveTable(h.as("croupier"), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	if b, held := h.account("player:bob"); b != 100000+1000-1800-600 || held != 0 {
		t.Errorf("bob after leaving %d, %d held; want %d, none held", b, held, 100000+1000-1800-600)
	}
	if house, _ := h.account("house:commission"); house != 1800+1800+600 {
		t.Errorf("house %d, want %d", house, 1800+1800+600)
	}
	h.conserved(200000, "player:alice", "player:bob")
}
