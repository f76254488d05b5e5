package tablesvc

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestRecentCoupsForTheGallery: a chemin de fer table's history is given
// to whoever opens it, as the public saw each coup at its end, and holds
// no secret. alice banks 1000; bob covers it: player 2C 3D (5), banker
// 9H TC (9, a natural): the bank wins. In the next coup the punters bet
// 300 and 500; the player's hand (2D 3C, 5) waits for its holder's
// decision against the banker's TS 6H, and the croupier voids the coup.
// dave, who never sat (a spectator), and eve, who joins the gallery
// afterwards, get both coups newest first: the voided one with its four
// cards face down and no totals, the settled one with every card turned.
// alice and the punters, who each saw two of the voided coup's cards,
// staff and the auditor get exactly the same; nothing anyone reads
// carries a card of the voided coup, nor 4S, the next card of the shoe,
// never dealt. Without include_recent_coups GetTable gives none, and the
// history survives a restart.
func TestRecentCoupsForTheGallery(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "9H", "3D", "TC", "2D", "TS", "3C", "6H", "4S"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	first := h.mustBet(id, "bob", 1000).GetLastCoup()
	if !first.GetSettled() || first.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS {
		t.Fatalf("the first coup: %v", first)
	}
	tb := h.get(id)
	var bets []*tablev1.Bet
	for _, amount := range []int64{300, 500} {
		p := tb.GetCoup().GetTurnPlayerId()
		bets = append(bets, &tablev1.Bet{PlayerId: p, Amount: amount})
		tb = h.mustBet(id, p, amount)
	}
	if tb.GetState() != tablev1.TableState_TABLE_STATE_DECISION {
		t.Fatalf("state %v, want a decision", tb.GetState())
	}
	voided := tb.GetCoup()
	if _, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, CoupId: voided.GetCoupId(), Reason: "misdeal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tables.JoinGallery(h.as("eve"), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: id, PlayerId: "eve"}); err != nil {
		t.Fatal(err)
	}

	// What the public saw, written out by hand: the bank after the
	// first coup is 1000 + 1000 - 5% commission of 50.
	down := func() []*shoev1.Card { return []*shoev1.Card{{FaceDown: true}, {FaceDown: true}} }
	card := func(code string, r shoev1.Rank, s shoev1.Suit) *shoev1.Card {
		return &shoev1.Card{Code: code, Rank: r, Suit: s}
	}
	want := []*tablev1.Coup{{
		CoupId: voided.GetCoupId(), Number: 2, BankerPlayerId: "alice", Bank: 1950, Stake: 1950, Bets: bets,
		HandHolderPlayerId: bets[1].GetPlayerId(), PlayerCards: down(), BankerCards: down(), Voided: true, VoidReason: "misdeal",
	}, {
		CoupId: first.GetCoupId(), Number: 1, BankerPlayerId: "alice", Bank: 1000, Stake: 1000, Bets: []*tablev1.Bet{{PlayerId: "bob", Amount: 1000}},
		HandHolderPlayerId: "bob", PlayerCards: []*shoev1.Card{card("2C", shoev1.Rank_RANK_TWO, shoev1.Suit_SUIT_CLUBS), card("3D", shoev1.Rank_RANK_THREE, shoev1.Suit_SUIT_DIAMONDS)},
		BankerCards: []*shoev1.Card{card("9H", shoev1.Rank_RANK_NINE, shoev1.Suit_SUIT_HEARTS), card("TC", shoev1.Rank_RANK_TEN, shoev1.Suit_SUIT_CLUBS)},
		PlayerTotal: 5, BankerTotal: 9, Outcome: tablev1.Outcome_OUTCOME_BANK_WINS, Natural: true,
		Commission: 50, BankerNet: 950, Settled: true, SettleTime: first.GetSettleTime(),
	}}
	recent := func(who string) []*tablev1.Coup {
		t.Helper()
		resp, err := h.tables.GetTable(h.as(who), &tablev1.GetTableRequest{TableId: id, IncludeRecentCoups: true})
		if err != nil {
			t.Fatalf("%s GetTable: %v", who, err)
		}
		return resp.GetTable().GetRecentCoups()
	}
	check := func() {
		t.Helper()
		for _, who := range []string{"dave", "eve", "alice", "bob", "carol", "croupier", "op", "auditor"} {
			got := recent(who)
			if len(got) != len(want) {
				t.Fatalf("%s is given %d recent coups, want %d: %v", who, len(got), len(want), got)
			}
			for i, cp := range got {
				if !proto.Equal(cp, want[i]) {
					t.Errorf("%s's recent coup %d:\n got %v\nwant %v", who, i, cp, want[i])
				}
				text := protojson.Format(cp)
				for _, secret := range []string{"2D", "TS", "3C", "6H", "4S"} {
					if strings.Contains(text, `"`+secret+`"`) {
						t.Errorf("%s's recent coup %d shows %s: %s", who, i, secret, text)
					}
				}
			}
		}
		if got := h.getAs(id, "dave").GetRecentCoups(); len(got) != 0 {
			t.Errorf("GetTable without include_recent_coups gives %d recent coups", len(got))
		}
	}
	check()
	h.restartTable()
	check()
	// The lobby: coup 1 won by the bank, then coup 2 voided, oldest first.
	wantLobby := []*tablev1.RecentResult{{Number: 1, Winner: tablev1.RoadWinner_ROAD_WINNER_BANK}, {Number: 2, Voided: true}}
	if got := lobbyResults(t, h, "dave", id); !slices.EqualFunc(got, wantLobby, func(a, b *tablev1.RecentResult) bool { return proto.Equal(a, b) }) {
		t.Errorf("ListTables gives the lobby results %v, want %v", got, wantLobby)
	}
}

// lobbyResults is table id's Table.recent_results in who's ListTables.
func lobbyResults(t *testing.T, h *harness, who, id string) []*tablev1.RecentResult {
	t.Helper()
	resp, err := h.tables.ListTables(h.as(who), &tablev1.ListTablesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range resp.GetTables() {
		if tb.GetTableId() == id {
			return tb.GetRecentResults()
		}
	}
	t.Fatalf("ListTables does not list %s", id)
	return nil
}

// TestRecentCoupsKeepsTheLast: a table keeps its last RecentCoups (20)
// finished coups: after 21 coups (bob bets 100 against alice's bank, the
// banker's natural 9 beating his 5 each time) GetTable gives coups 21
// down to 2, and the first is gone from the store.
func TestRecentCoupsKeepsTheLast(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	var cards []string
	for range 21 {
		cards = append(cards, "2C", "9H", "3D", "TC")
	}
	for range 30 {
		cards = append(cards, "KD")
	}
	id := h.tableWith(nil, 0, cards, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	for i := range 21 {
		if last := h.mustBet(id, "bob", 100).GetLastCoup(); last.GetNumber() != int64(i+1) || !last.GetSettled() {
			t.Fatalf("coup %d: %v", i+1, last)
		}
	}
	resp, err := h.tables.GetTable(h.as("bob"), &tablev1.GetTableRequest{TableId: id, IncludeRecentCoups: true})
	if err != nil {
		t.Fatal(err)
	}
	var numbers []int64
	for _, cp := range resp.GetTable().GetRecentCoups() {
		numbers = append(numbers, cp.GetNumber())
	}
	var want []int64
	for n := int64(21); n >= 2; n-- {
		want = append(want, n)
	}
	if !slices.Equal(numbers, want) {
		t.Errorf("recent coups %v, want %v", numbers, want)
	}
	stored := 0
	if err := h.table.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRecentCoups).ForEach(func(k, _ []byte) error {
			if strings.HasPrefix(string(k), id+"\x00") {
				stored++
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if stored != 20 {
		t.Errorf("the store keeps %d coups of the table, want 20", stored)
	}
	// The lobby gives the last 6, oldest first: coups 16 to 21, all won
	// by the bank.
	var lobby []string
	for _, r := range lobbyResults(t, h, "bob", id) {
		lobby = append(lobby, fmt.Sprintf("%d:%s:%t", r.GetNumber(), r.GetWinner(), r.GetVoided()))
	}
	var wantLobby []string
	for n := 16; n <= 21; n++ {
		wantLobby = append(wantLobby, fmt.Sprintf("%d:ROAD_WINNER_BANK:false", n))
	}
	if !slices.Equal(lobby, wantLobby) {
		t.Errorf("lobby results %v, want %v", lobby, wantLobby)
	}
}

// TestCoupWinner: a lobby result's winner from the bank's side. A coup
// of two hands: the bank won both (BANK), lost both (PLAYER), won one and
// lost the other, or won one and stood off the other (TIE); a hand not
// decided counts for nothing; a coup's own outcome wins.
func TestCoupWinner(t *testing.T) {
	const (
		win, lose, off, none = tablev1.Outcome_OUTCOME_BANK_WINS, tablev1.Outcome_OUTCOME_BANK_LOSES, tablev1.Outcome_OUTCOME_STAND_OFF, tablev1.Outcome_OUTCOME_UNSPECIFIED
	)
	hands := func(os ...tablev1.Outcome) []*tablev1.CoupHand {
		var out []*tablev1.CoupHand
		for _, o := range os {
			out = append(out, &tablev1.CoupHand{Outcome: o})
		}
		return out
	}
	for _, c := range []struct {
		cp   *tablev1.Coup
		want tablev1.RoadWinner
	}{
		{&tablev1.Coup{Outcome: win}, tablev1.RoadWinner_ROAD_WINNER_BANK},
		{&tablev1.Coup{Outcome: lose}, tablev1.RoadWinner_ROAD_WINNER_PLAYER},
		{&tablev1.Coup{Outcome: off}, tablev1.RoadWinner_ROAD_WINNER_TIE},
		{&tablev1.Coup{Hands: hands(win, win)}, tablev1.RoadWinner_ROAD_WINNER_BANK},
		{&tablev1.Coup{Hands: hands(lose, lose, lose)}, tablev1.RoadWinner_ROAD_WINNER_PLAYER},
		{&tablev1.Coup{Hands: hands(win, lose)}, tablev1.RoadWinner_ROAD_WINNER_TIE},
		{&tablev1.Coup{Hands: hands(win, off)}, tablev1.RoadWinner_ROAD_WINNER_TIE},
		{&tablev1.Coup{Hands: hands(none, lose)}, tablev1.RoadWinner_ROAD_WINNER_PLAYER},
		{&tablev1.Coup{}, tablev1.RoadWinner_ROAD_WINNER_UNSPECIFIED},
	} {
		if got := coupWinner(c.cp); got != c.want {
			t.Errorf("coupWinner(%v) = %v, want %v", c.cp, got, c.want)
		}
	}
}
