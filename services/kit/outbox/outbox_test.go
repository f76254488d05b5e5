package outbox

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"

	"github.com/chemmy/chemmy/services/kit/store"
)

func openDB(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "o.db"), 1, Bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func put(t *testing.T, db *bolt.DB, n int) {
	t.Helper()
	err := db.Update(func(tx *bolt.Tx) error {
		for i := 0; i < n; i++ {
			if err := Put(tx, fmt.Sprintf("chemmy.test.x.e%d", i), fmt.Sprintf("id-%d", i), []byte{byte(i), 0, 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPendingKeepsOrder(t *testing.T) {
	db := openDB(t)
	put(t, db, 300)
	msgs, err := Pending(db, 1000)
	if err != nil || len(msgs) != 300 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	for i, m := range msgs {
		if m.Subject != fmt.Sprintf("chemmy.test.x.e%d", i) || m.ID != fmt.Sprintf("id-%d", i) || m.Payload[0] != byte(i) || len(m.Payload) != 3 {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
}

func TestDecodeRejectsCorruption(t *testing.T) {
	for _, v := range [][]byte{{}, {5, 'a'}, {1, 'a', 9}} {
		if _, err := decode([]byte{0}, v); err == nil {
			t.Errorf("decode(%v) accepted", v)
		}
	}
}

// TestRelayPublishesOnceEach: the relay publishes every message to
// JetStream with its id, empties the outbox, and a message published
// twice (as after a crash before the delete) is deduplicated.
func TestRelayPublishesOnceEach(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	if !ns.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats not ready")
	}
	nc, err := Connect(ns.ClientURL(), "test", "")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	put(t, db, 10)
	ctx, cancel := context.WithCancel(context.Background())
	r := NewRelay(db, js, slog.Default())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msgs, _ := Pending(db, 10)
		if len(msgs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("outbox not drained")
		}
		time.Sleep(20 * time.Millisecond)
	}
	put(t, db, 10) // the same ids again
	r.Notify()
	for {
		msgs, _ := Pending(db, 10)
		if len(msgs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("outbox not drained twice")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	st, err := js.Stream(context.Background(), StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 10 {
		t.Errorf("stream holds %d messages, want 10 (duplicates dropped)", info.State.Msgs)
	}
}
