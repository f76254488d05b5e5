package store

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestWriteCheck: a file that takes writes checks writable (by a probe of
// its own when idle, by the service's own commits otherwise); one that
// does not (opened read-only: every write refused; closed) checks not
// writable, saying why.
func TestWriteCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := Open(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 20, 0, 0, 0, time.UTC)
	w := NewWriteCheck(db, func() time.Time { return now })
	if err := w.Check(); err != nil {
		t.Fatalf("a new file: %v", err)
	}
	probes := func() (n uint64) {
		id, err := txid(db)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	before := probes()
	if err := w.Check(); err != nil || probes() != before {
		t.Fatalf("checked again at once: %v, %d commits (want none: the last probe stands)", err, probes()-before)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put([]byte("x"), []byte("y")) }); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	before = probes()
	if err := w.Check(); err != nil || probes() != before {
		t.Fatalf("after a commit of the service's: %v, %d commits (want no probe)", err, probes()-before)
	}
	now = now.Add(ProbeEvery)
	if err := w.Check(); err != nil || probes() != before+1 {
		t.Fatalf("idle for %s: %v, %d commits (want one probe)", ProbeEvery, err, probes()-before)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(); err == nil {
		t.Error("a closed file checks writable")
	}

	ro, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := NewWriteCheck(ro, nil).Check(); err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Errorf("a file that refuses writes: %v, want not writable", err)
	}
}
