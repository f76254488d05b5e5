package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// Fault kinds of the transport between table-svc and its dependencies.
const (
	faultDrop = "drop"  // UNAVAILABLE, the call never made
	faultLost = "lost"  // the call made, its reply lost: DEADLINE_EXCEEDED
	faultDup  = "dup"   // the call made twice (a retransmission)
	faultLate = "late"  // held, DEADLINE_EXCEEDED; applied after 1 to 3 later calls
	faultDown = "down"  // the dependency is stopped: UNAVAILABLE
	faultRaw  = "retry" // a transport error of a real socket, repeated (not a fault)
	// Kills (kill.go): table-svc killed before the call is made, or once
	// it is made; the callee killed once it has applied the call, before
	// its reply.
	faultKill       = "kill"
	faultKillAfter  = "kill-after"
	faultKillCallee = "kill-callee"
	faultDead       = "dead" // a call of a killed table-svc: not made (not a fault)
)

// maxLateCalls is the most later calls a late call waits for.
const maxLateCalls = 3

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
	// noLate: no call is held (Avoid.Late); noKill: no service is killed
	// (Avoid.Kill: a kill becomes a lost reply).
	noLate, noKill bool
	// held are the late calls, in the order they were made.
	held []*lateCall
	// kill kills a service (cluster.kill); tableDead: table-svc is killed
	// and not yet started again: its calls are not made.
	kill      func(svc string)
	tableDead bool
	// force, in tests, gives a call its fault kind ("" leaves it to the
	// fault stream).
	force func(svc, method string) string
	// noKillAfterSettle: table-svc is not killed at or after a
	// settlement call within one of its requests or retry passes
	// (Avoid.VoidAfterKill); settled: such a call was made in the current
	// one (beginCall resets it).
	noKillAfterSettle, settled bool
	// answers are the first answers of the shoe and wallet services to
	// each request (method and request_id); mismatches the later answers
	// that differ (dependency-same-answer).
	answers    map[string]proto.Message
	mismatches []string
}

// lateCall is a call held in the network: the caller was told
// DEADLINE_EXCEEDED, and the service gets it once after more calls of the
// caller have completed.
type lateCall struct {
	svc, short string
	after      int // calls still to complete before it is applied
	do         func() error
}

func newFaults(seed uint64, trace func(string, ...any)) *faults {
	return &faults{rng: rand.New(rand.NewPCG(seed, 0x6661756c7473)), counts: map[string]int{}, trace: trace, answers: map[string]proto.Message{}}
}

func (f *faults) setRate(r float64) {
	f.mu.Lock()
	f.rate = r
	f.mu.Unlock()
}

// beginCall notes that table-svc starts a request or a retry pass.
func (f *faults) beginCall() {
	f.mu.Lock()
	f.settled = false
	f.mu.Unlock()
}

// isSettle reports whether a wallet method settles a coup.
func isSettle(method string) bool { return strings.HasPrefix(method, "Settle") }

func (f *faults) setTableDead(dead bool) {
	f.mu.Lock()
	f.tableDead = dead
	f.mu.Unlock()
}

// injected is the number of faults injected (outages and kills
// included).
func (f *faults) injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[faultDrop] + f.counts[faultLost] + f.counts[faultDup] + f.counts[faultLate] + f.counts[faultDown] +
		f.counts[faultKill] + f.counts[faultKillAfter] + f.counts[faultKillCallee]
}

// takeMismatches returns the answers found to differ from the first
// since the last call.
func (f *faults) takeMismatches() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.mismatches
	f.mismatches = nil
	return out
}

// asFirst is a copy of an answer without what legitimately changes
// between a request's answers: SeedShoe answers a retry "with the shoe as
// it stands" (shoe.proto), so its dealing since (cards dealt and
// remaining, the cut card out, a move of top cards, the close) differs;
// what the first SeedShoe fixed (the seeds, the cut, the burn) may not.
func asFirst(m proto.Message) proto.Message {
	m = proto.Clone(m)
	if r, ok := m.(*shoev1.SeedShoeResponse); ok && r.GetShoe() != nil {
		sh := r.GetShoe()
		sh.State, sh.CardsDealt, sh.CardsRemaining, sh.CutCardOut, sh.CutCardCoupId = 0, 0, 0, false, ""
		sh.CloseTime, sh.CloseReason, sh.ClosedBy, sh.ClosedByRole, sh.MovedToBottom, sh.MovedBy = nil, "", "", "", 0, ""
	}
	return m
}

// answered checks a successful answer of a dependency: the first answer
// to a request (its method and request_id) is kept, and every later
// answer to it must be that one (the services store it: a request sent
// again answers as the first try did, AIP-155).
func (f *faults) answered(svc, short string, req, reply any) {
	r, ok := req.(interface{ GetRequestId() string })
	if !ok || r.GetRequestId() == "" {
		return
	}
	key := short + " " + r.GetRequestId()
	msg := asFirst(reply.(proto.Message))
	f.mu.Lock()
	defer f.mu.Unlock()
	first, seen := f.answers[key]
	if !seen {
		f.answers[key] = msg
		return
	}
	if !proto.Equal(first, msg) {
		f.mismatches = append(f.mismatches, fmt.Sprintf("%s-svc's %s of request %s answered %v, then %v when sent again",
			svc, short, r.GetRequestId(), first, msg))
	}
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

// intercept is the faulty transport. Each call draws two numbers of the
// fault stream: u decides whether it is faulted (u < rate) and, for a
// late call, after how many later calls it is applied (u/rate spread
// over 1..maxLateCalls); k its kind. Once the call is done (faulted or
// not), the late calls whose turn has come are applied, in the order
// they were made: the caller is sequential, so every late call lands at
// the same point of every run of a seed.
func (f *faults) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	svc := target(method)
	short := method[strings.LastIndexByte(method, '/')+1:]
	f.mu.Lock()
	if f.tableDead {
		// A killed table-svc's calls are never made, nor counted among
		// the calls that deliver late ones.
		f.counts[faultDead]++
		f.mu.Unlock()
		return status.Errorf(codes.Unavailable, "sim: table-svc was killed; its call to %s-svc is not made", svc)
	}
	u, k := f.rng.Float64(), f.rng.IntN(100)
	kind := ""
	switch {
	case !f.isUp(svc):
		kind = faultDown
	case u < f.rate && (f.exempt == nil || !f.exempt(req)):
		switch {
		case k < 22:
			kind = faultDrop
		case k < 44:
			kind = faultLost
		case k < 66:
			kind = faultDup
		case k < 88:
			kind = faultLate
		case k < 92:
			kind = faultKill
		case k < 96:
			kind = faultKillAfter
		default:
			kind = faultKillCallee
		}
		if kind == faultLate && f.noLate {
			kind = faultLost
		}
		if (kind == faultKill || kind == faultKillAfter || kind == faultKillCallee) && (f.noKill || f.kill == nil) {
			kind = faultLost
		}
		if (kind == faultKill || kind == faultKillAfter) && f.noKillAfterSettle && (f.settled || isSettle(short)) {
			kind = faultLost
		}
	}
	if isSettle(short) && kind != faultDown && kind != faultDrop && kind != faultLate {
		f.settled = true
	}
	if f.force != nil && f.isUp(svc) {
		if k := f.force(svc, short); k != "" {
			kind = k
		}
	}
	if kind != "" {
		f.counts[kind]++
	}
	f.mu.Unlock()
	if kind != "" {
		f.trace("    fault %s %s.%s", kind, svc, short)
	}
	call := func(ctx context.Context, req, reply any) error {
		o := append(opts[:len(opts):len(opts)], grpc.WaitForReady(true))
		var err error
		for range 50 {
			err = invoker(ctx, method, req, reply, cc, o...)
			if err == nil {
				f.answered(svc, short, req, reply)
			}
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
	var err error
	switch kind {
	case faultDown:
		err = status.Errorf(codes.Unavailable, "sim: %s-svc is down", svc)
	case faultDrop:
		err = status.Error(codes.Unavailable, "sim: call dropped")
	case faultLost:
		_ = call(ctx, req, reply)
		err = status.Error(codes.DeadlineExceeded, "sim: the reply was lost (the call was applied)")
	case faultDup:
		_ = call(ctx, req, reply)
		err = call(ctx, req, reply)
	case faultLate:
		f.hold(ctx, svc, short, 1+int(u/f.rate*maxLateCalls), req, reply, call)
		err = status.Error(codes.DeadlineExceeded, "sim: no answer in time (the call is held and will be applied later)")
	case faultKill:
		f.kill(svcTable)
		return status.Error(codes.Unavailable, "sim: table-svc was killed before its call")
	case faultKillAfter:
		_ = call(ctx, req, reply)
		f.kill(svcTable)
		return status.Error(codes.Unavailable, "sim: table-svc was killed once its call was made")
	case faultKillCallee:
		_ = call(ctx, req, reply)
		f.kill(svc)
		err = status.Errorf(codes.Unavailable, "sim: %s-svc was killed before its reply (the call was applied)", svc)
	default:
		err = call(ctx, req, reply)
	}
	f.deliver(kind == faultLate)
	return err
}

// hold keeps a late call: its request and the caller's outgoing metadata
// as they are now, a reply of its own, and a context of its own (the
// caller's is gone by then).
func (f *faults) hold(ctx context.Context, svc, short string, after int, req, reply any, call func(ctx context.Context, req, reply any) error) {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	req = proto.Clone(req.(proto.Message)) // as sent: the caller may reuse its own
	out := proto.Clone(reply.(proto.Message))
	proto.Reset(out)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = append(f.held, &lateCall{svc: svc, short: short, after: min(after, maxLateCalls), do: func() error {
		ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), 10*time.Second)
		defer cancel()
		return call(ctx, req, out)
	}})
}

// deliver counts one more completed call for every held call (but the
// one just held) and applies, in order, those whose turn has come; a call
// to a service that is down is lost.
func (f *faults) deliver(justHeld bool) {
	f.mu.Lock()
	var due []*lateCall
	keep := f.held[:0]
	for i, l := range f.held {
		if !justHeld || i < len(f.held)-1 {
			l.after--
		}
		if l.after <= 0 {
			due = append(due, l)
		} else {
			keep = append(keep, l)
		}
	}
	f.held = keep
	f.mu.Unlock()
	for _, l := range due {
		f.apply(l)
	}
}

// flush applies every held call now (the quiet phase).
func (f *faults) flush() {
	f.mu.Lock()
	due := f.held
	f.held = nil
	f.mu.Unlock()
	for _, l := range due {
		f.apply(l)
	}
}

func (f *faults) apply(l *lateCall) {
	if !f.isUp(l.svc) {
		f.trace("    late %s.%s lost: %s-svc is down", l.svc, l.short, l.svc)
		return
	}
	err := l.do()
	f.trace("    late %s.%s applied -> %s %s", l.svc, l.short, status.Code(err), errs.Reason(err))
}
