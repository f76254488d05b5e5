package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// lateSeed is a seed whose first call, at fault rate 1, is late, and
// after how many later calls it is applied.
func lateSeed(t *testing.T) (seed uint64, after int) {
	for seed = 1; seed < 1000; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x6661756c7473)) // the fault stream of newFaults
		if u, k := r.Float64(), r.IntN(100); k >= 66 && k < 88 {
			return seed, 1 + int(u*maxLateCalls)
		}
	}
	t.Fatal("no seed with a late first call")
	return 0, 0
}

// TestLateCallAppliedAfterLaterCalls: a late call answers
// DEADLINE_EXCEEDED without reaching the service, and reaches it, as it
// was sent, once its number of later calls have completed, after the
// last of them; one held when its service is down is lost; the quiet
// phase's flush applies what is still held.
func TestLateCallAppliedAfterLaterCalls(t *testing.T) {
	seed, after := lateSeed(t)
	var sent []string
	up := true
	f := newFaults(seed, func(string, ...any) {})
	f.isUp = func(string) bool { return up }
	invoker := func(_ context.Context, method string, req, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		sent = append(sent, req.(*walletv1.PlaceHoldRequest).GetRequestId())
		return nil
	}
	const method = "/chemmy.wallet.v1.WalletService/PlaceHold"
	call := func(id string) error {
		return f.intercept(context.Background(), method, &walletv1.PlaceHoldRequest{RequestId: id}, &walletv1.PlaceHoldResponse{}, nil, invoker)
	}
	f.setRate(1)
	first := &walletv1.PlaceHoldRequest{RequestId: "late"}
	err := f.intercept(context.Background(), method, first, &walletv1.PlaceHoldResponse{}, nil, invoker)
	if status.Code(err) != codes.DeadlineExceeded || len(sent) != 0 {
		t.Fatalf("the late call answered %v and sent %v; want DEADLINE_EXCEEDED, nothing sent", err, sent)
	}
	first.RequestId = "changed by the caller" // what was sent is held
	f.setRate(0)
	var want []string
	for i := 1; i <= after; i++ {
		id := fmt.Sprint("later", i)
		if err := call(id); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
		if i < after && !slices.Equal(sent, want) {
			t.Fatalf("after %d of %d later calls: sent %v", i, after, sent)
		}
	}
	if want = append(want, "late"); !slices.Equal(sent, want) {
		t.Fatalf("sent %v, want %v: the late call after the %d later calls", sent, want, after)
	}
	if got := f.snapshot()[faultLate]; got != 1 {
		t.Fatalf("%d late faults counted", got)
	}

	// Held while its service goes down: lost. Flushed: applied.
	for _, lost := range []bool{true, false} {
		f, sent = newFaults(seed, func(string, ...any) {}), nil
		f.isUp = func(string) bool { return up }
		f.setRate(1)
		if err := call("late"); status.Code(err) != codes.DeadlineExceeded {
			t.Fatal(err)
		}
		up = !lost
		f.flush()
		up = true
		if applied := slices.Equal(sent, []string{"late"}); applied == lost {
			t.Fatalf("service down %t: sent %v", lost, sent)
		}
	}
}
