package outbox

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// storedMsg is a message of the stream: its Nats-Msg-Id, and its
// Nats-Batch-Id ("" when it was not published in a batch).
type storedMsg struct{ id, batch string }

// storedMsgs reads the whole stream, in order.
func storedMsgs(t *testing.T, js jetstream.JetStream) []storedMsg {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []storedMsg
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, storedMsg{m.Header.Get(jetstream.MsgIDHeader), m.Header.Get(jetstreamext.BatchIDHeader)})
	}
	return out
}

// checkOrder fails unless the stream holds messages id-0..id-<n-1>, in
// that order, each once, and returns them.
func checkOrder(t *testing.T, js jetstream.JetStream, n int) []storedMsg {
	t.Helper()
	got := storedMsgs(t, js)
	for i, m := range got {
		if i >= n {
			t.Fatalf("stream message %d is %s; want only id-0..id-%d", i+1, m.id, n-1)
		}
		if m.id != fmt.Sprintf("id-%d", i) {
			t.Fatalf("stream message %d is %s, want id-%d", i+1, m.id, i)
		}
	}
	if len(got) != n {
		t.Fatalf("stream holds %d messages, want %d", len(got), n)
	}
	return got
}

// newTestRelay is a relay of a new outbox holding messages 0..n-1, logging
// to the buffer it returns.
func newTestRelay(t *testing.T, js jetstream.JetStream, n int) (*Relay, *bytes.Buffer) {
	t.Helper()
	db := openDB(t)
	put(t, db, n)
	logs := new(bytes.Buffer)
	return NewRelay(db, js, slog.New(slog.NewTextHandler(logs, nil))), logs
}

// TestRelayAfterStoredMessages: the outbox still holds messages a previous
// run published (acknowledged, their removal lost), up into the second
// window. The windows holding them are refused as batches (a duplicate)
// and published one message at a time, the stored ones acknowledged as
// duplicates; the window after them is a batch again. The stream holds
// every event once, in order.
func TestRelayAfterStoredMessages(t *testing.T) {
	ctx := context.Background()
	js := startNATS(t)
	const n, stored = 2*window + 50, window + 44
	r, _ := newTestRelay(t, js, n)
	if err := r.ready(ctx); err != nil {
		t.Fatal(err)
	}
	prev, err := Pending(r.db, stored)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range prev { // as the previous run did
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: m.Subject, Data: m.Payload}, jetstream.WithMsgID(m.ID)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.drain(ctx); err != nil {
		t.Fatal(err)
	}
	got := checkOrder(t, js, n)
	for i, m := range got {
		if batched := i >= 2*window; (m.batch != "") != batched {
			t.Fatalf("stream message %d in batch %q; want a batch only from message %d", i+1, m.batch, 2*window+1)
		}
	}
	if r.sent.Load() != n {
		t.Fatalf("%d published, want %d", r.sent.Load(), n)
	}
}

// TestRelayWithoutAtomicPublish: on a stream that does not allow atomic
// batch publish (an operator's, or one whose allow_atomic was turned off
// while the relay ran) the relay publishes pipelined, still in order,
// and warns once, saying how to allow it.
func TestRelayWithoutAtomicPublish(t *testing.T) {
	ctx := context.Background()
	const warning = "an event lost on the way may be stored after later ones"
	check := func(t *testing.T, js jetstream.JetStream, logs *bytes.Buffer, n int) {
		t.Helper()
		for i, m := range checkOrder(t, js, n)[window+1:] {
			if m.batch != "" {
				t.Fatalf("stream message %d in batch %q after the fallback", window+i+2, m.batch)
			}
		}
		if c := strings.Count(logs.String(), warning); c != 1 {
			t.Fatalf("warned %d times, want once:\n%s", c, logs)
		}
		if !strings.Contains(logs.String(), "allow_atomic") || !strings.Contains(logs.String(), "$JS.API.STREAM.UPDATE.CHEMMY") {
			t.Fatalf("the warning does not tell how to allow atomic publish:\n%s", logs)
		}
	}
	t.Run("operator's stream", func(t *testing.T) {
		js := startNATS(t)
		c := StreamLimits{}.Config()
		c.AllowAtomicPublish = false
		if _, err := js.CreateStream(ctx, c); err != nil {
			t.Fatal(err)
		}
		r, logs := newTestRelay(t, js, window+1)
		if err := r.ready(ctx); err != nil {
			t.Fatal(err)
		}
		if r.atomic {
			t.Fatal("relay publishes atomic batches to a stream without allow_atomic")
		}
		if !strings.Contains(logs.String(), "allow_atomic: false (this service: true)") {
			t.Errorf("the stream's differences do not name allow_atomic:\n%s", logs)
		}
		if err := r.drain(ctx); err != nil {
			t.Fatal(err)
		}
		putRange(t, r.db, window+1, 2*window+30, nil)
		if err := r.drain(ctx); err != nil {
			t.Fatal(err)
		}
		check(t, js, logs, 2*window+30)
	})
	t.Run("turned off", func(t *testing.T) {
		js := startNATS(t)
		r, logs := newTestRelay(t, js, window+1)
		if err := r.ready(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.drain(ctx); err != nil {
			t.Fatal(err)
		}
		c := streamConfig(t, js)
		c.AllowAtomicPublish = false
		if _, err := js.UpdateStream(ctx, c); err != nil {
			t.Fatal(err)
		}
		putRange(t, r.db, window+1, 2*window+30, nil)
		if err := r.drain(ctx); err != nil {
			t.Fatal(err)
		}
		if r.atomic {
			t.Fatal("relay still publishes atomic batches")
		}
		putRange(t, r.db, 2*window+30, 2*window+40, nil)
		if err := r.drain(ctx); err != nil {
			t.Fatal(err)
		}
		check(t, js, logs, 2*window+40)
	})
}

// TestRelayMessageLostMidWindow: a message in the middle of a window never
// reaches the stream (its subject is not the stream's, as a message lost
// with a failing server). Nothing after it is stored before it: its window
// is refused whole, the windows before it are stored. Once the stream
// takes it, the relay stores the rest, everything in order.
func TestRelayMessageLostMidWindow(t *testing.T) {
	ctx := context.Background()
	js := startNATS(t)
	const n, lost = 2*window + 10, window + 100
	db := openDB(t)
	putRange(t, db, 0, n, func(i int) string {
		if i == lost {
			return "held.x"
		}
		return ""
	})
	r := NewRelay(db, js, slog.New(slog.DiscardHandler))
	if err := r.ready(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second try fails as the first
		if err := r.drain(ctx); err == nil {
			t.Fatal("drain published a window with a message the stream does not take")
		}
		checkOrder(t, js, window)
	}
	c := streamConfig(t, js)
	c.Subjects = append(c.Subjects, "held.>")
	if _, err := js.UpdateStream(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := r.drain(ctx); err != nil {
		t.Fatal(err)
	}
	checkOrder(t, js, n)
}

// TestRelayBatchTooLarge: a server whose max_batch_size is below the
// relay's window refuses its batches; the relay publishes such a window
// one message at a time and halves its windows until they fit, in order.
func TestRelayBatchTooLarge(t *testing.T) {
	ctx := context.Background()
	js := startNATSWith(t, func(o *server.Options) { o.JetStreamLimits.MaxBatchSize = 100 })
	const n = window + window/2 + 50
	r, logs := newTestRelay(t, js, n)
	if err := r.ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.drain(ctx); err != nil {
		t.Fatal(err)
	}
	got := checkOrder(t, js, n)
	for i, m := range got {
		if batched := i >= window+window/2; (m.batch != "") != batched {
			t.Fatalf("stream message %d in batch %q; want a batch only from message %d", i+1, m.batch, window+window/2+1)
		}
	}
	if r.batchMax != window/4 || !strings.Contains(logs.String(), "max_batch_size") {
		t.Fatalf("window %d, want %d, and a warning:\n%s", r.batchMax, window/4, logs)
	}
}

// TestRelaySmallWindowsOneAtATime: on a stream of one replica in files
// (whose batches NATS stages on disk) a window of up to smallWindow
// messages is published one message at a time, each awaited; a larger
// one is a batch. Both are stored in order.
func TestRelaySmallWindowsOneAtATime(t *testing.T) {
	ctx := context.Background()
	js := startNATS(t)
	r, _ := newTestRelay(t, js, smallWindow)
	if err := r.ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.drain(ctx); err != nil {
		t.Fatal(err)
	}
	putRange(t, r.db, smallWindow, 2*smallWindow+1, nil)
	if err := r.drain(ctx); err != nil {
		t.Fatal(err)
	}
	for i, m := range checkOrder(t, js, 2*smallWindow+1) {
		if batched := i >= smallWindow; (m.batch != "") != batched {
			t.Fatalf("stream message %d in batch %q; want a batch only from message %d", i+1, m.batch, smallWindow+1)
		}
	}
}
