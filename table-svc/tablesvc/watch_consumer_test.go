package tablesvc

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// watchRig serves WatchTable of the harness's table-svc store against an
// embedded JetStream server, and plays the outbox relay on demand (the
// harness runs without NATS).
type watchRig struct {
	h      *harness
	js     jetstream.JetStream
	tables tablev1.TableServiceClient
	// w serves WatchTable; its hub is none (events from the stream only)
	// unless a test gives it the harness's (w.hub = h.table.hub).
	w *Service
}

func newWatchRig(t *testing.T) *watchRig {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() }) // runs last
	if !ns.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := outbox.EnsureStream(context.Background(), js); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t)
	// A second Service on the same store, wired to JetStream: WatchTable
	// needs only the store, the clock and JetStream.
	w := &Service{base: &app.Base{JS: js}, db: h.table.db, log: slog.New(slog.DiscardHandler), now: h.clock.Now}
	// The caller named in the metadata (a harness's h.as) is the viewer.
	srv := grpc.NewServer(grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if c, ok := auth.FromIncoming(ss.Context()); ok {
			return handler(srv, &callerStream{ServerStream: ss, ctx: auth.WithCaller(ss.Context(), c)})
		}
		return handler(srv, ss)
	}))
	tablev1.RegisterTableServiceServer(srv, w)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return &watchRig{h: h, js: js, tables: tablev1.NewTableServiceClient(cc), w: w}
}

// relay publishes the harness's outbox to JetStream as the relay does
// (deduplicated by message id, so it may run again).
func (r *watchRig) relay(t *testing.T) {
	t.Helper()
	msgs, err := outbox.Pending(r.h.table.db, 10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := r.js.PublishMsg(context.Background(), &nats.Msg{Subject: m.Subject, Data: m.Payload, Header: m.Headers()}, jetstream.WithMsgID(m.ID)); err != nil {
			t.Fatal(err)
		}
	}
}

// consumers is the number of consumers of the event stream.
func (r *watchRig) consumers(t *testing.T) int {
	t.Helper()
	st, err := r.js.Stream(context.Background(), outbox.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Consumers
}

// callerStream is a server stream whose context carries the caller.
type callerStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *callerStream) Context() context.Context { return s.ctx }

// watch opens WatchTable on id and reads the snapshot.
func (r *watchRig) watch(t *testing.T, id string) (grpc.ServerStreamingClient[tablev1.WatchTableResponse], context.CancelFunc) {
	t.Helper()
	return r.watchFrom(t, id, context.Background())
}

// watchFrom is watch from parent (a caller's context).
func (r *watchRig) watchFrom(t *testing.T, id string, parent context.Context) (grpc.ServerStreamingClient[tablev1.WatchTableResponse], context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(parent, 10*time.Second)
	ws, err := r.tables.WatchTable(ctx, &tablev1.WatchTableRequest{TableId: id})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	first, err := ws.Recv()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if first.GetTable().GetTableId() != id {
		cancel()
		t.Fatalf("first message %v, want the table %s", first, id)
	}
	return ws, cancel
}

// TestWatchTableConsumerGoesWithTheStream: a watch has one consumer on the
// event stream while it is open, and none a moment after the client goes
// away (well before the consumer's inactivity threshold); events still
// come after the snapshot, in order, without those it holds.
func TestWatchTableConsumerGoesWithTheStream(t *testing.T) {
	r := newWatchRig(t)
	id := r.h.tableWith(&tablev1.HouseRules{}, 0, nil, "alice", "bob")
	r.relay(t) // the events up to the snapshot: the watch skips them
	snapSeq := mustLoad(t, r.h, id).EventSeq

	ws, cancel := r.watch(t, id)
	if n := r.consumers(t); n != 1 {
		t.Fatalf("%d consumers while one watch is open, want 1", n)
	}
	r.h.join(id, "carol")
	r.relay(t)
	ev, err := ws.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.GetEvent(); got.GetSequence() != snapSeq+1 || got.GetPlayerSeated().GetPlayerId() != "carol" {
		t.Fatalf("first event after the snapshot (event %d): %v, want carol seated as event %d", snapSeq, got, snapSeq+1)
	}

	cancel()
	waitFor(t, func() bool { return r.consumers(t) == 0 }, "the watch's consumer to be deleted")
}

// TestWatchTableSnapshotNamesItsLastEvent: the snapshot's event_sequence
// is the sequence of the table's last event it reflects, published or
// not yet, and the first event streamed after it carries the next one:
// a client that reconnects can tell what it missed.
func TestWatchTableSnapshotNamesItsLastEvent(t *testing.T) {
	r := newWatchRig(t)
	id := r.h.tableWith(&tablev1.HouseRules{}, 0, nil, "alice", "bob")
	r.relay(t)
	r.h.join(id, "carol") // stored, not published yet when the watch opens
	want := mustLoad(t, r.h, id).EventSeq

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := r.tables.WatchTable(ctx, &tablev1.WatchTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	first, err := ws.Recv()
	if err != nil {
		t.Fatal(err)
	}
	snap := first.GetTable()
	if snap == nil || snap.GetEventSequence() != want || want < 4 {
		t.Fatalf("snapshot event_sequence %d (table %v), want %d: the table's last event (carol seated)", snap.GetEventSequence(), snap != nil, want)
	}
	if seated := len(snap.GetSeats()); seated != 3 {
		t.Fatalf("the snapshot has %d seated, want 3 (carol's event %d is in it)", seated, want)
	}
	r.h.join(id, "dave")
	r.relay(t)
	ev, err := ws.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.GetEvent(); got.GetSequence() != snap.GetEventSequence()+1 || got.GetPlayerSeated().GetPlayerId() != "dave" {
		t.Fatalf("first event streamed: %v; want dave seated as event %d, right after the snapshot's %d", got, snap.GetEventSequence()+1, snap.GetEventSequence())
	}
}

// TestWatchTableManyDroppedStreamsLeaveNoConsumers: watches that are
// opened and dropped leave no consumer behind.
func TestWatchTableManyDroppedStreamsLeaveNoConsumers(t *testing.T) {
	r := newWatchRig(t)
	id := r.h.tableWith(&tablev1.HouseRules{}, 0, nil, "alice")
	const n = 25
	var cancels []context.CancelFunc
	for range n {
		_, cancel := r.watch(t, id)
		cancels = append(cancels, cancel)
	}
	if got := r.consumers(t); got != n {
		t.Fatalf("%d consumers while %d watches are open, want %d", got, n, n)
	}
	for _, cancel := range cancels {
		cancel()
	}
	waitFor(t, func() bool { return r.consumers(t) == 0 }, "every dropped watch's consumer to be deleted")
}

func mustLoad(t *testing.T, h *harness, id string) *table {
	t.Helper()
	tb, err := h.table.load(id)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestWatchTableBatchesInOrderOnce: a coup's events go to JetStream as
// one message per save (a TableEventBatch with its first event's id),
// published twice (a relay that starts again before its removals) and
// stored once each; WatchTable streams every event of them once, in
// sequence order, whole (table, operator, coup and time as stored), the
// same as the outbox holds.
func TestWatchTableBatchesInOrderOnce(t *testing.T) {
	r := newWatchRig(t)
	h := r.h
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	r.relay(t)
	snap := mustLoad(t, h, id).EventSeq
	ws, cancel := r.watch(t, id)
	defer cancel()

	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 300)
	h.mustBet(id, "carol", 700)
	if _, err := h.decide(id, "carol", true); err != nil {
		t.Fatal(err)
	}
	r.relay(t)
	r.relay(t) // the same ids again: dropped by JetStream

	var want []event
	for _, ev := range h.events(id) {
		if ev.GetSequence() > snap {
			want = append(want, ev)
		}
	}
	for i, w := range want {
		u, err := ws.Recv()
		if err != nil {
			t.Fatalf("after %d events: %v", i, err)
		}
		got := u.GetEvent()
		if w.GetCardDealt().GetCard().GetFaceDown() {
			// WatchTable gives a viewer who may see it the card itself
			// (personalEvent); the rest is as published.
			got.Payload = w.Payload
		}
		if !proto.Equal(got, w.TableEvent) {
			t.Fatalf("event %d streamed\n got %v\nwant %v", i, got, w.TableEvent)
		}
	}
	if !slices.ContainsFunc(want, func(e event) bool { return e.GetCoupSettled() != nil }) {
		t.Fatalf("the coup did not end: %v", want)
	}
	// Stored once each: as many messages as the table's saves, fewer
	// than its events.
	st, err := r.js.Stream(context.Background(), outbox.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter("chemmy.table."+id+".>"))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := outbox.Pending(h.table.db, 10000)
	if err != nil {
		t.Fatal(err)
	}
	batches := 0
	for _, m := range msgs {
		if m.Subject == tableevents.BatchSubject(id) {
			batches++
		}
	}
	last := want[len(want)-1].GetSequence()
	if n := info.State.Subjects[tableevents.BatchSubject(id)]; n != uint64(batches) || n >= last || len(info.State.Subjects) != 1 {
		t.Errorf("stream holds %v for the table, want %d batches of its %d events", info.State.Subjects, batches, last)
	}
}

// TestWatchTableGetsSavesBeforeTheStream: on the table-svc that saves the
// table, a watch gets each save's events as it commits, before the relay
// publishes them (here: never, until the end) and before the move is
// answered; once the stream has them too, the watch goes on with the next
// events, each once and in order. A watch whose feed misses a save (full,
// or opened on another table-svc) gets it from the stream.
func TestWatchTableGetsSavesBeforeTheStream(t *testing.T) {
	r := newWatchRig(t)
	h := r.h
	r.w.hub = h.table.hub
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	snap := mustLoad(t, h, id).EventSeq
	ws, cancel := r.watch(t, id) // nothing relayed: the snapshot holds it all
	defer cancel()
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 300)
	h.mustBet(id, "carol", 700)
	if _, err := h.decide(id, "carol", true); err != nil {
		t.Fatal(err)
	}
	var want []event
	for _, ev := range h.events(id) {
		if ev.GetSequence() > snap {
			want = append(want, ev)
		}
	}
	recv := func(w event) {
		t.Helper()
		u, err := ws.Recv()
		if err != nil {
			t.Fatalf("event %d: %v", w.GetSequence(), err)
		}
		got := u.GetEvent()
		if w.GetCardDealt().GetCard().GetFaceDown() {
			got.Payload = w.Payload // the viewer's own view of it
		}
		if !proto.Equal(got, w.TableEvent) {
			t.Fatalf("streamed\n got %v\nwant %v", got, w.TableEvent)
		}
	}
	for _, w := range want {
		recv(w) // none in the stream yet: from the saves
	}
	if info, err := r.js.Stream(context.Background(), outbox.StreamName); err != nil {
		t.Fatal(err)
	} else if st, err := info.Info(context.Background()); err != nil || st.State.Msgs != 0 {
		t.Fatalf("the stream holds %d messages before the relay (%v)", st.State.Msgs, err)
	}
	// Now the stream has them all (sent already: skipped); a save the
	// feed misses comes from the stream.
	r.relay(t)
	h.table.hub.mu.Lock()
	delete(h.table.hub.subs, id) // the watch's feed misses what follows
	h.table.hub.mu.Unlock()
	h.join(id, "dave")
	r.relay(t)
	evs := h.events(id)
	recv(evs[len(evs)-1])
	if evs[len(evs)-1].GetPlayerSeated().GetPlayerId() != "dave" || evs[len(evs)-1].GetSequence() != want[len(want)-1].GetSequence()+1 {
		t.Fatalf("last event %v", evs[len(evs)-1])
	}
}
