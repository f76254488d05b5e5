package app

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "150") // also restores the real GOGC at cleanup
	TuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the target became %d, want it left as it was (100)", got)
	}
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	TuneGC()
	if got := debug.SetGCPercent(100); got != GCPercent {
		t.Fatalf("without GOGC the target is %d, want %d", got, GCPercent)
	}
}
