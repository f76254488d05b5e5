package tablesvc

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// games is the registry of the games the tables play: each game's
// adapter (adapter_<game>.go), by its variant. It is the one shell file
// that names every game; a new game is its core (a package under
// table-svc/game), its adapter and a line here.
var games = map[tablev1.Variant]gameCore{
	tablev1.Variant_VARIANT_CHEMIN_DE_FER:   cfCore{},
	tablev1.Variant_VARIANT_PUNTO_BANCO:     pbCore{},
	tablev1.Variant_VARIANT_BACCARAT_BANQUE: banqueCore{},
	tablev1.Variant_VARIANT_OLD_BACCARAT:    oldCore{},
}

// canonical is the game a variant names: chemin de fer, the first game,
// where none is named (a record or request from before the others).
func canonical(v tablev1.Variant) tablev1.Variant {
	if v == tablev1.Variant_VARIANT_UNSPECIFIED {
		return tablev1.Variant_VARIANT_CHEMIN_DE_FER
	}
	return v
}

// gameOf is the adapter of variant v (unspecified: chemin de fer); nil
// for a variant no game plays.
func gameOf(v tablev1.Variant) gameCore { return games[canonical(v)] }

// core is the adapter of the table's game.
func (t *table) core() gameCore { return gameOf(tablev1.Variant(t.Variant)) }

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
	key, _ := json.Marshal(t.core().stateKey())
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
	g := t.core()
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
