package store

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	bolt "go.etcd.io/bbolt"
)

// TestCollectorOfOneFile: two files of the same name (two stacks in one
// process) each count their own commits only, on their own registries,
// and a closed file keeps its last counts.
func TestCollectorOfOneFile(t *testing.T) {
	a, b := openThings(t, "collected"), openThings(t, "collected")
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	regA.MustRegister(CollectorOf(a))
	regB.MustRegister(CollectorOf(b))
	for range 3 {
		if err := a.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketThings).Put([]byte("k"), nil) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := CommitterFor(b).Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketThings).Put([]byte("k"), nil) }); err != nil {
		t.Fatal(err)
	}
	want := func(reg *prometheus.Registry, commits, groups string) {
		t.Helper()
		exp := `# HELP chemmy_store_commits_total Write transactions committed to the service's bbolt file.
# TYPE chemmy_store_commits_total counter
chemmy_store_commits_total{db="collected"} ` + commits + `
# HELP chemmy_store_fsyncs_total fdatasync calls of those commits (two per commit).
# TYPE chemmy_store_fsyncs_total counter
chemmy_store_fsyncs_total{db="collected"} ` + map[string]string{"3": "6", "1": "2"}[commits] + `
# HELP chemmy_store_group_commits_total Transactions the group committer committed (each serving one or more functions).
# TYPE chemmy_store_group_commits_total counter
chemmy_store_group_commits_total{db="collected"} ` + groups + `
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), "chemmy_store_commits_total", "chemmy_store_fsyncs_total", "chemmy_store_group_commits_total"); err != nil {
			t.Error(err)
		}
	}
	want(regA, "3", "0")
	want(regB, "1", "1")
	a.Close()
	want(regA, "3", "0")
	if CollectorOf(&bolt.DB{}) != nil {
		t.Error("a collector for a file not opened with Open")
	}
}
