//go:build failpoints

package tablesvc

import "os"

// failpointName is the step at which the process exits, from the
// environment variable CHEMMY_TABLE_FAILPOINT ("after-deal": after the
// fourth card of a coup is stored; "after-settle": after wallet-svc has
// settled a coup, before the table stores it). Only in builds with
// -tags failpoints, for crash tests.
var failpointName = os.Getenv("CHEMMY_TABLE_FAILPOINT")

// failpoint exits the process at once, as kill -9 would: no deferred
// call runs and nothing more is written.
func failpoint(name string) {
	if name == failpointName {
		os.Exit(86)
	}
}
