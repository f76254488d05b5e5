package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// fate is what the test's interceptor does with one call.
type fate int

const (
	pass       fate = iota
	fail            // refused, not made
	lost            // made, its acknowledgement lost
	hang            // not made; waits for the ack timeout
	hangStored      // made; its acknowledgement comes too late
)

// faultyRelay wraps r's calls in an interceptor that gives the i-th call
// the fate fates[i%len(fates)], and counts the calls by kind.
func faultyRelay(r *Relay, fates []fate, kinds map[string]int) *Relay {
	i := 0
	return r.WithAckTimeout(100 * time.Millisecond).WithInterceptor(func(ctx context.Context, c Call, invoke func(context.Context) error) error {
		f := fates[i%len(fates)]
		i++
		kinds[c.Kind]++
		switch f {
		case fail:
			return errors.New("test: refused")
		case lost:
			if err := invoke(ctx); err != nil {
				return err
			}
			return errors.New("test: acknowledgement lost")
		case hang:
			<-ctx.Done()
			return ctx.Err()
		case hangStored:
			if err := invoke(ctx); err != nil {
				return err
			}
			<-ctx.Done()
			return ctx.Err()
		}
		return invoke(ctx)
	})
}

// settle runs the relay's start and drain, as Run would, until a drain
// succeeds (at most 1000 tries: a window refused as a batch is
// published one message at a time, each call under the faults).
func settle(t *testing.T, r *Relay) {
	t.Helper()
	ctx := context.Background()
	ready := false
	for range 1000 {
		if !ready {
			ready = r.ready(ctx) == nil
			continue
		}
		if r.drain(ctx) == nil {
			return
		}
	}
	t.Fatal("the relay did not drain in 1000 tries")
}

// TestRelayUnderFaults: every call of the relay to JetStream fails, is
// made with its acknowledgement lost, hangs past the ack timeout or is
// acknowledged too late, in turn with calls that pass; windows of one
// message, of a few (one at a time), of more than smallWindow (a batch)
// and of more than window. The stream ends with every message once, in
// order: at an atomic stream, at one without atomic batch publish
// (pipelined), and with a PublishedCheck, whose calls fail too.
func TestRelayUnderFaults(t *testing.T) {
	fates := []fate{pass, pass, pass, pass, fail, pass, pass, lost, pass, pass, pass, hang, pass, pass, pass,
		hangStored, pass, pass, lost, fail, pass, pass, pass, pass, pass, pass, pass, pass}
	sizes := []int{1, 5, 1, 40, 3, window + 20, 1}
	for _, tc := range []struct {
		name   string
		atomic bool
		check  bool
		want   []string
	}{
		{"atomic", true, false, []string{CallStream, CallPublish, CallBatch}},
		{"pipelined", false, false, []string{CallStream, CallPipelined}},
		{"checked", true, true, []string{CallStream, CallPublish, CallBatch, CallCheck}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := startNATS(t)
			if !tc.atomic {
				c := StreamLimits{}.Config()
				c.AllowAtomicPublish = false
				if _, err := js.CreateStream(context.Background(), c); err != nil {
					t.Fatal(err)
				}
			}
			kinds := map[string]int{}
			r := faultyRelay(NewRelay(openDB(t), js, slog.New(slog.DiscardHandler)), fates, kinds)
			if tc.check {
				r.WithPublishedCheck(func(ctx context.Context, js jetstream.JetStream, m Message) (bool, error) {
					st, err := js.Stream(ctx, StreamName)
					if err != nil {
						return false, err
					}
					_, err = st.GetLastMsgForSubject(ctx, m.Subject)
					if errors.Is(err, jetstream.ErrMsgNotFound) {
						return false, nil
					}
					return err == nil, err
				})
			}
			n := 0
			for _, size := range sizes {
				putRange(t, r.db, n, n+size, nil)
				n += size
				settle(t, r)
				checkOrder(t, js, n)
			}
			for _, k := range tc.want {
				if kinds[k] == 0 {
					t.Errorf("no %s call intercepted: %v", k, kinds)
				}
			}
			if got := r.sent.Load(); got < uint64(n) {
				t.Errorf("%d published, want at least %d", got, n)
			}
		})
	}
}

// TestInterceptorFailureAcknowledgesNothing: a pipelined window whose
// call the interceptor fails after making it counts none of its messages
// as published (they stay in the outbox, to be published again).
func TestInterceptorFailureAcknowledgesNothing(t *testing.T) {
	js := startNATS(t)
	c := StreamLimits{}.Config()
	c.AllowAtomicPublish = false
	if _, err := js.CreateStream(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	r, _ := newTestRelay(t, js, 3)
	if err := r.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs, err := Pending(r.db, 3)
	if err != nil {
		t.Fatal(err)
	}
	r.WithInterceptor(func(ctx context.Context, c Call, invoke func(context.Context) error) error {
		if err := invoke(ctx); err != nil {
			return err
		}
		return fmt.Errorf("test: %d acknowledgements lost", len(c.Messages))
	})
	if n, err := r.publishPipelined(context.Background(), msgs); n != 0 || err == nil {
		t.Fatalf("publishPipelined = %d, %v; want 0 and the interceptor's error", n, err)
	}
	checkOrder(t, js, 3) // made all the same
}
