//go:build failpoints

package tablesvc

import "os"

// failpointName is the step at which the process exits, from the
// environment variable CHEMMY_TABLE_FAILPOINT. Only in builds with -tags
// failpoints, for crash tests. Steps: "bet-held" (wallet-svc holds a bet
// the table has not stored yet); a method name such as "PlaceBet" or
// "DecideDraw" (the action is stored, the coup not yet advanced);
// "card-N" (shoe-svc has dealt the coup's Nth card, the table has not
// stored it); "after-settle" (wallet-svc has settled the coup, the table
// has not stored it).
var failpointName = os.Getenv("CHEMMY_TABLE_FAILPOINT")

// failpoint exits the process at once, as kill -9 would: no deferred
// call runs and nothing more is written.
func failpoint(name string) {
	if name == failpointName {
		os.Exit(86)
	}
}
