package tablesvc

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

func (h *harness) listRounds(who string, req *tablev1.ListRoundsRequest) (*tablev1.ListRoundsResponse, error) {
	return h.tables.ListRounds(h.as(who), req)
}

func (h *harness) mustListRounds(who string, req *tablev1.ListRoundsRequest) []*tablev1.Round {
	h.t.Helper()
	resp, err := h.listRounds(who, req)
	if err != nil {
		h.t.Fatalf("%s ListRounds %v: %v", who, req, err)
	}
	return resp.GetRounds()
}

func (h *harness) getRound(who, table, coup string) (*tablev1.GetRoundResponse, error) {
	return h.tables.GetRound(h.as(who), &tablev1.GetRoundRequest{TableId: table, CoupId: coup})
}

// TestRoundHistoryCheminDeFer: alice banks three coups of chemin de fer
// against bob; each recalls his rounds newest first, page by page, with
// every card face up; carol, in none of them, reads none; the history
// survives a restart.
func TestRoundHistoryCheminDeFer(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	var coups, tables []string
	for _, cards := range [][]string{{"4C", "3H", "5D", "5S"}, {"2C", "9H", "3D", "TC"}, {"4C", "9H", "4D", "KS"}} {
		id := h.tableWith(nil, 0, cards, "alice", "bob")
		h.acceptBank(id, "alice", 1000)
		last := h.mustBet(id, "bob", 500).GetLastCoup()
		coups, tables = append(coups, last.GetCoupId()), append(tables, id)
	}
	check := func() {
		t.Helper()
		for _, p := range []string{"alice", "bob"} {
			rs := h.mustListRounds(p, &tablev1.ListRoundsRequest{PlayerId: p})
			if len(rs) != 3 {
				t.Fatalf("%s recalls %d rounds, want 3", p, len(rs))
			}
			for i, r := range rs {
				want := coups[2-i]
				if r.GetCoupId() != want || r.GetTableId() != tables[2-i] || r.GetState() != tablev1.RoundState_ROUND_STATE_SETTLED ||
					r.GetVariant() != tablev1.Variant_VARIANT_CHEMIN_DE_FER || r.GetNumber() != 1 || r.GetOutcome() == tablev1.Outcome_OUTCOME_UNSPECIFIED {
					t.Errorf("%s's round %d: %v, want coup %s", p, i, r, want)
				}
				stakes := map[string]int64{}
				for _, rp := range r.GetPlayers() {
					stakes[rp.GetPlayerId()] = rp.GetStake()
					if rp.GetBanker() != (rp.GetPlayerId() == "alice") {
						t.Errorf("round %s: banker flag of %v", r.GetCoupId(), rp)
					}
				}
				if len(stakes) != 2 || stakes["alice"] != 1000 || stakes["bob"] != 500 {
					t.Errorf("round %s players %v", r.GetCoupId(), r.GetPlayers())
				}
			}
		}
		// The first coup: bob's 9 beats alice's 8, all four cards shown.
		got, err := h.getRound("bob", tables[0], coups[0])
		if err != nil {
			t.Fatal(err)
		}
		var cards []string
		kinds := map[string]bool{}
		for _, ev := range got.GetEvents() {
			if ev.GetCoupId() != coups[0] {
				t.Errorf("event of coup %s in round %s", ev.GetCoupId(), coups[0])
			}
			if cd := ev.GetCardDealt(); cd != nil {
				cards = append(cards, cd.GetCard().GetCode())
			}
			switch {
			case ev.GetBetPlaced() != nil:
				kinds["bet"] = true
			case ev.GetCoupResulted() != nil:
				kinds["result"] = true
			case ev.GetCoupSettled() != nil:
				kinds["settled"] = true
			}
		}
		if len(cards) != 4 || cards[0] != "4C" || cards[1] != "3H" || cards[2] != "5D" || cards[3] != "5S" {
			t.Errorf("cards dealt %v, want 4C 3H 5D 5S face up", cards)
		}
		if len(kinds) != 3 || got.GetRound().GetBankNet() != -500 {
			t.Errorf("round %v events %v", got.GetRound(), kinds)
		}
		// Carol reads none of them.
		if _, err := h.getRound("carol", tables[0], coups[0]); err == nil {
			t.Error("carol read alice's round")
		} else {
			wantReason(t, err, codes.PermissionDenied, reasonNotYourRound)
		}
		_, err = h.listRounds("carol", &tablev1.ListRoundsRequest{PlayerId: "alice"})
		wantReason(t, err, codes.PermissionDenied, "NOT_YOURSELF")
		_, err = h.listRounds("carol", &tablev1.ListRoundsRequest{})
		wantReason(t, err, codes.PermissionDenied, "NOT_YOURSELF")
		if rs := h.mustListRounds("carol", &tablev1.ListRoundsRequest{PlayerId: "carol"}); len(rs) != 0 {
			t.Errorf("carol has rounds %v", rs)
		}
		// Staff read every round, by table or all.
		if rs := h.mustListRounds("auditor", &tablev1.ListRoundsRequest{TableId: tables[1]}); len(rs) != 1 || rs[0].GetCoupId() != coups[1] {
			t.Errorf("table %s rounds %v", tables[1], rs)
		}
		if rs := h.mustListRounds("auditor", &tablev1.ListRoundsRequest{}); len(rs) != 3 {
			t.Errorf("all rounds %v", rs)
		}
		if _, err := h.getRound("auditor", tables[2], coups[2]); err != nil {
			t.Error(err)
		}
		_, err = h.getRound("alice", tables[1], coups[2])
		wantReason(t, err, codes.NotFound, reasonRoundNotFound)
	}
	check()

	// Paging: two, then one, then the end.
	p1, err := h.listRounds("alice", &tablev1.ListRoundsRequest{PlayerId: "alice", PageSize: 2})
	if err != nil || len(p1.GetRounds()) != 2 || p1.GetNextPageToken() == "" {
		t.Fatalf("first page %v %v", p1, err)
	}
	p2, err := h.listRounds("alice", &tablev1.ListRoundsRequest{PlayerId: "alice", PageSize: 2, PageToken: p1.GetNextPageToken()})
	if err != nil || len(p2.GetRounds()) != 1 || p2.GetNextPageToken() != "" || p2.GetRounds()[0].GetCoupId() != coups[0] {
		t.Fatalf("second page %v %v", p2, err)
	}
	_, err = h.listRounds("alice", &tablev1.ListRoundsRequest{PlayerId: "alice", PageToken: "x!"})
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
	// A time range: rounds started before the second one.
	second := h.mustListRounds("alice", &tablev1.ListRoundsRequest{PlayerId: "alice", PageSize: 2})[1]
	if rs := h.mustListRounds("alice", &tablev1.ListRoundsRequest{PlayerId: "alice", EndTime: second.GetStartTime()}); len(rs) != 1 || rs[0].GetCoupId() != coups[0] {
		t.Errorf("before the second round: %v", rs)
	}
	if rs := h.mustListRounds("alice", &tablev1.ListRoundsRequest{PlayerId: "alice", StartTime: second.GetStartTime()}); len(rs) != 2 {
		t.Errorf("from the second round: %v", rs)
	}

	h.restartTable()
	check()
}

// TestRoundHistoryPuntoBanco: a round in play is refused to its player
// (no card before the showdown) and shown to staff as the table publishes
// it; once settled the player reads every card.
func TestRoundHistoryPuntoBanco(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(5000, "alice", "bob")
	id := h.pbTable(nil, 0, "2C", "KD", "3D", "5H", "4S", "9C")
	h.join(id, "alice")
	tb := h.mustPBBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 1000)
	coup := tb.GetCoup().GetCoupId()
	rs := h.mustListRounds("alice", &tablev1.ListRoundsRequest{PlayerId: "alice"})
	if len(rs) != 1 || rs[0].GetCoupId() != coup || rs[0].GetState() != tablev1.RoundState_ROUND_STATE_IN_PLAY {
		t.Fatalf("alice's rounds in play: %v", rs)
	}
	_, err := h.getRound("alice", id, coup)
	wantReason(t, err, codes.FailedPrecondition, reasonRoundInPlay)
	if got, err := h.getRound("croupier", id, coup); err != nil || len(got.GetEvents()) == 0 {
		t.Fatalf("croupier's round in play: %v %v", got, err)
	}
	h.closeWindow(id)
	got, err := h.getRound("alice", id, coup)
	if err != nil {
		t.Fatal(err)
	}
	r := got.GetRound()
	if r.GetState() != tablev1.RoundState_ROUND_STATE_SETTLED || r.GetVariant() != tablev1.Variant_VARIANT_PUNTO_BANCO ||
		r.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES || r.GetBankNet() != 1000 || len(r.GetPlayers()) != 1 || r.GetPlayers()[0].GetStake() != 1000 {
		t.Errorf("settled round %v", r)
	}
	var cards int
	for _, ev := range got.GetEvents() {
		if cd := ev.GetCardDealt(); cd != nil {
			if cd.GetCard().GetCode() == "" {
				t.Errorf("card hidden in the recall: %v", cd)
			}
			cards++
		}
	}
	if cards != 6 {
		t.Errorf("%d cards in the recall, want 6", cards)
	}
	_, err = h.getRound("bob", id, coup)
	wantReason(t, err, codes.PermissionDenied, reasonNotYourRound)
}

// TestRoundHistoryRetention: the sweep deletes rounds past the retention
// but keeps every player's last KeepRoundsPerPlayer, and rounds in play.
func TestRoundHistoryRetention(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(50000, "dave")
	cards := make([]string, 100)
	for i := range cards {
		cards[i] = "KD"
	}
	id := h.pbTable(nil, 0, cards...)
	h.join(id, "dave")
	n := KeepRoundsPerPlayer + 2
	for range n {
		h.mustPBBet(id, "dave", tablev1.BetSpot_BET_SPOT_PLAYER, 100)
		h.closeWindow(id)
		h.clock.Advance(3 * time.Second) // the result's pause
		h.expire()
	}
	all := h.mustListRounds("dave", &tablev1.ListRoundsRequest{PlayerId: "dave"})
	if len(all) != n {
		t.Fatalf("dave has %d rounds, want %d", len(all), n)
	}
	// Not yet expired: nothing goes.
	if d, _, err := h.table.expireRounds(time.Now(), DefaultRoundRetention, 100); err != nil || d != 0 {
		t.Fatalf("expired %d (%v) within the retention", d, err)
	}
	// Long after: all but his last ten, two per pass.
	later := time.Now().Add(2 * DefaultRoundRetention)
	d, more, err := h.table.expireRounds(later, DefaultRoundRetention, 1)
	if err != nil || d != 1 || !more {
		t.Fatalf("first pass: %d more %v err %v", d, more, err)
	}
	if d, _, err = h.table.expireRounds(later, DefaultRoundRetention, 100); err != nil || d != 1 {
		t.Fatalf("second pass: %d %v", d, err)
	}
	left := h.mustListRounds("dave", &tablev1.ListRoundsRequest{PlayerId: "dave"})
	if len(left) != KeepRoundsPerPlayer || left[0].GetCoupId() != all[0].GetCoupId() {
		t.Fatalf("after the sweep dave has %d rounds", len(left))
	}
	if _, err := h.getRound("dave", id, all[n-1].GetCoupId()); err == nil {
		t.Error("an expired round is still read")
	} else {
		wantReason(t, err, codes.NotFound, reasonRoundNotFound)
	}
	if got, err := h.getRound("dave", id, all[0].GetCoupId()); err != nil || len(got.GetEvents()) == 0 {
		t.Errorf("his last round: %v %v", got, err)
	}
}

// TestRoundHistoryHoleCards: while carol decides on the player's 5 the
// round is refused to its players, and staff see it as the table
// publishes it (no hole card); after her decision all see every card.
func TestRoundHistoryHoleCards(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 300)
	coup := h.mustBet(id, "carol", 500).GetCoup().GetCoupId()
	for _, p := range []string{"alice", "bob", "carol"} {
		_, err := h.getRound(p, id, coup)
		wantReason(t, err, codes.FailedPrecondition, reasonRoundInPlay)
	}
	faceUp := func(who string) (up, down int) {
		t.Helper()
		got, err := h.getRound(who, id, coup)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range got.GetEvents() {
			if cd := ev.GetCardDealt(); cd != nil {
				if cd.GetCard().GetCode() == "" {
					down++
				} else {
					up++
				}
			}
		}
		return up, down
	}
	if up, down := faceUp("auditor"); up != 0 || down != 4 {
		t.Errorf("in play the auditor sees %d cards up, %d down; want 0, 4", up, down)
	}
	if _, err := h.decide(id, "carol", true); err != nil {
		t.Fatal(err)
	}
	if up, down := faceUp("bob"); up != 5 || down != 0 {
		t.Errorf("after the coup bob sees %d cards up, %d down; want 5, 0", up, down)
	}
}

// TestRoundHistoryVoidedHoleCards: a coup voided at a decision never
// turned its hole cards, so its round keeps them face down, as the
// table's own view of a voided coup does, for everyone but auditors and,
// each his own, the players who held them: alice, the banker, reads the
// banker's two cards, carol, who holds the player's hand (the larger
// bet, CF-HAND-HOLDER), the player's two; bob (a punter who held no
// hand), the croupier and the operator read its card_dealt events
// without the face-down cards and their totals.
func TestRoundHistoryVoidedHoleCards(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 300)
	tb := h.mustBet(id, "carol", 500)
	if tb.GetState() != tablev1.TableState_TABLE_STATE_DECISION {
		t.Fatalf("state %v, want a decision", tb.GetState())
	}
	coup := tb.GetCoup().GetCoupId()
	if _, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, CoupId: coup, Reason: "misdeal"}); err != nil {
		t.Fatal(err)
	}
	// cards is what who reads of each hand: the codes he sees, and how
	// many cards he does not.
	type seen struct {
		up   []string
		down int
	}
	cards := func(who string) map[eventsv1.Hand]seen {
		t.Helper()
		got, err := h.getRound(who, id, coup)
		if err != nil {
			t.Fatalf("%s GetRound: %v", who, err)
		}
		out := map[eventsv1.Hand]seen{}
		for _, ev := range got.GetEvents() {
			cd := ev.GetCardDealt()
			if cd == nil {
				continue
			}
			s := out[cd.GetHand()]
			if code := cd.GetCard().GetCode(); code == "" {
				s.down++
				if cd.GetTotal() != 0 {
					t.Errorf("%s sees the total %d of a face-down hand", who, cd.GetTotal())
				}
			} else {
				s.up = append(s.up, code)
			}
			out[cd.GetHand()] = s
		}
		return out
	}
	player, banker := eventsv1.Hand_HAND_PLAYER, eventsv1.Hand_HAND_BANKER
	for _, c := range []struct {
		who            string
		player, banker seen
	}{
		{"alice", seen{down: 2}, seen{up: []string{"TH", "6S"}}},
		{"carol", seen{up: []string{"2C", "3D"}}, seen{down: 2}},
		{"bob", seen{down: 2}, seen{down: 2}},
		{"croupier", seen{down: 2}, seen{down: 2}},
		{"op", seen{down: 2}, seen{down: 2}},
		{"auditor", seen{up: []string{"2C", "3D"}}, seen{up: []string{"TH", "6S"}}},
	} {
		got := cards(c.who)
		if !reflect.DeepEqual(got[player], c.player) || !reflect.DeepEqual(got[banker], c.banker) {
			t.Errorf("%s reads the voided coup's player hand %+v and banker hand %+v; want %+v and %+v",
				c.who, got[player], got[banker], c.player, c.banker)
		}
	}
}

// TestRoundOfEveryStake: every round a hold names is recorded before the
// wallet is called and none of a closed table stays in play. dave, with
// no money, puts up a bank: the wallet refuses it (INSUFFICIENT_FUNDS)
// and its round, which no coup will take, is at once CANCELLED, naming
// him as the banker who staked nothing. alice's bank of 700 goes up,
// dave's bet against it is refused; the table closes before any card:
// that round, whose coup has no event, is CANCELLED too, with alice its
// banker (her bank her stake) and dave in it, staking nothing. GetRound
// answers both; dave reads his, and recalls both. GetRound answers the
// wallet's round id "<coup>.2" with the coup's round.
func TestRoundOfEveryStake(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice")
	id := h.shuffledTable("dave", "alice")
	_, err := h.tables.AcceptBank(h.as("dave"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "dave", Amount: 500})
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("dave's bank: %v, want FAILED_PRECONDITION", err)
	}
	rs := h.mustListRounds("croupier", &tablev1.ListRoundsRequest{TableId: id})
	if len(rs) != 1 || rs[0].GetState() != tablev1.RoundState_ROUND_STATE_CANCELLED || len(rs[0].GetPlayers()) != 1 ||
		rs[0].GetPlayers()[0].GetPlayerId() != "dave" || !rs[0].GetPlayers()[0].GetBanker() || rs[0].GetPlayers()[0].GetStake() != 0 {
		t.Fatalf("rounds after dave's refused bank: %v, want one CANCELLED naming dave", rs)
	}
	refusedBank := rs[0].GetCoupId()
	if _, err := h.tables.DeclineBank(h.as("dave"), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "dave"}); err != nil {
		t.Fatal(err)
	}
	coup := h.acceptBank(id, "alice", 700).GetCoup().GetCoupId()
	if _, err := h.bet(id, "dave", 300); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("dave's bet: %v, want FAILED_PRECONDITION", err)
	}
	rs = h.mustListRounds("croupier", &tablev1.ListRoundsRequest{TableId: id})
	if len(rs) != 2 || rs[0].GetCoupId() != coup || rs[0].GetState() != tablev1.RoundState_ROUND_STATE_IN_PLAY || rs[0].GetNumber() != 2 {
		t.Fatalf("rounds with alice's bank up: %v, want her coup %s in play, number 2, newest", rs, coup)
	}
	if _, err := h.tables.CloseTable(h.as("croupier"), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: id, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	rs = h.mustListRounds("croupier", &tablev1.ListRoundsRequest{TableId: id})
	if len(rs) != 2 {
		t.Fatalf("rounds after the close: %v", rs)
	}
	for _, r := range rs {
		if r.GetState() != tablev1.RoundState_ROUND_STATE_CANCELLED {
			t.Errorf("round %s of the closed table: %s, want CANCELLED", r.GetCoupId(), r.GetState())
		}
	}
	type named struct {
		banker bool
		stake  int64
	}
	want := map[string]named{"alice": {true, 700}, "dave": {false, 0}}
	for _, p := range rs[0].GetPlayers() {
		if w, ok := want[p.GetPlayerId()]; !ok || w != (named{p.GetBanker(), p.GetStake()}) {
			t.Errorf("alice's round names %v, want alice the banker with a stake of 700 and dave with none", p)
		}
		delete(want, p.GetPlayerId())
	}
	if len(want) != 0 {
		t.Errorf("alice's round does not name %v", want)
	}
	for _, c := range []string{refusedBank, coup} {
		if _, err := h.getRound("dave", id, c); err != nil {
			t.Errorf("dave reads round %s: %v", c, err)
		}
	}
	if n := len(h.mustListRounds("dave", &tablev1.ListRoundsRequest{PlayerId: "dave"})); n != 2 {
		t.Errorf("dave recalls %d rounds, want 2", n)
	}
	// The wallet's round "<coup>.<n>" (a stake after the player's round
	// of the coup ended there) is the coup's round; no other suffix is.
	if g, err := h.getRound("croupier", id, coup+".2"); err != nil || g.GetRound().GetCoupId() != coup {
		t.Errorf("round %s.2: %v, %v; want coup %s's round", coup, g.GetRound(), err, coup)
	}
	for _, c := range []string{coup + ".1", coup + ".02", coup + ".x", coup + ".", coup + ".2.2"} {
		_, err := h.getRound("croupier", id, c)
		wantReason(t, err, codes.NotFound, reasonRoundNotFound)
	}
}
