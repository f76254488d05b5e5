package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// flaky is a fake gateway: a table that settles a coup at each bet, whose
// calls fail as fail says (by request id and attempt), sometimes after
// applying the request (a lost reply). It records every call.
type flaky struct {
	tablev1.TableServiceClient
	walletv1.WalletServiceClient
	fail func(id string, attempt int) (err error, applied bool)

	mu      sync.Mutex
	calls   map[string][]proto.Message // request id -> each request received
	applied map[string]bool
	coups   int64
	joined  int
}

func newFlaky(fail func(id string, attempt int) (error, bool)) *flaky {
	return &flaky{fail: fail, calls: map[string][]proto.Message{}, applied: map[string]bool{}}
}

// do records the call of req (request id id) and either fails it or
// applies it (once per id: a retry of an applied request changes nothing).
func (f *flaky) do(id string, req proto.Message, apply func()) (*tablev1.Table, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[id] = append(f.calls[id], proto.Clone(req))
	err, appliedAnyway := f.fail(id, len(f.calls[id]))
	if (err == nil || appliedAnyway) && !f.applied[id] {
		f.applied[id] = true
		apply()
	}
	if err != nil {
		return nil, err
	}
	return f.table(), nil
}

func (f *flaky) table() *tablev1.Table {
	t := &tablev1.Table{TableId: "T", CoupsPlayed: f.coups, State: tablev1.TableState_TABLE_STATE_WAITING_FOR_PLAYERS}
	switch {
	case f.joined == 3 && f.applied["bank"]:
		t.State, t.Coup = tablev1.TableState_TABLE_STATE_BETTING, &tablev1.Coup{TurnPlayerId: "b", Uncovered: 1000}
	case f.joined == 3:
		t.State, t.OfferedPlayerId = tablev1.TableState_TABLE_STATE_OFFERING_BANK, "a"
	}
	return t
}

func (f *flaky) Deposit(_ context.Context, r *walletv1.DepositRequest, _ ...grpc.CallOption) (*walletv1.DepositResponse, error) {
	_, err := f.do(r.GetRequestId(), r, func() {})
	if err != nil {
		return nil, err
	}
	return &walletv1.DepositResponse{}, nil
}

func (f *flaky) CreateTable(_ context.Context, r *tablev1.CreateTableRequest, _ ...grpc.CallOption) (*tablev1.CreateTableResponse, error) {
	t, err := f.do(r.GetRequestId(), r, func() {})
	if err != nil {
		return nil, err
	}
	return &tablev1.CreateTableResponse{Table: t}, nil
}

func (f *flaky) JoinTable(_ context.Context, r *tablev1.JoinTableRequest, _ ...grpc.CallOption) (*tablev1.JoinTableResponse, error) {
	t, err := f.do(r.GetRequestId(), r, func() { f.joined++ })
	if err != nil {
		return nil, err
	}
	return &tablev1.JoinTableResponse{Table: t}, nil
}

func (f *flaky) AcceptBank(_ context.Context, r *tablev1.AcceptBankRequest, _ ...grpc.CallOption) (*tablev1.AcceptBankResponse, error) {
	t, err := f.do(r.GetRequestId(), r, func() { f.applied["bank"] = true })
	if err != nil {
		return nil, err
	}
	return &tablev1.AcceptBankResponse{Table: t}, nil
}

func (f *flaky) PlaceBet(_ context.Context, r *tablev1.PlaceBetRequest, _ ...grpc.CallOption) (*tablev1.PlaceBetResponse, error) {
	t, err := f.do(r.GetRequestId(), r, func() { f.coups++ })
	if err != nil {
		return nil, err
	}
	return &tablev1.PlaceBetResponse{Table: t}, nil
}

func (f *flaky) GetTable(_ context.Context, _ *tablev1.GetTableRequest, _ ...grpc.CallOption) (*tablev1.GetTableResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &tablev1.GetTableResponse{Table: f.table()}, nil
}

func testLoader(f *flaky, attempts int, slept *[]time.Duration) *loader {
	return &loader{table: f, wallet: f, prefix: "t", croupier: "c", operator: "o",
		retry: retryPolicy{attempts: attempts, timeout: time.Second, base: 50 * time.Millisecond, max: 200 * time.Millisecond,
			sleep:  func(d time.Duration) { *slept = append(*slept, d) },
			jitter: func(d time.Duration) time.Duration { return d }}}
}

// TestLoadRetriesWithSameRequestID: every call first fails UNAVAILABLE
// (half of them after being applied: a lost reply), then
// DEADLINE_EXCEEDED, then succeeds. The table plays on: each request is
// sent three times, identical, request id included, and is applied once;
// the retries are counted; the backoff doubles up to its bound.
func TestLoadRetriesWithSameRequestID(t *testing.T) {
	f := newFlaky(func(id string, attempt int) (error, bool) {
		switch attempt {
		case 1:
			return status.Error(codes.Unavailable, "connection reset"), len(id)%2 == 0
		case 2:
			return status.Error(codes.DeadlineExceeded, "deadline"), false
		}
		return nil, false
	})
	var slept []time.Duration
	l := testLoader(f, 3, &slept)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res := l.play(ctx, 0)
	if res.err != nil {
		t.Fatalf("the table gave up: %v", res.err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if res.coups == 0 || int(f.coups) != res.coups {
		t.Fatalf("%d coups counted, %d played", res.coups, f.coups)
	}
	calls := 0
	for id, reqs := range f.calls {
		if len(reqs) != 3 {
			t.Errorf("%s: %d calls, want 3", id, len(reqs))
		}
		for _, r := range reqs[1:] {
			if !proto.Equal(r, reqs[0]) {
				t.Errorf("%s: retried as %v, first sent as %v", id, r, reqs[0])
			}
		}
		calls += len(reqs)
	}
	ids := len(f.calls)
	if res.retries.unavailable != ids || res.retries.deadline != ids {
		t.Errorf("retries %+v for %d requests", res.retries, ids)
	}
	if f.joined != 3 {
		t.Errorf("%d joins applied, want 3 (each once)", f.joined)
	}
	for i, d := range slept {
		if want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}[i%2]; d != want {
			t.Fatalf("backoff %d: %s, want %s", i, d, want)
		}
	}
}

// TestLoadRetriesAreBounded: a gateway that never answers is tried
// max-attempts times, with a bounded backoff, and the table gives up; a
// refusal (not UNAVAILABLE or DEADLINE_EXCEEDED) is not retried.
func TestLoadRetriesAreBounded(t *testing.T) {
	var slept []time.Duration
	f := newFlaky(func(string, int) (error, bool) { return status.Error(codes.Unavailable, "down"), false })
	res := testLoader(f, 6, &slept).play(context.Background(), 0)
	if status.Code(res.err) != codes.Unavailable || res.retries.unavailable != 5 || len(f.calls) != 1 {
		t.Fatalf("err %v, retries %+v, %d request ids", res.err, res.retries, len(f.calls))
	}
	want := []time.Duration{50, 100, 200, 200, 200}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if fmt.Sprint(slept) != fmt.Sprint(want) {
		t.Errorf("backoffs %v, want %v", slept, want)
	}
	slept = nil
	f = newFlaky(func(string, int) (error, bool) { return status.Error(codes.FailedPrecondition, "no"), false })
	res = testLoader(f, 6, &slept).play(context.Background(), 0)
	if status.Code(res.err) != codes.FailedPrecondition || res.retries.total() != 0 || len(slept) != 0 {
		t.Fatalf("err %v, retries %+v", res.err, res.retries)
	}
}

// aborting is flaky whose first aborts bets answer ABORTED unapplied
// (cut off and rolled back), all of them when aborts is negative.
type aborting struct {
	*flaky
	aborts int
	ids    []string
}

func (a *aborting) PlaceBet(ctx context.Context, r *tablev1.PlaceBetRequest, o ...grpc.CallOption) (*tablev1.PlaceBetResponse, error) {
	a.ids = append(a.ids, r.GetRequestId())
	if a.aborts != 0 {
		a.aborts--
		return nil, status.Error(codes.Aborted, "cut off and rolled back; send it again with a new request_id")
	}
	return a.flaky.PlaceBet(ctx, r, o...)
}

// TestLoadAbortedMoveIsMadeAgain: a bet answered ABORTED (its request id
// is spent) is made again with a new request id and the table plays on;
// ABORTED for ever gives up after maxAborted.
func TestLoadAbortedMoveIsMadeAgain(t *testing.T) {
	ok := func(string, int) (error, bool) { return nil, false }
	var slept []time.Duration
	a := &aborting{flaky: newFlaky(ok), aborts: 2}
	l := testLoader(a.flaky, 3, &slept)
	l.table = a
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res := l.play(ctx, 0)
	if res.err != nil || res.aborted != 2 || res.coups == 0 {
		t.Fatalf("err %v, aborted %d, coups %d; want the table playing on after 2 aborted bets", res.err, res.aborted, res.coups)
	}
	if len(a.ids) < 3 || a.ids[0] == a.ids[1] || a.ids[1] == a.ids[2] {
		t.Fatalf("bets sent as %v; an aborted move gets a new request id", a.ids[:min(3, len(a.ids))])
	}

	a = &aborting{flaky: newFlaky(ok), aborts: -1}
	l = testLoader(a.flaky, 3, &slept)
	l.table = a
	res = l.play(context.Background(), 0)
	if status.Code(res.err) != codes.Aborted || res.aborted != maxAborted {
		t.Fatalf("err %v after %d aborted moves; want ABORTED after %d", res.err, res.aborted, maxAborted)
	}
}

func TestBackoffJitterStaysInBounds(t *testing.T) {
	p := retryPolicy{base: 50 * time.Millisecond, max: 2 * time.Second}
	for n := 1; n < 12; n++ {
		full := min(50*time.Millisecond<<(n-1), 2*time.Second)
		for range 50 {
			if d := p.backoff(n); d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %s, want %s..%s", n, d, full/2, full)
			}
		}
	}
}
