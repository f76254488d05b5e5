package tablesvc

import (
	"encoding/json"
	"fmt"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// coreAdapter is what every game's adapter does alike through its core
// (a package's Game, game.Core) and the record's state under its key:
// each adapter embeds one and defines what its game does otherwise
// (chemin de fer's bank raise and legacy records, punto banco's
// published events). S is the core's state, O the outcome of its Apply.
type coreAdapter[S any, O game.Outcomes[S]] struct {
	core game.Core[S, O]
	// key is the state's key in the JSON record (stateKey).
	key string
}

// of is t's game state; nil at a table of another game.
func (c coreAdapter[S, O]) of(t *table) *S { st, _ := t.game.(*S); return st }

func (c coreAdapter[S, O]) stateKey() string { return c.key }

// decode reads the state under its key.
func (c coreAdapter[S, O]) decode(b []byte) (any, error) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	raw, ok := r[c.key]
	if !ok || string(raw) == "null" {
		return nil, fmt.Errorf("no %q in the record", c.key)
	}
	st := new(S)
	return st, json.Unmarshal(raw, st)
}

// decodeBinary reads the state from its item of a record in the binary
// encoding (codec.go).
func (c coreAdapter[S, O]) decodeBinary(b []byte) (any, error) {
	if len(b) == 0 || b[0] == 0xf6 { // CBOR null
		return nil, fmt.Errorf("no %q in the record", c.key)
	}
	st := new(S)
	return st, recordDec.Unmarshal(b, st)
}

// apply applies in to the state: on success the state in t is replaced
// and its events returned; a command waiting for a hold returns the hold
// and leaves t unchanged.
func (c coreAdapter[S, O]) apply(t *table, in game.Input) ([]game.Event, *game.Hold, error) {
	out, err := c.core.Apply(*c.of(t), in)
	if err != nil {
		return nil, nil, err
	}
	base := out.Base()
	if base.Hold != nil {
		return nil, base.Hold, nil
	}
	*c.of(t) = base.State
	return base.Events, nil, nil
}

func (c coreAdapter[S, O]) pending(t *table) game.Effect { return c.core.Pending(*c.of(t)) }

func (c coreAdapter[S, O]) deadline(t *table) time.Time { return c.core.Deadline(*c.of(t)) }

func (c coreAdapter[S, O]) restart(t *table, now time.Time) bool {
	st, moved := c.core.Restart(*c.of(t), now)
	*c.of(t) = st
	return moved
}

// hidden counts by rank the cards of coup coupID that v does not see (the
// core's Hidden).
func (c coreAdapter[S, O]) hidden(t *table, coupID string, v viewer) [13]int {
	return c.core.Hidden(*c.of(t), coupID, v.look())
}

// holderOf is the holder of the hand of card_dealt ev (the core's
// HolderOf).
func (c coreAdapter[S, O]) holderOf(t *table, ev *eventsv1.TableEvent) string {
	return c.core.HolderOf(*c.of(t), ev.GetCoupId(), ev.GetCardDealt())
}

// publicEvent is ev as published: a card the core deals face down
// (FaceDown) without its card, and no running totals or draw reasons
// (redactEvent).
func (c coreAdapter[S, O]) publicEvent(ev *eventsv1.TableEvent) *eventsv1.TableEvent {
	return redactEvent(ev, c.core.FaceDown)
}

// personalEvent gives a card_dealt of a face-down card that v sees (the
// core's Shown) its card and total back.
func (c coreAdapter[S, O]) personalEvent(t *table, v viewer, ev *eventsv1.TableEvent) *eventsv1.TableEvent {
	return game.Personal(c.core, *c.of(t), v.look(), ev)
}
