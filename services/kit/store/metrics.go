package store

import (
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
)

// FsyncsPerCommit is how many fdatasync calls bbolt makes to commit one
// read-write transaction: one after writing the transaction's pages, one
// after writing the meta page. (A commit that grows the file syncs once
// more; rare.)
const FsyncsPerCommit = 2

// dbStats are the counters of one file opened by Open.
type dbStats struct {
	name string // the file's base name without ".db": "table", "shoe", "wallet"

	mu   sync.Mutex
	db   *bolt.DB // nil once the file was found closed
	base uint64   // transaction id at Open
	last uint64   // last transaction id read

	// calls are the writers' functions committed through a Committer
	// (its Update calls: the durable writes; Flush's commit of riders
	// alone is not one)
	calls  atomic.Uint64
	groups atomic.Uint64 // transactions a Committer committed
	// groupNanos is the time those transactions took (running the
	// functions, writing, syncing).
	groupNanos atomic.Uint64
}

var tracked struct {
	mu  sync.Mutex
	dbs []*dbStats
	by  map[*bolt.DB]*dbStats
}

// txid is the id of the last transaction committed to db (bbolt numbers
// its write transactions one by one).
func txid(db *bolt.DB) (id uint64, err error) {
	err = db.View(func(tx *bolt.Tx) error { id = uint64(tx.ID()); return nil })
	return id, err
}

// track starts counting the commits of db, a file at path.
func track(db *bolt.DB, path string) {
	id, _ := txid(db)
	st := &dbStats{name: strings.TrimSuffix(filepath.Base(path), ".db"), db: db, base: id, last: id}
	tracked.mu.Lock()
	defer tracked.mu.Unlock()
	if tracked.by == nil {
		tracked.by = map[*bolt.DB]*dbStats{}
	}
	tracked.dbs = append(tracked.dbs, st)
	tracked.by[db] = st
}

func statsOf(db *bolt.DB) *dbStats {
	tracked.mu.Lock()
	defer tracked.mu.Unlock()
	return tracked.by[db]
}

// commits is how many write transactions were committed since Open
// (while the file is open; its last count once it is closed).
func (s *dbStats) commits() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil {
		if id, err := txid(s.db); err == nil {
			s.last = id
		} else {
			forget(s.db)
			s.db = nil // closed: keep the last count, let the file go
			tracked.mu.Lock()
			for k, v := range tracked.by {
				if v == s {
					delete(tracked.by, k)
				}
			}
			tracked.mu.Unlock()
		}
	}
	return s.last - s.base
}

// Counts are the write counters of the files of one name ("table",
// "shoe", "wallet") opened by this process with Open.
type Counts struct {
	// Commits: write transactions committed, each FsyncsPerCommit
	// fdatasyncs.
	Commits uint64
	// Calls and Groups: writers' functions committed through a
	// Committer (its Update calls; Flush's are not counted), and the
	// transactions that committed them (Calls/Groups functions share one
	// commit).
	Calls, Groups uint64
	// GroupTime is the time the Committer's transactions took, from
	// the first function run to the end of the commit.
	GroupTime time.Duration
}

// Fsyncs is Commits × FsyncsPerCommit.
func (c Counts) Fsyncs() uint64 { return c.Commits * FsyncsPerCommit }

// Snapshot returns the counters of every file this process opened with
// Open, summed by name (the file's base name without ".db").
func Snapshot() map[string]Counts {
	tracked.mu.Lock()
	dbs := append([]*dbStats(nil), tracked.dbs...)
	tracked.mu.Unlock()
	out := map[string]Counts{}
	for _, s := range dbs {
		c := out[s.name]
		c.Commits += s.commits()
		c.Calls += s.calls.Load()
		c.Groups += s.groups.Load()
		c.GroupTime += time.Duration(s.groupNanos.Load())
		out[s.name] = c
	}
	return out
}

var (
	descCommits = prometheus.NewDesc("chemmy_store_commits_total",
		"Write transactions committed to the service's bbolt file.", []string{"db"}, nil)
	descFsyncs = prometheus.NewDesc("chemmy_store_fsyncs_total",
		"fdatasync calls of those commits (two per commit).", []string{"db"}, nil)
	descCalls = prometheus.NewDesc("chemmy_store_group_calls_total",
		"Writers' functions committed through the group committer: the service's durable writes (a commit of the outbox's removals alone is none).", []string{"db"}, nil)
	descGroups = prometheus.NewDesc("chemmy_store_group_commits_total",
		"Transactions the group committer committed (each serving one or more functions).", []string{"db"}, nil)
	descGroupTime = prometheus.NewDesc("chemmy_store_group_commit_seconds_total",
		"Time those transactions took (functions, writes, fsyncs).", []string{"db"}, nil)
)

// CollectorOf is a Prometheus collector of the store counters of db, a
// file opened with Open (nil when it was not): chemmy_store_commits_total,
// chemmy_store_fsyncs_total, chemmy_store_group_calls_total,
// chemmy_store_group_commits_total and
// chemmy_store_group_commit_seconds_total, labelled db (the file's base
// name without ".db": "table", "shoe", "wallet"). Each service registers
// its own file's on its own registry, so that several services in one
// process (chemmy run, the tests) count each commit once, under its own
// service. After the file is closed it keeps reporting its last counts.
func CollectorOf(db *bolt.DB) prometheus.Collector {
	if st := statsOf(db); st != nil {
		return collector{st}
	}
	return nil
}

// collector exports one file's counters.
type collector struct{ st *dbStats }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCommits
	ch <- descFsyncs
	ch <- descCalls
	ch <- descGroups
	ch <- descGroupTime
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s, name := c.st, c.st.name
	commits := s.commits()
	ch <- prometheus.MustNewConstMetric(descCommits, prometheus.CounterValue, float64(commits), name)
	ch <- prometheus.MustNewConstMetric(descFsyncs, prometheus.CounterValue, float64(commits*FsyncsPerCommit), name)
	ch <- prometheus.MustNewConstMetric(descCalls, prometheus.CounterValue, float64(s.calls.Load()), name)
	ch <- prometheus.MustNewConstMetric(descGroups, prometheus.CounterValue, float64(s.groups.Load()), name)
	ch <- prometheus.MustNewConstMetric(descGroupTime, prometheus.CounterValue, time.Duration(s.groupNanos.Load()).Seconds(), name)
}
