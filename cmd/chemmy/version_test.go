package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/chemmy/chemmy/services/kit/buildinfo"
)

// TestVersion: `chemmy version` prints the build's version, revision and
// Go version, the values of its chemmy_build_info series.
func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := runVersion(nil, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	i := buildinfo.Get()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || lines[0] != "chemmy "+i.Version || !strings.HasPrefix(lines[1], "revision "+i.Revision) ||
		lines[2] != "go "+i.Go+" "+runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("chemmy version printed %q, build %+v", out.String(), i)
	}
	out.Reset()
	if code := runVersion([]string{"extra"}, &out); code != 2 {
		t.Errorf("chemmy version extra: exit %d", code)
	}
}
