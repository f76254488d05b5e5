package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunRefusesBadStreamLimits: shoe-svc refuses at start stream limits
// the CHEMMY stream cannot work with, naming the flag (with -stream-max-age
// 1ns it used to start, the stream was never created and only a warning
// said so).
func TestRunRefusesBadStreamLimits(t *testing.T) {
	for _, args := range [][]string{{"-stream-max-age", "1ns"}, {"-stream-max-bytes", "1"}, {"-stream-replicas", "9"}} {
		var stderr bytes.Buffer
		// A bad -shard, read after the flags are parsed, makes run return
		// even if it took the stream limits (it would serve otherwise).
		err := run(append(args, "-shard", "not-a-shard", "-data-dir", t.TempDir()), &stderr)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%q: error %v, want one naming %s", args, err, args[0])
		}
	}
}
