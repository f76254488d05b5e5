package store

import (
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestOpenChecksSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x", "s.db")
	db, err := Open(path, 3, []byte("things"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("things")) == nil {
			return errors.New("bucket not created")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(path, 3); err != nil {
		t.Fatalf("reopen with the same schema: %v", err)
	}
	db.Close()
	if _, err := Open(path, 4); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("reopen with another schema: %v", err)
	}
}

func TestIdempotencyRecords(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "s.db"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b := Hash(wrapperspb.String("a")), Hash(wrapperspb.String("b"))
	err = db.Update(func(tx *bolt.Tx) error {
		if _, found, err := Lookup(tx, "k", a); found || err != nil {
			t.Fatalf("empty store: found %v err %v", found, err)
		}
		return Save(tx, "k", a, []byte("resp"))
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		resp, found, err := Lookup(tx, "k", a)
		if !found || err != nil || string(resp) != "resp" {
			t.Errorf("same request: %q %v %v", resp, found, err)
		}
		if _, _, err := Lookup(tx, "k", b); !errors.Is(err, ErrRequestReused) {
			t.Errorf("other request under the same key: %v", err)
		}
		return nil
	})
}
