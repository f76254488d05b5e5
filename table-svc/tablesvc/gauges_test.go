package tablesvc

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestGaugeScanReadsEachTableAlone: the first scan of the stored tables
// labels each with its own game; a chemin de fer record, whose variant is
// left out, read after a punto banco one is still chemin de fer.
func TestGaugeScanReadsEachTableAlone(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "t.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Keys in this order: the punto banco table (variant 2) is read first.
	records := map[string]string{
		"a-pb": `{"id":"a-pb","operator_id":"casino-a","state":2,"variant":2,"event_seq":7,"sessions":{"ann":{}}}`,
		"b-cf": `{"id":"b-cf","state":2,"event_seq":3}`,
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketTables)
		if err != nil {
			return err
		}
		for k, v := range records {
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m := newTableMetrics()
	(&tableGauges{s: &Service{db: db}}).scan(m)
	want := map[string]tableSeen{
		"a-pb": {seq: 7, operator: "casino-a", variant: "punto_banco", open: true, seated: 1},
		"b-cf": {seq: 3, operator: DefaultOperator, variant: "chemin_de_fer", open: true, seated: 0},
	}
	for id, w := range want {
		if got := m.tables[id]; got != w {
			t.Errorf("table %s: %+v, want %+v", id, got, w)
		}
	}
}
