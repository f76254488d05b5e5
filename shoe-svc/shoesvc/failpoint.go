//go:build !failpoints

package shoesvc

// failpoint is a no-op: crash points exist only in binaries built with
// -tags failpoints (see failpoint_on.go), never in production builds.
func failpoint(string) {}
