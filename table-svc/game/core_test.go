package game_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
	"github.com/chemmy/chemmy/table-svc/game/banque"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
	"github.com/chemmy/chemmy/table-svc/game/oldbaccarat"
	"github.com/chemmy/chemmy/table-svc/game/puntobanco"
)

// bogus is a command no core has.
type bogus struct{}

func (bogus) CommandName() string { return "bogus" }

// TestCores drives each core through its Game value, as a game.Core: on a
// new table no effect is due, no Tick either, a restart moves nothing,
// and no card is seen, hidden, shown or held; a command the core does not have is refused INVALID_ARGUMENT
// with the zero Outcome; a join seats the player (a new state, events, no
// hold).
func TestCores(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cf := chemindefer.New(chemindefer.Rules{Decks: 6, CutCardFromEnd: 8, Burn: 3, MinimumBank: 100, MaxSeats: 4,
		CommissionBP: 500, Rounding: 1, BetTimeMS: 30000, DecisionTimeMS: 30000, OfferTimeMS: 30000})
	pb, err := puntobanco.New(puntobanco.Rules{Decks: 8, CutCardFromEnd: 14, Burn: 3, MaxSeats: 7, MinBet: 100, CommissionBP: 500,
		TiePays: 8, BankNaturalPays: 9, PairPays: 11, BettingWindowMS: 15000, ResultPauseMS: 3000}, "shoe-1")
	if err != nil {
		t.Fatal(err)
	}
	bq, err := banque.New(banque.DefaultRules(), "shoe-1")
	if err != nil {
		t.Fatal(err)
	}
	old, err := oldbaccarat.New(oldbaccarat.DefaultRules(), "shoe-1")
	if err != nil {
		t.Fatal(err)
	}
	checkCore(t, "chemin de fer", chemindefer.Game, cf, chemindefer.Join{PlayerID: "p1"}, now)
	checkCore(t, "punto banco", puntobanco.Game, pb, puntobanco.Join{PlayerID: "p1"}, now)
	checkCore(t, "baccarat banque", banque.Game, bq, banque.Join{PlayerID: "p1", Side: banque.SideRight}, now)
	checkCore(t, "old baccarat", oldbaccarat.Game, old, oldbaccarat.Join{PlayerID: "p1"}, now)
}

func checkCore[S any, O game.Outcomes[S]](t *testing.T, name string, c game.Core[S, O], s S, join game.Command, now time.Time) {
	t.Helper()
	if e := c.Pending(s); e != nil {
		t.Errorf("%s: a new table's Pending is %v, want none", name, e)
	}
	if d := c.Deadline(s); !d.IsZero() {
		t.Errorf("%s: a new table's Deadline is %v, want none", name, d)
	}
	if _, moved := c.Restart(s, now); moved {
		t.Errorf("%s: Restart of a new table moved its deadline", name)
	}
	// A new table has no coup: nothing to see, hide, show or hold.
	v := game.Viewer{Role: game.Auditor}
	cd := &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_BANKER, Position: 1, HolderPlayerId: ""}
	if c.Sees(s, "c1", v, game.Hand{Name: eventsv1.Hand_HAND_BANKER}, 0) || c.Hidden(s, "c1", v) != [13]int{} || c.HolderOf(s, "c1", cd) != "" {
		t.Errorf("%s: a new table sees, hides or holds a card of a coup it has not", name)
	}
	if _, _, ok := c.Shown(s, "c1", v, cd); ok {
		t.Errorf("%s: a new table shows a card of a coup it has not", name)
	}

	out, err := c.Apply(s, game.Input{Now: now, NewID: "id-1", Cmd: bogus{}})
	var ge *game.Error
	if !errors.As(err, &ge) || ge.Code != game.InvalidArgument || ge.Reason != "INVALID_ARGUMENT" {
		t.Errorf("%s: a command it does not have: %v, want INVALID_ARGUMENT", name, err)
	}
	if !reflect.DeepEqual(out.Base(), game.Outcome[S]{}) {
		t.Errorf("%s: a refused command's Outcome is %+v, want the zero Outcome", name, out.Base())
	}

	out, err = c.Apply(s, game.Input{Now: now, NewID: "id-1", Cmd: join})
	o := out.Base()
	switch {
	case err != nil:
		t.Errorf("%s: %v refused: %v", name, join, err)
	case o.Hold != nil || len(o.Events) == 0 || reflect.DeepEqual(o.State, s):
		t.Errorf("%s: %v: hold %v, %d events, state changed %v; want no hold, events, a new state", name, join, o.Hold,
			len(o.Events), !reflect.DeepEqual(o.State, s))
	}
}
