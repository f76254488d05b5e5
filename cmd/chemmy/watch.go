package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// watchStats counts what the WatchTable streams of `chemmy load
// -watchers` went through: how each stream ended, and how many were
// opened again.
type watchStats struct {
	// opened counts the streams that carried an update (the first of each
	// watcher and every reconnection); updates the messages they carried.
	opened, updates atomic.Int64
	// How streams ended before the run did: drained by a stopping gateway
	// (UNAVAILABLE GATEWAY_DRAINING: a clean end), their shard unavailable
	// (BACKEND_UNAVAILABLE), the connection to the gateway broken
	// (UNAVAILABLE without a reason: a gateway gone without draining),
	// or otherwise (another status, or the stream's end).
	drained, backend, broken, other atomic.Int64
	// firstOther is the first end counted in other.
	firstOther atomic.Value
}

// watch keeps a WatchTable stream of table id open as who (a token) until
// ctx ends: each time the stream ends it counts how (st), waits (50 ms,
// doubling to 2 s, reset by an update) and watches again.
func (l *loader) watch(ctx context.Context, id, who string, st *watchStats) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		s, err := l.table.WatchTable(l.as(ctx, who), &tablev1.WatchTableRequest{TableId: id})
		if err == nil {
			open := false
			for {
				var u *tablev1.WatchTableResponse
				if u, err = s.Recv(); err != nil {
					break
				}
				if l.results != nil && u.GetEvent().GetCoupResulted() != nil {
					l.results.seen(id, u.GetEvent().GetCoupId())
				}
				if !open {
					// the stream is open: its first update came
					open = true
					st.opened.Add(1)
				}
				st.updates.Add(1)
				backoff = 50 * time.Millisecond
			}
		}
		if ctx.Err() != nil {
			return
		}
		switch reason := errs.Info(err).GetReason(); {
		case status.Code(err) == codes.Unavailable && reason == gateway.ReasonGatewayDraining:
			st.drained.Add(1)
		case status.Code(err) == codes.Unavailable && reason == gateway.ReasonBackendUnavailable:
			st.backend.Add(1)
		case status.Code(err) == codes.Unavailable && reason == "":
			st.broken.Add(1)
		case err != nil: // another status, or io.EOF: the stream's end
			st.other.Add(1)
			st.firstOther.CompareAndSwap(nil, fmt.Sprint(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// report is the watchers' line of the load report.
func (st *watchStats) report(watchers int) string {
	first := ""
	if e, ok := st.firstOther.Load().(string); ok {
		first = " (the first: " + e + ")"
	}
	return fmt.Sprintf("watch streams: %d watchers, %d opened (%d again), %d updates; ended by a stopping gateway (GATEWAY_DRAINING): %d, shard unavailable: %d, connection to the gateway broken: %d, otherwise: %d%s",
		watchers, st.opened.Load(), max(0, st.opened.Load()-int64(watchers)), st.updates.Load(),
		st.drained.Load(), st.backend.Load(), st.broken.Load(), st.other.Load(), first)
}

// resultTimes are when each coup's end reached its player (the answer of
// the move that ended it: PlaceBet, or DecideDraw) and each watcher (its
// coup_resulted event), by table and coup: `chemmy load -watchers`
// reports the watchers' delay after the answer (issue 27: at most 5 ms
// at p99).
type resultTimes struct {
	mu     sync.Mutex
	answer map[[2]string]time.Time
	watch  map[[2]string][]time.Time
}

func newResultTimes() *resultTimes {
	return &resultTimes{answer: map[[2]string]time.Time{}, watch: map[[2]string][]time.Time{}}
}

// answered notes that the answer ending coup of table came now.
func (r *resultTimes) answered(table, coup string) {
	now := time.Now()
	r.mu.Lock()
	r.answer[[2]string{table, coup}] = now
	r.mu.Unlock()
}

// seen notes that a watcher of table got coup's result now.
func (r *resultTimes) seen(table, coup string) {
	now := time.Now()
	r.mu.Lock()
	k := [2]string{table, coup}
	r.watch[k] = append(r.watch[k], now)
	r.mu.Unlock()
}

// delays are, for each watcher's result of a coup whose answer was
// timed, how long after the answer it came (negative: before it).
func (r *resultTimes) delays() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for k, seen := range r.watch {
		at, ok := r.answer[k]
		if !ok {
			continue
		}
		for _, s := range seen {
			out = append(out, s.Sub(at))
		}
	}
	slices.Sort(out)
	return out
}

// report is the delays' line of the load report.
func (r *resultTimes) report() string {
	d := r.delays()
	if len(d) == 0 {
		return "result to watchers after the answer: no coup both answered and watched"
	}
	at := func(p float64) time.Duration {
		return d[min(len(d)-1, int(p*float64(len(d))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("result to watchers after the answer that ended the coup: %d results, p50 %s, p99 %s, max %s (negative: before it)",
		len(d), at(0.50), at(0.99), at(1))
}
