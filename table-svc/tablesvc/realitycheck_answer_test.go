package tablesvc

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

const (
	rcContinue = eventsv1.RealityCheckAnswer_REALITY_CHECK_ANSWER_CONTINUE
	rcStop     = eventsv1.RealityCheckAnswer_REALITY_CHECK_ANSWER_STOP
)

// answer is who's answer to reality check n at table id, under request
// id rid ("" for a fresh one).
func (h *harness) answer(id, who string, n int64, a eventsv1.RealityCheckAnswer, rid string) (*tablev1.Table, error) {
	if rid == "" {
		rid = h.rid()
	}
	resp, err := h.tables.AnswerRealityCheck(h.as(who), &tablev1.AnswerRealityCheckRequest{RequestId: rid, TableId: id,
		PlayerId: who, CheckNumber: n, Answer: a})
	return resp.GetTable(), err
}

// answers are the reality_check_answered events in the outbox, each
// checked to be on its player's own subject, outside the table's
// sequence.
func (h *harness) answers() []*eventsv1.RealityCheckAnswered {
	h.t.Helper()
	msgs, err := outbox.Pending(h.table.db, 10000)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*eventsv1.RealityCheckAnswered
	for _, m := range msgs {
		if !strings.HasPrefix(m.Subject, "chemmy.player.") {
			continue // the tables' batches
		}
		ev := new(eventsv1.TableEvent)
		if err := proto.Unmarshal(m.Payload, ev); err != nil {
			h.t.Fatal(err)
		}
		if a := ev.GetRealityCheckAnswered(); a != nil {
			if m.Subject != "chemmy.player."+a.GetPlayerId()+".reality_check_answered" || ev.GetSequence() != 0 {
				h.t.Errorf("an answer on %s, sequence %d", m.Subject, ev.GetSequence())
			}
			out = append(out, a)
		}
	}
	return out
}

// stoppedAt are the players table id stood up after a reality check's
// "stop", each after his player_left.
func (h *harness) stoppedAt(id string) []string {
	h.t.Helper()
	var out []string
	evs := h.events(id)
	for i, ev := range evs {
		sa := ev.GetStaffAction()
		if sa == nil || sa.GetAction() != "stood_up_reality_check" {
			continue
		}
		p := strings.TrimPrefix(strings.SplitN(sa.GetDetail(), ",", 2)[0], "player ")
		var left string
		for j := i - 1; j >= 0 && left == ""; j-- {
			left = evs[j].GetPlayerLeft().GetPlayerId()
		}
		if left != p || sa.GetActorRole() != "service" || !strings.Contains(sa.GetDetail(), "reality check") {
			h.t.Errorf("stood_up_reality_check %v does not follow %s's player_left (%q's)", sa, p, left)
		}
		out = append(out, p)
	}
	return out
}

// TestRealityCheckAnswer: alice (reality checks every 10 minutes) banks
// against bob and carol; each coup her bank's natural 9 beats the
// player's 5. She answers her first check "continue" (once: a second
// answer to it is refused, a retry of the same request is not) and plays
// on; she answers her second "stop" while the next coup is in play (bob
// has bet against her bank): she stays until it is settled, then is stood
// up, her bank given up. Who may answer what is checked, and the money:
// four coups of 1000 won by the bank, 5% commission.
func TestRealityCheckAnswer(t *testing.T) {
	h := quietHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	h.setLimits("alice", &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(10 * time.Minute)})
	id := h.tableWith(nil, 0, slices.Concat(bankerNaturals, bankerNaturals), "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	coup := func() {
		t.Helper()
		h.mustBet(id, "bob", 500)
		h.mustBet(id, "carol", 500)
	}
	coup()
	_, err := h.answer(id, "alice", 1, rcContinue, "")
	wantReason(t, err, codes.FailedPrecondition, reasonNoRealityCheck) // none sent yet
	h.clock.Advance(11 * time.Minute)
	coup() // check 1

	for _, c := range []struct {
		who    string
		n      int64
		a      eventsv1.RealityCheckAnswer
		code   codes.Code
		reason string
	}{
		{"alice", 2, rcContinue, codes.FailedPrecondition, reasonNoRealityCheck},
		{"bob", 1, rcContinue, codes.FailedPrecondition, reasonNoRealityCheck},
		{"dave", 1, rcStop, codes.FailedPrecondition, reasonNotSeated},
		{"alice", 0, rcStop, codes.InvalidArgument, reasonInvalidArgument},
		{"alice", 1, eventsv1.RealityCheckAnswer_REALITY_CHECK_ANSWER_UNSPECIFIED, codes.InvalidArgument, reasonInvalidArgument},
	} {
		_, err := h.answer(id, c.who, c.n, c.a, "")
		wantReason(t, err, c.code, c.reason)
	}
	_, err = h.tables.AnswerRealityCheck(h.as("bob"), &tablev1.AnswerRealityCheckRequest{RequestId: h.rid(), TableId: id,
		PlayerId: "alice", CheckNumber: 1, Answer: rcStop})
	wantReason(t, err, codes.PermissionDenied, "NOT_YOURSELF")

	for range 2 { // a retry answers the same
		if _, err := h.answer(id, "alice", 1, rcContinue, "continue-1"); err != nil {
			t.Fatal(err)
		}
	}
	_, err = h.answer(id, "alice", 1, rcStop, "")
	wantReason(t, err, codes.FailedPrecondition, reasonNoRealityCheck)
	h.clock.Advance(10 * time.Minute)
	coup() // check 2 (21 minutes in)

	h.mustBet(id, "bob", 500) // the fourth coup is in play
	tb, err := h.answer(id, "alice", 2, rcStop, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(seatedIDs(tb), "alice") {
		t.Fatal("alice stood up with bob's bet against her bank")
	}
	h.expire()
	if !slices.Contains(seatedIDs(h.get(id)), "alice") || len(h.stoppedAt(id)) != 0 {
		t.Fatal("alice stood up before the coup's settlement")
	}
	h.mustBet(id, "carol", 500)
	h.expire()
	if got := seatedIDs(h.get(id)); slices.Contains(got, "alice") || !equalStrings(h.stoppedAt(id), []string{"alice"}) {
		t.Fatalf("after the coup: seated %v, stopped %v; want alice gone", got, h.stoppedAt(id))
	}

	answers := h.answers()
	if len(answers) != 2 || answers[0].GetCheckNumber() != 1 || answers[0].GetAnswer() != rcContinue ||
		answers[1].GetCheckNumber() != 2 || answers[1].GetAnswer() != rcStop || answers[1].GetPlayerId() != "alice" || answers[1].GetSessionId() == "" {
		t.Errorf("answers %v", answers)
	}
	h.wantBalances(map[string]int64{"player:alice": 10000 + 4*(1000-50), "player:bob": 10000 - 4*500, "player:carol": 10000 - 4*500,
		"house:commission": 4 * 50})
}

// TestRealityCheckStopBetweenCoups: answered "stop" between coups, the
// banker is stood up at once (his bank passed, CF-PASS) and the answer's
// table shows him gone.
func TestRealityCheckStopBetweenCoups(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	h.setLimits("alice", &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(10 * time.Minute)})
	id := h.tableWith(nil, 0, bankerNaturals, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 500)
	h.clock.Advance(11 * time.Minute)
	h.mustBet(id, "bob", 500) // check 1, after the settlement
	tb, err := h.answer(id, "alice", 1, rcStop, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := seatedIDs(tb); slices.Contains(got, "alice") || tb.GetBankerPlayerId() == "alice" {
		t.Fatalf("alice still at the table after stopping between coups: seated %v, banker %q", got, tb.GetBankerPlayerId())
	}
	if !equalStrings(h.stoppedAt(id), []string{"alice"}) {
		t.Errorf("stopped %v", h.stoppedAt(id))
	}
	h.wantBalances(map[string]int64{"player:alice": 10000 + 2*(500-25), "player:bob": 10000 - 2*500})
}

// TestRealityCheckPausesPlay: bob (reality checks every 10 minutes) bets
// against alice's bank; once he was sent a check, nothing of his is
// staked until he answers it: his bet is refused REALITY_CHECK_UNANSWERED
// (the check's number in the metadata) and nothing is held; he may still
// decline his turn, and the coup goes on without him. Once he answers
// "continue" he bets again.
func TestRealityCheckPausesPlay(t *testing.T) {
	h := quietHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	h.setLimits("bob", &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(10 * time.Minute)})
	id := h.tableWith(nil, 0, slices.Concat(bankerNaturals, bankerNaturals), "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 500)
	h.mustBet(id, "carol", 500)
	h.clock.Advance(11 * time.Minute)
	h.mustBet(id, "bob", 500)
	h.mustBet(id, "carol", 500) // bob's check 1 comes with this coup's settlement
	if checks, _ := h.realityChecks(); len(checks) != 1 || checks[0].GetRealityCheck().GetPlayerId() != "bob" {
		t.Fatalf("reality checks %v, want bob's first", checks)
	}

	balance, held := h.account("player:bob")
	_, err := h.bet(id, "bob", 500)
	wantReason(t, err, codes.FailedPrecondition, reasonRealityCheckUnanswered)
	if n := errs.Info(err).GetMetadata()["check_number"]; n != "1" {
		t.Errorf("check_number %q, want 1", n)
	}
	if b, hd := h.account("player:bob"); b != balance || hd != held {
		t.Fatalf("bob's account after the refused bet: balance %d held %d, was %d %d", b, hd, balance, held)
	}
	if _, err := h.tables.DeclineBet(h.as("bob"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatalf("bob declines his turn: %v", err)
	}
	tb, err := h.tables.GetTable(h.as("op"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	played := tb.GetTable().GetCoupsPlayed()
	h.mustBet(id, "carol", tb.GetTable().GetCoup().GetUncovered()) // carol covers the bank: the coup is dealt
	if tb, err = h.tables.GetTable(h.as("op"), &tablev1.GetTableRequest{TableId: id}); err != nil || tb.GetTable().GetCoupsPlayed() != played+1 {
		t.Fatalf("the coup without bob: %v, %v", tb, err)
	}

	if _, err := h.answer(id, "bob", 1, rcContinue, ""); err != nil {
		t.Fatal(err)
	}
	h.mustBet(id, "bob", 500)
}
