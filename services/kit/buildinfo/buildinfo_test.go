package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestFromBuildInfo: a stamped version and revision win; else the main
// module's version and Go's VCS stamp; else (devel) and unknown.
func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.99", Path: "github.com/chemmy/chemmy/cmd/chemmy",
		Main:     debug.Module{Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	read := func() (*debug.BuildInfo, bool) { return bi, true }
	if got := fromBuildInfo("", "", read); got.Version != "v0.3.0" || got.Revision != "abc123" || !got.Modified || got.Go != "go1.99" {
		t.Errorf("from the build info: %+v", got)
	}
	if got := fromBuildInfo("v1.0.0", "def456", read); got.Version != "v1.0.0" || got.Revision != "def456" {
		t.Errorf("stamped: %+v", got)
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	if got := fromBuildInfo("", "", none); got.Version != "(devel)" || got.Revision != Unknown || got.Go == "" {
		t.Errorf("nothing known: %+v", got)
	}
}

// TestCollector: one series chemmy_build_info{version,revision,go} = 1.
func TestCollector(t *testing.T) {
	r := prometheus.NewRegistry()
	r.MustRegister(Collector())
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || mfs[0].GetName() != "chemmy_build_info" || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("families %v", mfs)
	}
	m := mfs[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	i := Get()
	if labels["version"] != i.Version || !strings.HasPrefix(labels["revision"], i.Revision) || labels["go"] != i.Go || len(labels) != 3 {
		t.Errorf("labels %v, build %+v", labels, i)
	}
	if v := testutil.ToFloat64(Collector()); v != 1 {
		t.Errorf("value %v", v)
	}
}

// TestLinkerStamp: the Makefile's -ldflags (the variables it names, as
// written there) stamp the version and the revision of a binary.
func TestLinkerStamp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	mk, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var ldflags string
	for _, l := range strings.Split(string(mk), "\n") {
		if strings.HasPrefix(l, "LDFLAGS") {
			ldflags = strings.TrimSpace(l[strings.Index(l, "=")+1:])
		}
	}
	ldflags = strings.NewReplacer("$(VERSION)", "v9.8.7", "$(REVISION)", "0123abcd").Replace(ldflags)
	if !strings.Contains(ldflags, "v9.8.7") || !strings.Contains(ldflags, "0123abcd") {
		t.Fatalf("the Makefile's LDFLAGS %q stamp no $(VERSION) and $(REVISION)", ldflags)
	}
	bin := filepath.Join(t.TempDir(), "stamp")
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, "./testdata/stamp").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "v9.8.7 0123abcd" {
		t.Errorf("stamped binary says %q, want %q", got, "v9.8.7 0123abcd")
	}
}
