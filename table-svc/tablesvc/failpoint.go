//go:build !failpoints

package tablesvc

// failpoint is a no-op in normal builds. Built with -tags failpoints, it
// lets a crash test kill the process at a named step (failpoint_on.go).
func failpoint(string) {}
