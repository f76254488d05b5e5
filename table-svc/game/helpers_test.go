package game_test

import (
	"testing"
	"time"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// The small helpers every core uses: times, request ids, cards, the
// bookkeeping effects' refusals.
func TestHelpers(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if got := (game.Input{Now: t0}).After(1500); !got.Equal(t0.Add(1500 * time.Millisecond)) {
		t.Errorf("After(1500) = %v", got)
	}
	// Restarted: a deadline sooner than its full length from now moves to
	// it; a later one, and a zero one, stay.
	full := t0.Add(2 * time.Second)
	if got, moved := game.Restarted(t0.Add(time.Second), t0, 2000); !moved || !got.Equal(full) {
		t.Errorf("Restarted(sooner) = %v, %v; want %v, true", got, moved, full)
	}
	if got, moved := game.Restarted(t0.Add(time.Hour), t0, 2000); moved || !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("Restarted(later) = %v, %v", got, moved)
	}
	if got, moved := game.Restarted(time.Time{}, t0, 2000); moved || !got.IsZero() {
		t.Errorf("Restarted(zero) = %v, %v", got, moved)
	}
	deal := game.Following("c1", 4, "player", "banker")
	if len(deal) != 2 || deal[0].RequestID != "c1/card/4" || deal[1].RequestID != "c1/card/5" || deal[1].Hand != "banker" {
		t.Errorf("Following = %+v", deal)
	}
	cards := game.Cards([]string{"9H", "xx", "TD"})
	if len(cards) != 2 || cards[0].GetRank() != shoev1.Rank_RANK_NINE || cards[0].GetSuit() != shoev1.Suit_SUIT_HEARTS || cards[0].GetCode() != "9H" {
		t.Errorf("Cards = %v", cards)
	}
}

func TestBookkeepingRefusesWhatIsNotDue(t *testing.T) {
	var b game.Bookkeeping
	for _, cmd := range []game.Command{game.HoldsVoided{}, game.ShoeClosed{}} {
		if ok, err := b.Book(cmd); !ok || err == nil {
			t.Errorf("%T not due: %v, %v; want refused", cmd, ok, err)
		}
	}
	b = game.Bookkeeping{PendingVoids: []string{"h1"}, ShoeToClose: true}
	if ok, err := b.Book(game.HoldsVoided{}); !ok || err != nil || len(b.PendingVoids) != 0 {
		t.Errorf("HoldsVoided due: %v, %v, %+v", ok, err, b)
	}
	if ok, err := b.Book(game.ShoeClosed{}); !ok || err != nil {
		t.Errorf("ShoeClosed due: %v, %v", ok, err)
	}
}
