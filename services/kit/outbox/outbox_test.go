package outbox

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/synadia-io/orbit.go/jetstreamext"
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

// put puts messages 0..n-1 in the outbox: subject chemmy.test.x.e<i>,
// id id-<i>.
func put(t *testing.T, db *bolt.DB, n int) {
	t.Helper()
	putRange(t, db, 0, n, nil)
}

// putRange puts messages from..to-1 as put does, those on which subject
// answers non-empty on that subject instead.
func putRange(t *testing.T, db *bolt.DB, from, to int, subject func(i int) string) {
	t.Helper()
	err := db.Update(func(tx *bolt.Tx) error {
		for i := from; i < to; i++ {
			subj := fmt.Sprintf("chemmy.test.x.e%d", i)
			if subject != nil && subject(i) != "" {
				subj = subject(i)
			}
			if err := Put(tx, subj, fmt.Sprintf("id-%d", i), []byte{byte(i), 0, 1}); err != nil {
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
	// Empty, a subject longer than the value, an id longer than the
	// rest, no id length at all, an id length cut short (0x80 says more
	// bytes follow).
	for _, v := range [][]byte{{}, {5, 'a'}, {2, 'a'}, {1, 'a', 9}, {1, 'a', 2, 'i'}, {1, 'a'}, {1, 'a', 0x80}, {0x80}} {
		if _, err := decode([]byte{0}, v); err == nil {
			t.Errorf("decode(%v) accepted", v)
		}
	}
	// Exact fits: an id that ends the value (no payload), a payload of one byte.
	for v, want := range map[string]Message{
		"\x01s\x01i":   {Subject: "s", ID: "i"},
		"\x02su\x01ip": {Subject: "su", ID: "i", Payload: []byte("p")},
	} {
		m, err := decode([]byte{7}, []byte(v))
		if err != nil || m.Subject != want.Subject || m.ID != want.ID || string(m.Payload) != string(want.Payload) || string(m.Key) != "\x07" {
			t.Errorf("decode(%q) = %+v, %v; want %+v", v, m, err, want)
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

// startNATS runs an embedded JetStream server and returns a JetStream
// context on it.
func startNATS(t *testing.T) jetstream.JetStream {
	t.Helper()
	return startNATSWith(t, nil)
}

// startNATSWith is startNATS with the server's options changed by opt
// (nil: none).
func startNATSWith(t *testing.T, opt func(*server.Options)) jetstream.JetStream {
	t.Helper()
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	if opt != nil {
		opt(o)
	}
	ns, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats not ready")
	}
	nc, err := Connect(ns.ClientURL(), "test", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func streamConfig(t *testing.T, js jetstream.JetStream) jetstream.StreamConfig {
	t.Helper()
	st, err := js.Stream(context.Background(), StreamName)
	if err != nil {
		t.Fatal(err)
	}
	return st.CachedInfo().Config
}

// TestStreamCreatedWithLimits: a missing stream is created with the
// limits given, the defaults, or none.
func TestStreamCreatedWithLimits(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		limits   StreamLimits
		age      time.Duration
		bytes    int64
		replicas int
	}{
		"defaults":  {StreamLimits{}, 7 * 24 * time.Hour, 1 << 30, 1},
		"given":     {StreamLimits{MaxAge: 48 * time.Hour, MaxBytes: 8 << 20, Replicas: 1}, 48 * time.Hour, 8 << 20, 1},
		"unlimited": {StreamLimits{MaxAge: -1, MaxBytes: -1}, 0, -1, 1},
	} {
		t.Run(name, func(t *testing.T) {
			js := startNATS(t)
			if err := CreateStream(ctx, js, tc.limits, nil); err != nil {
				t.Fatal(err)
			}
			c := streamConfig(t, js)
			if c.MaxAge != tc.age || c.MaxBytes != tc.bytes || c.Replicas != tc.replicas || c.Discard != jetstream.DiscardOld ||
				c.Storage != jetstream.FileStorage || c.Duplicates != 2*time.Minute || len(c.Subjects) != 1 || c.Subjects[0] != "chemmy.>" {
				t.Fatalf("stream config %+v", c)
			}
		})
	}
}

// TestExistingStreamLeftAlone: a stream an operator configured is never
// changed by a service starting (EnsureStream, CreateStream, the relay);
// a service whose limits differ says so in a warning.
func TestExistingStreamLeftAlone(t *testing.T) {
	ctx := context.Background()
	js := startNATS(t)
	op := jetstream.StreamConfig{Name: StreamName, Subjects: []string{"chemmy.>"}, Storage: jetstream.FileStorage,
		Duplicates: 2 * time.Minute, MaxAge: 6 * time.Hour, MaxBytes: 5 << 20}
	if _, err := js.CreateStream(ctx, op); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	def := slog.Default()
	slog.SetDefault(log)
	err := EnsureStream(ctx, js) // as every WatchTable does: quietly
	slog.SetDefault(def)
	if err != nil || logs.Len() != 0 {
		t.Fatalf("EnsureStream: %v, logged %q", err, logs.String())
	}
	if err := CreateStream(ctx, js, StreamLimits{MaxAge: 24 * time.Hour}, log); err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	put(t, db, 3)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { NewRelay(db, js, log).WithStreamLimits(StreamLimits{MaxBytes: 1 << 30}).Run(rctx); close(done) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if msgs, _ := Pending(db, 10); len(msgs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("outbox not drained")
		}
	}
	cancel()
	<-done
	if c := streamConfig(t, js); c.MaxAge != 6*time.Hour || c.MaxBytes != 5<<20 {
		t.Fatalf("the operator's limits were overwritten: max_age %s max_bytes %d", c.MaxAge, c.MaxBytes)
	}
	for _, want := range []string{"another configuration", "max_age: 6h0m0s (this service: 24h0m0s)", "max_bytes: 5242880 (this service: 1073741824)"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no %q in the warnings:\n%s", want, logs.String())
		}
	}
}

func TestStreamFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	l := RegisterStreamFlags(fs)
	if *l != (StreamLimits{}).WithDefaults() {
		t.Errorf("flag defaults %+v", *l)
	}
	if err := fs.Parse([]string{"-stream-max-age", "1h", "-stream-max-bytes", "-1", "-stream-replicas", "3"}); err != nil {
		t.Fatal(err)
	}
	if *l != (StreamLimits{MaxAge: time.Hour, MaxBytes: -1, Replicas: 3}) {
		t.Errorf("parsed %+v", *l)
	}
	// Limits below the minimums are refused when the flags are parsed,
	// the error naming the flag; negative (none) and zero (the default)
	// are not.
	for _, args := range [][]string{
		{"-stream-max-age", "1ns"}, {"-stream-max-age", "59m"},
		{"-stream-max-bytes", "1"}, {"-stream-max-bytes", "4194303"},
		{"-stream-replicas", "6"}, {"-stream-replicas", "-1"},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		RegisterStreamFlags(fs)
		err := fs.Parse(args)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%q: error %v, want one naming %s", args, err, args[0])
		}
	}
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	l = RegisterStreamFlags(fs)
	if err := fs.Parse([]string{"-stream-max-age", "1h", "-stream-max-bytes", "4194304", "-stream-replicas", "5"}); err != nil {
		t.Fatal(err)
	}
	if *l != (StreamLimits{MaxAge: time.Hour, MaxBytes: 4 << 20, Replicas: 5}) {
		t.Errorf("parsed %+v", *l)
	}
	if err := fs.Parse([]string{"-stream-max-age", "0", "-stream-max-bytes", "0", "-stream-replicas", "0"}); err != nil {
		t.Fatal(err)
	}
}

// TestStreamLimitsValidate: Validate refuses limits the stream cannot
// work with (an age below the minimum, which JetStream refuses when it is
// shorter than the duplicate window, and the stream is then never
// created; a size that holds no batch; replicas outside 1..5), naming the
// flag that sets each; zero (the default) and negative age or size (no
// limit) are valid.
func TestStreamLimitsValidate(t *testing.T) {
	for _, l := range []StreamLimits{
		{}, {MaxAge: -1, MaxBytes: -1}, {MaxAge: MinStreamMaxAge, MaxBytes: MinStreamMaxBytes, Replicas: 1},
		{Replicas: 5}, (StreamLimits{}).WithDefaults(),
	} {
		if err := l.Validate(); err != nil {
			t.Errorf("%+v: %v", l, err)
		}
	}
	for _, tc := range []struct {
		l    StreamLimits
		flag string
	}{
		{StreamLimits{MaxAge: time.Nanosecond}, "-stream-max-age"},
		{StreamLimits{MaxAge: MinStreamMaxAge - 1}, "-stream-max-age"},
		{StreamLimits{MaxBytes: 1}, "-stream-max-bytes"},
		{StreamLimits{MaxBytes: MinStreamMaxBytes - 1}, "-stream-max-bytes"},
		{StreamLimits{Replicas: 6}, "-stream-replicas"},
		{StreamLimits{Replicas: -1}, "-stream-replicas"},
	} {
		err := tc.l.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%+v: error %v, want one naming %s", tc.l, err, tc.flag)
		}
	}
}

// TestRelayBatchesKeepOrder: the relay creates the stream allowing
// atomic batch publish; more messages than one window are published a
// window at a time as one atomic batch each (the stored messages of a
// window carry one Nats-Batch-Id and their place in it), stored in the
// outbox's order, each once, and removed from the outbox.
func TestRelayBatchesKeepOrder(t *testing.T) {
	js := startNATS(t)
	db := openDB(t)
	const n = 2*window + 37
	put(t, db, n)
	ctx, cancel := context.WithCancel(context.Background())
	r := NewRelay(db, js, slog.Default())
	if err := r.ready(ctx); err != nil {
		t.Fatal(err)
	}
	if !streamConfig(t, js).AllowAtomicPublish || !r.atomic {
		t.Fatalf("stream created without atomic batch publish (relay: %v)", r.atomic)
	}
	name := strings.TrimSuffix(filepath.Base(db.Path()), ".db")
	commits := store.Snapshot()[name].Commits
	if err := r.drain(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	// The removals ride on the next commit: the drain made none.
	if got := store.Snapshot()[name].Commits; got != commits {
		t.Errorf("drain committed %d times; want its removals riding", got-commits)
	}
	if msgs, _, _ := pending(db, 1, r.removing); len(msgs) != 0 {
		t.Fatalf("left unpublished: %+v", msgs)
	}
	r.flush()
	if msgs, _ := Pending(db, 1); len(msgs) != 0 {
		t.Fatalf("outbox not empty: %+v", msgs)
	}
	st, err := js.Stream(context.Background(), StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil || info.State.Msgs != n {
		t.Fatalf("stream: %v, %v; want %d messages", info, err, n)
	}
	batches := map[string]bool{}
	for i := range n {
		m, err := st.GetMsg(context.Background(), uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("chemmy.test.x.e%d", i); m.Subject != want || m.Header.Get("Nats-Msg-Id") != fmt.Sprintf("id-%d", i) {
			t.Fatalf("stream message %d: %s %v, want %s", i+1, m.Subject, m.Header, want)
		}
		id, seq := m.Header.Get(jetstreamext.BatchIDHeader), m.Header.Get(jetstreamext.BatchSeqHeader)
		if id == "" || seq != fmt.Sprint(i%window+1) || batches[id] != (i%window != 0) {
			t.Fatalf("stream message %d: batch %q sequence %q, want window %d's, sequence %d", i+1, id, seq, i/window+1, i%window+1)
		}
		batches[id] = true
	}
	if len(batches) != 3 {
		t.Fatalf("%d batches, want 3 (two windows of %d and one of 37)", len(batches), window)
	}
}

// metricValue is the value of the metric name on reg (-1 when absent),
// with its db label.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) (float64, string) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) != 1 {
			continue
		}
		m := mf.GetMetric()[0]
		db := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "db" {
				db = l.GetValue()
			}
		}
		switch {
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), db
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), db
		}
	}
	return -1, ""
}

// TestRelayMetrics: the backlog counts what is stored and not published
// (more than a batch too, read cheaply), published and failed attempts
// are counted, labelled with the file's name; registering twice on one
// registry is refused.
func TestRelayMetrics(t *testing.T) {
	db := openDB(t)
	const n = window + 44
	put(t, db, n)
	if msgs, c, err := pending(db, window, nil); err != nil || len(msgs) != window || c != n {
		t.Fatalf("pending: %d messages, count %d, %v; want %d, %d", len(msgs), c, err, window, n)
	}
	if _, c, _ := pending(db, 1000, nil); c != n {
		t.Fatalf("count %d, want %d", c, n)
	}
	js := startNATS(t)
	r := NewRelay(db, js, slog.New(slog.DiscardHandler))
	reg := prometheus.NewRegistry()
	if err := r.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := NewRelay(db, js, slog.Default()).Register(reg); err == nil {
		t.Fatal("a second relay of the same file registered on the same registry")
	}
	r.count()
	if v, db := metricValue(t, reg, "chemmy_outbox_backlog"); v != n || db != "o" {
		t.Fatalf("backlog %v{db=%q} before the relay runs, want %d{db=\"o\"}", v, db, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	wait := func(name string, want float64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			v, _ := metricValue(t, reg, name)
			if v == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %v, want %v", name, v, want)
			}
		}
	}
	wait("chemmy_outbox_published_total", n)
	wait("chemmy_outbox_backlog", 0)
	if v, _ := metricValue(t, reg, "chemmy_outbox_publish_errors_total"); v != 0 {
		t.Fatalf("publish errors %v, want 0", v)
	}
	// A subject outside the stream: JetStream does not answer; the
	// message waits in the outbox and each try is an error.
	if err := db.Update(func(tx *bolt.Tx) error { return Put(tx, "elsewhere.x", "lost-1", []byte{1}) }); err != nil {
		t.Fatal(err)
	}
	r.Notify()
	wait("chemmy_outbox_backlog", 1)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if v, _ := metricValue(t, reg, "chemmy_outbox_publish_errors_total"); v >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no publish error counted")
		}
	}
	if v, _ := metricValue(t, reg, "chemmy_outbox_published_total"); v != n {
		t.Fatalf("published %v, want %d", v, n)
	}
	cancel()
	<-done
}

// TestRelayHealth: the relay is healthy while it publishes; once an
// event cannot be published (a subject no stream takes: every attempt
// fails) for longer than its stall time, Health says events are not
// published and why; once the outbox can be drained again it is healthy
// again. A relay without NATS (events kept on purpose) is healthy.
func TestRelayHealth(t *testing.T) {
	if err := NewRelay(openDB(t), nil, slog.New(slog.DiscardHandler)).Health(); err != nil {
		t.Errorf("a relay without NATS: %v", err)
	}
	db := openDB(t)
	put(t, db, 5)
	js := startNATS(t)
	r := NewRelay(db, js, slog.New(slog.DiscardHandler)).WithStallAfter(200 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	// until polls f every 20 ms until it is true, for at most 20 s.
	until := func(what string, f func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !f(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not %s within 20 s", what)
			}
		}
	}
	until("drained and healthy", func() bool {
		msgs, _ := Pending(db, 1)
		return len(msgs) == 0 && r.Health() == nil
	})
	if err := db.Update(func(tx *bolt.Tx) error { return Put(tx, "elsewhere.x", "lost-1", []byte{1}) }); err != nil {
		t.Fatal(err)
	}
	r.Notify()
	var health error
	until("unhealthy", func() bool { health = r.Health(); return health != nil })
	if msg := health.Error(); !strings.Contains(msg, "events are not published: 1 waiting") {
		t.Errorf("Health: %q, want it to say events are not published and 1 waits", msg)
	}
	// Once an attempt has failed, it says how.
	until("the failure in Health", func() bool {
		health = r.Health()
		return health != nil && strings.Contains(health.Error(), "every attempt has failed")
	})
	// The stuck event removed (an operator's fix): drained, healthy.
	if err := db.Update(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(Bucket).Cursor().First()
		return tx.Bucket(Bucket).Delete(k)
	}); err != nil {
		t.Fatal(err)
	}
	r.Notify()
	until("healthy again", func() bool { return r.Health() == nil })
}

// TestRelayPublishesBatches: a message of PutEvents is one NATS message
// with its batch's headers (type by its subject, kinds, Nats-Msg-Id),
// stored in the outbox's order among single events, once even when put
// and published again (a restart before its removal); the relay counts
// its events in chemmy_outbox_published_total and it once in
// chemmy_outbox_messages_total.
func TestRelayPublishesBatches(t *testing.T) {
	js := startNATS(t)
	db := openDB(t)
	putAll := func() {
		t.Helper()
		err := db.Update(func(tx *bolt.Tx) error {
			if err := PutEvents(tx, "chemmy.table.T1.v2", "E1", 3, "bet_placed,card_dealt", []byte("b1")); err != nil {
				return err
			}
			if err := Put(tx, "chemmy.wallet.X.transfer_recorded", "W1", []byte("w1")); err != nil {
				return err
			}
			if err := PutEvents(tx, "chemmy.table.T1.v2", "E4", 2, "coup_resulted,coup_settled", []byte("b2")); err != nil {
				return err
			}
			return PutEvents(tx, "chemmy.wallet.W2.v2", "W2", 2, "", []byte("w2"))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	putAll()
	msgs, err := Pending(db, 10)
	if err != nil || len(msgs) != 4 || msgs[3].Events != 2 || msgs[0].Events != 3 || msgs[0].Kinds != "bet_placed,card_dealt" || msgs[1].Events != 1 || msgs[1].Kinds != "" {
		t.Fatalf("pending %+v, %v", msgs, err)
	}
	r := NewRelay(db, js, slog.New(slog.DiscardHandler))
	reg := prometheus.NewRegistry()
	if err := r.Register(reg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	drained := func(n uint64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if r.sentMsgs.Load() == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("outbox not drained")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	drained(4)
	putAll() // the same ids again: a restart before the removal
	r.Notify()
	drained(8)
	cons, err := js.OrderedConsumer(context.Background(), StreamName, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(10, jetstream.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	type seen struct{ subject, id, typ, kind, kinds, data string }
	var got []seen
	for m := range batch.Messages() {
		h := m.Headers()
		got = append(got, seen{m.Subject(), h.Get(jetstream.MsgIDHeader), h.Get(TypeHeader), h.Get(KindHeader), h.Get(KindsHeader), string(m.Data())})
	}
	want := []seen{
		// A batch: no type header (its subject names it), a table's its kinds.
		{"chemmy.table.T1.v2", "E1", "", "", "bet_placed,card_dealt", "b1"},
		{"chemmy.wallet.X.transfer_recorded", "W1", "chemmy.events.v1.WalletEvent", "transfer_recorded", "", "w1"},
		{"chemmy.table.T1.v2", "E4", "", "", "coup_resulted,coup_settled", "b2"},
		{"chemmy.wallet.W2.v2", "W2", "", "", "", "w2"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("stream\n got %v\nwant %v", got, want)
	}
	// Published twice: 8 events in 4 messages each time.
	if e, m := r.sent.Load(), r.sentMsgs.Load(); e != 16 || m != 8 {
		t.Errorf("counted %d events in %d messages, want 16 in 8", e, m)
	}
	if n := gatherCounter(t, reg, "chemmy_outbox_messages_total"); n != 8 {
		t.Errorf("chemmy_outbox_messages_total %v", n)
	}
	if n := gatherCounter(t, reg, "chemmy_outbox_published_total"); n != 16 {
		t.Errorf("chemmy_outbox_published_total %v", n)
	}
}

// gatherCounter is the value of counter name on reg.
func gatherCounter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

// TestDecodeBatchRecord: a record of PutEvents reads back with its count
// and kinds; one cut short is refused.
func TestDecodeBatchRecord(t *testing.T) {
	m, err := decode([]byte{1}, []byte("\x00\x03\x02ab\x01s\x01ip"))
	if err != nil || m.Events != 3 || m.Kinds != "ab" || m.Subject != "s" || m.ID != "i" || string(m.Payload) != "p" {
		t.Errorf("decode = %+v, %v", m, err)
	}
	for _, v := range []string{"\x00", "\x00\x03", "\x00\x03\x05ab", "\x00\x03\x02ab"} {
		if _, err := decode([]byte{1}, []byte(v)); err == nil {
			t.Errorf("decode(%q) accepted", v)
		}
	}
}

// TestStoredSizeOfBatches: what the stream stores of a batch is its
// subject, its headers as sent (the "NATS/1.0" line, Nats-Msg-Id, a
// table batch's Chemmy-Event-Kinds and the blank line; no type header)
// and its payload, plus 34 bytes of the file store's own (length,
// sequence, time, subject and header lengths, hash): the size model of
// docs/events.md and docs/performance.md, computed by hand here.
func TestStoredSizeOfBatches(t *testing.T) {
	js := startNATS(t)
	db := openDB(t)
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := PutEvents(tx, "chemmy.table.T1.v2", "E1", 2, "bet_placed", []byte("b1")); err != nil {
			return err
		}
		return PutEvents(tx, "chemmy.wallet.W2.v2", "W2", 2, "", []byte("w2"))
	}); err != nil {
		t.Fatal(err)
	}
	r := NewRelay(db, js, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for r.sentMsgs.Load() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("outbox not drained")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s, err := js.Stream(context.Background(), StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const own = 4 + 8 + 8 + 2 + 4 + 8
	table := own + len("chemmy.table.T1.v2") + len("NATS/1.0\r\nChemmy-Event-Kinds: bet_placed\r\nNats-Msg-Id: E1\r\n\r\n") + len("b1")
	wallet := own + len("chemmy.wallet.W2.v2") + len("NATS/1.0\r\nNats-Msg-Id: W2\r\n\r\n") + len("w2")
	if info.State.Msgs != 2 || info.State.Bytes != uint64(table+wallet) {
		t.Errorf("stream holds %d messages, %d bytes; want 2, %d (table %d, wallet %d)", info.State.Msgs, info.State.Bytes, table+wallet, table, wallet)
	}
}
