//go:build failpoints

package tablesvc

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// failpointName is the step at which the process exits, from the
// environment variable CHEMMY_TABLE_FAILPOINT. Only in builds with -tags
// failpoints, for crash tests.
//
// Steps of a chemin de fer coup (saga.go, server.go): a method name
// such as "PlaceBet" or "DecideDraw" (the action is stored, the coup not
// yet advanced; at every table, core tables too); "card-N" (shoe-svc has
// dealt the coup's Nth card, the table has not stored it);
// "after-settle" (wallet-svc has settled the coup, the table has not
// stored it).
//
// Steps of the tables on a game core (saga.go): "core-hold" (wallet-svc
// holds what a request asked for, a bet or a bank, and the table has not
// stored the request), "core-hold-<command>" the same for one command
// ("core-hold-place_bet": a bet); "core-<effect>" (the effect is carried out, its
// result not stored): "core-deal_card-N" (shoe-svc has dealt the coup's
// Nth card), "core-settle", "core-charge_fee", "core-move_to_bottom",
// "core-void_holds", "core-new_shoe", "core-close_shoe".
//
// A step may end in "#N": the process exits the Nth time it reaches the
// step ("PlaceBet#2": once the second bet is stored); without, the first.
var failpointName, failpointAt = parseFailpoint(os.Getenv("CHEMMY_TABLE_FAILPOINT"))

// failpointHits counts the times the process reached failpointName.
var failpointHits atomic.Int64

func parseFailpoint(v string) (string, int64) {
	if name, n, ok := strings.Cut(v, "#"); ok {
		if at, err := strconv.ParseInt(n, 10, 64); err == nil && at > 0 {
			return name, at
		}
		panic("CHEMMY_TABLE_FAILPOINT: bad hit count in " + strconv.Quote(v))
	}
	return v, 1
}

// failpoint exits the process at once, as kill -9 would: no deferred
// call runs and nothing more is written.
func failpoint(name string) {
	if name == failpointName && failpointHits.Add(1) == failpointAt {
		os.Exit(86)
	}
}
