package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/chemmy/chemmy/services/kit/outbox"
)

// The outbox relays' faults. Every service publishes its events through
// an outbox relay (services/kit/outbox); the simulation wraps each
// relay's calls to JetStream in an interceptor (outbox.Interceptor, set
// through the services' Config.Hook) that makes some of them fail, lose
// their acknowledgement, hang until the relay's ack timeout or be
// acknowledged too late. The relays must publish every event all the
// same, once each and in order (events-gapless, events-unduplicated,
// events-ordered at rest).

// relayAckTimeout is the relays' ack timeout in the simulation
// (outbox.Relay.WithAckTimeout; the services' default is 5 s): a call
// that hangs costs that much real time.
const relayAckTimeout = 250 * time.Millisecond

// longNATSOutage is the least real time a long NATS outage lasts: past
// the relays' ack timeout, so that a publish cut off by the outage times
// out (and may be stored later, when the client's buffer is flushed).
const longNATSOutage = 3 * relayAckTimeout

// Relay fault kinds.
const (
	relayFail = "relay-fail" // refused, not made
	relayLost = "relay-lost" // made, its acknowledgement lost
	relayHang = "relay-hang" // not made; hangs until the ack timeout
	relayLate = "relay-late" // made; hangs until the ack timeout (stored, acknowledged too late)
	relayDead = "relay-dead" // the service was killed: nothing reaches NATS
)

// relayBlock is the number of outbox keys of a fault phase; relayTries
// the most faulted attempts of one message.
const (
	relayBlock = 40
	relayTries = 3
)

// relayFaults decides the fate of each call of the relays. The fate of a
// call depends on the seed, the service and the outbox keys of its
// messages (not on when it is made, which the simulation does not
// decide): each message has its own sequence of fates, one per attempt,
// drawn from the seed, at most relayTries of them faults; a call takes
// the fate of its first message whose next attempt is a fault. The rate
// changes by blocks of relayBlock keys: calm (none), normal, storm.
type relayFaults struct {
	mu   sync.Mutex
	seed uint64
	// off: no fault (the quiet phase, or Avoid.RelayFaults).
	off bool
	// dead: services killed and not yet started again.
	dead   map[string]bool
	tries  map[string]int // svc/kind/key -> faulted attempts
	counts map[string]int
}

func newRelayFaults(seed uint64) *relayFaults {
	return &relayFaults{seed: seed, dead: map[string]bool{}, tries: map[string]int{}, counts: map[string]int{}}
}

func (f *relayFaults) setOff(off bool) {
	f.mu.Lock()
	f.off = off
	f.mu.Unlock()
}

func (f *relayFaults) setDead(svc string, dead bool) {
	f.mu.Lock()
	f.dead[svc] = dead
	f.mu.Unlock()
}

func (f *relayFaults) snapshot() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.counts {
		out[k] = v
	}
	return out
}

// total is the number of relay faults injected (the dead relays' calls
// not counted).
func (f *relayFaults) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[relayFail] + f.counts[relayLost] + f.counts[relayHang] + f.counts[relayLate]
}

// draw is a number in [0, 1) fixed by the seed and the parts.
func (f *relayFaults) draw(parts ...string) float64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(f.seed, h.Sum64())).Float64()
}

// rate is the fault rate of the block of keys of svc that key is in.
func (f *relayFaults) rate(svc string, key uint64) float64 {
	switch r := f.draw("rate", svc, strconv.FormatUint(key/relayBlock, 10)); {
	case r < 0.4:
		return 0
	case r < 0.8:
		return 0.03
	default:
		return 0.15
	}
}

// fate is the kind of fault of a call ("" for none), and counts it.
func (f *relayFaults) fate(svc string, c outbox.Call) string {
	kind, _ := f.fateOf(svc, c)
	return kind
}

// fateOf is fate, and the key of the message whose fate the call took.
func (f *relayFaults) fateOf(svc string, c outbox.Call) (string, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dead[svc] {
		f.counts[relayDead]++
		return relayDead, 0
	}
	if f.off {
		return "", 0
	}
	if c.Kind == outbox.CallStream {
		// Making sure of the stream: refused now and then (never twice
		// running).
		id := svc + "/stream"
		if f.tries[id] == 0 && f.draw("stream", svc, strconv.Itoa(f.counts[id])) < 0.2 {
			f.tries[id]++
			f.counts[id]++
			f.counts[relayFail]++
			return relayFail, 0
		}
		f.tries[id] = 0
		f.counts[id]++
		return "", 0
	}
	// A message's publishing calls share its fates, however it is
	// grouped (one at a time, a batch, pipelined); the checks have their
	// own.
	call := "publish"
	if c.Kind == outbox.CallCheck {
		call = "check"
	}
	for _, m := range c.Messages {
		if len(m.Key) != 8 {
			continue
		}
		key := binary.BigEndian.Uint64(m.Key)
		id := svc + "/" + call + "/" + strconv.FormatUint(key, 10)
		n := f.tries[id]
		if n >= relayTries {
			continue
		}
		u := f.draw("call", id, strconv.Itoa(n))
		rate := f.rate(svc, key)
		if u >= rate {
			continue
		}
		f.tries[id]++
		var kind string
		switch v := u / rate; {
		case v < 0.4:
			kind = relayFail
		case v < 0.8:
			kind = relayLost
		case v < 0.9:
			kind = relayHang
		default:
			kind = relayLate
		}
		f.counts[kind]++
		return kind, key
	}
	return "", 0
}

// intercept is the interceptor of svc's relay.
func (f *relayFaults) intercept(svc string) outbox.Interceptor {
	return func(ctx context.Context, c outbox.Call, invoke func(context.Context) error) error {
		switch f.fate(svc, c) {
		case relayDead:
			return errors.New("sim: " + svc + "-svc was killed")
		case relayFail:
			return errors.New("sim: JetStream refused the call (injected)")
		case relayLost:
			if err := invoke(ctx); err != nil {
				return err
			}
			return errors.New("sim: the acknowledgement was lost (injected; the call was made)")
		case relayHang:
			<-ctx.Done()
			return ctx.Err()
		case relayLate:
			if err := invoke(ctx); err != nil {
				return err
			}
			<-ctx.Done()
			return ctx.Err()
		}
		return invoke(ctx)
	}
}

// relayKinds are the relay faults of m, by kind.
func relayKinds(m map[string]int) map[string]int {
	out := map[string]int{}
	for _, k := range []string{relayFail, relayLost, relayHang, relayLate, relayDead} {
		if m[k] > 0 {
			out[k] = m[k]
		}
	}
	return out
}
