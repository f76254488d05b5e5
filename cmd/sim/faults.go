package sim

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Fault kinds of the transport between table-svc and its dependencies.
const (
	faultDrop = "drop"  // UNAVAILABLE, the call never made
	faultLost = "lost"  // the call made, its reply lost: DEADLINE_EXCEEDED
	faultDup  = "dup"   // the call made twice (a retransmission)
	faultDown = "down"  // the dependency is stopped: UNAVAILABLE
	faultRaw  = "retry" // a transport error of a real socket, repeated (not a fault)
)

// faults is the fault-injecting transport of table-svc's connections to
// shoe-svc and wallet-svc (a gRPC client interceptor). Each call draws
// its fate from the fault stream of the seed, exactly two numbers per
// call whatever the rate, so the faults a seed injects depend only on the
// sequence of calls table-svc makes.
type faults struct {
	mu     sync.Mutex
	rng    *rand.Rand
	rate   float64 // probability that a call is faulted
	counts map[string]int
	trace  func(format string, args ...any)
	isUp   func(name string) bool
	// exempt: calls never faulted (Avoid switches).
	exempt func(req any) bool
}

func newFaults(seed uint64, trace func(string, ...any)) *faults {
	return &faults{rng: rand.New(rand.NewPCG(seed, 0x6661756c7473)), counts: map[string]int{}, trace: trace}
}

func (f *faults) setRate(r float64) {
	f.mu.Lock()
	f.rate = r
	f.mu.Unlock()
}

// injected is the number of faults injected (outages included).
func (f *faults) injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[faultDrop] + f.counts[faultLost] + f.counts[faultDup] + f.counts[faultDown]
}

func (f *faults) snapshot() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.counts {
		out[k] = v
	}
	return out
}

// target names the service a method belongs to.
func target(method string) string {
	if strings.Contains(method, "WalletService") {
		return svcWallet
	}
	return svcShoe
}

func (f *faults) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	svc := target(method)
	short := method[strings.LastIndexByte(method, '/')+1:]
	f.mu.Lock()
	u, k := f.rng.Float64(), f.rng.IntN(3)
	kind := ""
	switch {
	case !f.isUp(svc):
		kind = faultDown
	case u < f.rate && (f.exempt == nil || !f.exempt(req)):
		kind = []string{faultDrop, faultLost, faultDup}[k]
	}
	if kind != "" {
		f.counts[kind]++
	}
	f.mu.Unlock()
	if kind != "" {
		f.trace("    fault %s %s.%s", kind, svc, short)
	}
	call := func() error {
		o := append(opts[:len(opts):len(opts)], grpc.WaitForReady(true))
		var err error
		for range 50 {
			err = invoker(ctx, method, req, reply, cc, o...)
			if !transportError(err) || ctx.Err() != nil {
				return err
			}
			f.mu.Lock()
			f.counts[faultRaw]++
			f.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
		return err
	}
	switch kind {
	case faultDown:
		return status.Errorf(codes.Unavailable, "sim: %s-svc is down", svc)
	case faultDrop:
		return status.Error(codes.Unavailable, "sim: call dropped")
	case faultLost:
		_ = call()
		return status.Error(codes.DeadlineExceeded, "sim: the reply was lost (the call was applied)")
	case faultDup:
		_ = call()
		return call()
	}
	return call()
}
