package walletsvc

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/store"
)

// BenchmarkSettleCoupParallel measures settlements through gRPC with many
// tables in flight: the bet holds are placed before the timer starts, each
// iteration is one SettleCoup (bet lost + commission: two transfers, two
// events, the bank hold resized, the idempotency record), group-committed.
// It reports settlements/s and the p50/p99 latency.
func BenchmarkSettleCoupParallel(b *testing.B) {
	e := newEnv(b)
	e.deposit("player:banker", 1_000_000)
	e.deposit("player:punter", int64(b.N)*100+100)
	bank := e.hold("player:banker", 1_000_000)
	holds := make(chan *walletv1.Hold, b.N)
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				holds <- e.hold("player:punter", 100)
			}
		}()
	}
	wg.Wait()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	var coup atomic.Int64
	b.SetParallelism(16) // 16 x GOMAXPROCS clients
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		svc := as(tableSvc)
		var mine []time.Duration
		for pb.Next() {
			h := <-holds
			t0 := time.Now()
			if _, err := e.c.SettleCoup(svc, &walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("c%d", coup.Add(1)), BankHoldId: bank.GetHoldId(),
				Bets: bets(h), Outcome: bankWins, CommissionBp: 500}); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "settlements/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkBoltCommit is the machine's raw bbolt commit rate on this
// disk: one Update (one fsync) per put, DB.Batch with 64 writers, and the
// group committer the wallet uses (store.Committer) with 64 writers.
func BenchmarkBoltCommit(b *testing.B) {
	open := func(b *testing.B) *bolt.DB {
		db, err := bolt.Open(filepath.Join(b.TempDir(), "b.db"), 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
			b.Fatal(err)
		}
		return db
	}
	put := func(tx *bolt.Tx, i int64) error {
		return tx.Bucket([]byte("b")).Put(be64(i), make([]byte, 128))
	}
	report := func(b *testing.B, start time.Time) {
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
	}
	b.Run("update", func(b *testing.B) {
		db := open(b)
		start := time.Now()
		for i := range b.N {
			if err := db.Update(func(tx *bolt.Tx) error { return put(tx, int64(i)) }); err != nil {
				b.Fatal(err)
			}
		}
		report(b, start)
	})
	parallel := func(b *testing.B, commit func(func(*bolt.Tx) error) error) {
		var n atomic.Int64
		b.SetParallelism(32) // 64 writers on 2 cores
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := n.Add(1)
				if err := commit(func(tx *bolt.Tx) error { return put(tx, i) }); err != nil {
					b.Error(err)
					return
				}
			}
		})
		report(b, start)
	}
	b.Run("batch-64", func(b *testing.B) {
		db := open(b)
		db.MaxBatchSize = 64
		parallel(b, db.Batch)
	})
	b.Run("committer-64", func(b *testing.B) {
		c := store.NewCommitter(open(b))
		parallel(b, c.Update)
	})
}
