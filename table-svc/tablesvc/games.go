package tablesvc

import (
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// The registry of the games the tables play: each game's adapter
// (adapter_<game>.go) by its variant. It is the one shell file that names
// every game; a new game is its core (a package under table-svc/game),
// its adapter and a line here.
func init() {
	games[tablev1.Variant_VARIANT_CHEMIN_DE_FER] = cfGame
	games[tablev1.Variant_VARIANT_PUNTO_BANCO] = pbGame
	games[tablev1.Variant_VARIANT_BACCARAT_BANQUE] = banqueGame
	games[tablev1.Variant_VARIANT_OLD_BACCARAT] = oldGame
	// Chemin de fer is the game of a table, a round or a request that
	// names none: the first game, from before the others.
	unnamed = tablev1.Variant_VARIANT_CHEMIN_DE_FER
}
