package tablesvc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/odds"
	"github.com/chemmy/chemmy/table-svc/game"
)

// The seam between the shell and the games: what the shell asks of each
// game's adapter (adapter), the adapters by variant (filled by the
// registry, games.go), and the record's game state in JSON.

// games are the adapters of the games the tables play, by variant (the
// registry, games.go, fills it).
var games = map[tablev1.Variant]adapter{}

// gameOf is the adapter of variant v (unspecified: the unnamed game);
// nil for a variant no game plays.
func gameOf(v tablev1.Variant) adapter { return games[canonical(v)] }

// core is the adapter of the table's game.
func (t *table) adapter() adapter { return gameOf(tablev1.Variant(t.Variant)) }

// rulesHolder is a message carrying one of the games' house rules: a
// CreateTableRequest (as asked) or a Table (in force).
type rulesHolder interface {
	GetHouseRules() *tablev1.HouseRules
	GetPuntoBancoRules() *tablev1.PuntoBancoRules
	GetOldBaccaratRules() *tablev1.OldBaccaratRules
	GetBanqueRules() *tablev1.BanqueRules
}

// given reports whether m is a message that is set (not a typed nil).
func given(m proto.Message) bool { return m != nil && m.ProtoReflect().IsValid() }

// MarshalJSON writes the record: the shell's fields, and the game's
// state under its adapter's key.
func (t *table) MarshalJSON() ([]byte, error) {
	type plain table
	b, err := json.Marshal((*plain)(t))
	if err != nil || t.game == nil {
		return b, err
	}
	st, err := json.Marshal(t.game)
	if err != nil {
		return nil, err
	}
	key, _ := json.Marshal(t.adapter().stateKey())
	out := make([]byte, 0, len(b)+len(key)+len(st)+2)
	out = append(out, b[:len(b)-1]...) // without its closing brace
	out = append(out, ',')
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, st...)
	return append(out, '}'), nil
}

// UnmarshalJSON reads a record: the game's state is read by the adapter
// of the record's variant, which also reads the records stored before
// the state had a key of its own (chemin de fer's, at the record's top
// level).
func (t *table) UnmarshalJSON(b []byte) error {
	type plain table
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	g := t.adapter()
	if g == nil {
		return fmt.Errorf("table %s: variant %d is no game of this service", t.ID, t.Variant)
	}
	st, err := g.decode(b)
	if err != nil {
		return fmt.Errorf("table %s: %s state: %w", t.ID, g.name(), err)
	}
	t.game = st
	return nil
}

// UnmarshalCBOR reads a record in the binary encoding (codec.go): the
// shell's fields, then the game's state, read by the adapter of the
// record's variant.
func (t *table) UnmarshalCBOR(b []byte) error {
	in := binaryRecordIn{Shell: (*plainTable)(t)}
	if err := recordDec.Unmarshal(b, &in); err != nil {
		return err
	}
	g := t.adapter()
	if g == nil {
		return fmt.Errorf("table %s: variant %d is no game of this service", t.ID, t.Variant)
	}
	st, err := g.decodeBinary(in.Game)
	if err != nil {
		return fmt.Errorf("table %s: %s state: %w", t.ID, g.name(), err)
	}
	t.game = st
	return nil
}

// adapter is a game's adapter: its core bound to the table record that
// holds its state, and what the shell asks of the game besides.
type adapter interface {
	// The game's core, through the record that holds its state.
	adapterPlay
	// What each viewer sees of it.
	adapterViews
	// Its tables: house rules, the shoe, the record's key.
	adapterTables
	// Its money and its players: the bank, the idle rule, the odds.
	adapterPlayers
}

// adapterPlay is the game's core through the record (package game's
// Apply, Pending, Deadline and Restart), and the requests and effects the
// core has that the shell does not.
type adapterPlay interface {
	name() string
	// apply applies in to t's game state. On success the state in t is
	// replaced and its events returned; when the command waits for a hold
	// the hold is returned and t is unchanged.
	apply(t *table, in game.Input) ([]game.Event, *game.Hold, error)
	// pending is the effect due (game.Pending), nil when none.
	pending(t *table) game.Effect
	// deadline is when the core wants a Tick; zero when never.
	deadline(t *table) time.Time
	// coupID is the coup in play, "" when none.
	coupID(t *table) string
	// command turns a request into the core's command; WRONG_VARIANT for
	// a call of another game.
	command(t *table, method string, req proto.Message, caller auth.Caller) (game.Command, error)
	// interrupt is the command voiding a coup that cannot go on before
	// its result; nil when there is none to void.
	interrupt(t *table, reason string) game.Command
	// sync copies what the shared machinery reads (state, shoe, counters)
	// from the core's state to the record.
	sync(t *table)
	// carryOut makes the calls of the core's own effects (its settlement,
	// fees) and returns the command reporting the result; ok is false for
	// an effect it does not know.
	carryOut(ctx context.Context, s *Service, t *table, eff game.Effect) (cmd game.Command, ok bool, err error)
	// restart gives the time limit in progress its full length again from
	// now, after a restart of the service (scanUnfinished): nobody is
	// timed out for the time the service was down. It reports whether the
	// deadline moved.
	restart(t *table, now time.Time) bool
}

// adapterViews is what each viewer may see (the game's face-down rule is
// its core's: Sees, Hidden, Shown, HolderOf, FaceDown).
type adapterViews interface {
	// view is the table as viewer v may see it.
	view(t *table, v viewer) *tablev1.Table
	// publicEvent is ev as published (face-down cards hidden); ev is not
	// changed. personalEvent is the published ev as v may see it at t
	// (his own face-down cards shown).
	publicEvent(ev *eventsv1.TableEvent) *eventsv1.TableEvent
	personalEvent(t *table, v viewer, ev *eventsv1.TableEvent) *eventsv1.TableEvent
	// hidden counts by rank the cards of coup coupID (in play or the last)
	// that v does not see: GetOdds counts them as still in the shoe.
	hidden(t *table, coupID string, v viewer) [13]int
	// holderOf is the player who holds the hand of card_dealt ev (its
	// coup in play or the last at t), "" when none or unknown: the round
	// history keeps it so that a voided coup shows each holder his own
	// cards (GetRound).
	holderOf(t *table, ev *eventsv1.TableEvent) string
}

// adapterTables is the making of a table of the game and its record.
type adapterTables interface {
	// rules is the game's house rules that m carries (as asked, or in
	// force), nil when none.
	rules(m rulesHolder) proto.Message
	// open resolves the game's house rules of req (INVALID_HOUSE_RULE,
	// WRONG_VARIANT), sets in hr the shell's rules they fix (the shoe's,
	// certification_real_money; hr.InactivityMS is set), and returns what
	// makes t, a new table's record, a table of the game.
	open(req *tablev1.CreateTableRequest, hr *shellRules) (create func(t *table) error, err error)
	// shoeVariant is the game's variant at shoe-svc (it fixes the
	// shoe's decks and cut card bounds there).
	shoeVariant() shoev1.Variant
	// renewsSpentShoe reports whether a coup that has no card yet starts
	// on a fresh shoe when the shoe is spent (chemin de fer: after a
	// voided cut-card coup).
	renewsSpentShoe() bool
	// stateKey is the key of the game's state in the JSON record;
	// decode reads the state (a pointer to the game's State) from a
	// stored JSON record, decodeBinary from its item of a record in the
	// binary encoding (codec.go).
	stateKey() string
	decode(record []byte) (any, error)
	decodeBinary(state []byte) (any, error)
}

// adapterPlayers is the game's money and players.
type adapterPlayers interface {
	idler
	// bankHold is the banker's bank: its hold at the wallet and the
	// amount it holds, minor units ("" when no player banks).
	bankHold(t *table) (holdID string, bank int64)
	// houseBanks reports whether the house banks the game (punto banco):
	// a round's bank net is then the house's.
	houseBanks() bool
	// lobby is what ListTables filters by, read from the table's view:
	// its seats and its smallest stake in minor units.
	lobby(tb *tablev1.Table) (seats int32, minimumBet int64)
	// odds puts in out the exact odds of the next coup from shoe under
	// the house rules of t (nil: the game's defaults).
	odds(shoe odds.Shoe, t *table, out *tablev1.GetOddsResponse) error
	// advice is GetAdvice at t: the EV of each choice at the pending
	// decision; WRONG_VARIANT at a game without one (noAdvice).
	advice(ctx context.Context, s *Service, t *table, req *tablev1.GetAdviceRequest) (*tablev1.GetAdviceResponse, error)
}

// preparer is an adapter whose commands need calls or the shell's own
// records before they apply (chemin de fer: the bank raise's resize under
// an escrow intent, and the raises whose answer was lost). prepare
// returns the command to apply.
type preparer interface {
	prepare(ctx context.Context, s *Service, c *change, cmd game.Command) (game.Command, error)
}

// turnClock is an adapter whose core keeps its turns' clock itself
// (chemin de fer): coreDeadline copies it to the record's WaitKey and
// Deadline.
type turnClock interface {
	turnClock(t *table) (waitKey string, deadline time.Time)
}

// storedFirst is an effect carried out only from a stored state (its
// content was made by the clock; see chemindefer.ChargeFees).
type storedFirst interface{ StoredFirst() bool }

// bankKeeper is a game whose banker keeps a bank from coup to coup: once
// a coup is settled it may make a banker whose limits no longer allow his
// bank at stake give it up (wallet CheckStake; saga.go react).
type bankKeeper interface {
	keepBank(ctx context.Context, s *Service, c *change) error
}

// idler is a game's part of the inactivity limit (part of every
// adapter).
type idler interface {
	// seated are the table's seated players, in seat order.
	seated(t *table) []string
	// standable are the seated players who may be stood up now: none
	// while a coup is dealt, decided or settled; never a player with
	// money in the coup in play, nor a banker with a bet against him.
	standable(t *table) []string
	// giveUpBank is the command with which p gives up his bank before he
	// leaves; nil when he holds none or when Leave gives it up itself.
	giveUpBank(t *table, p string) game.Command
}

func seatedPlayers(t *table) []string { return t.adapter().seated(t) }

func standable(t *table) []string { return t.adapter().standable(t) }

func giveUpBank(t *table, p string) game.Command { return t.adapter().giveUpBank(t, p) }
