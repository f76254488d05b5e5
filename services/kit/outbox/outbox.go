// Package outbox makes events durable with the state change that causes
// them, then publishes them to NATS JetStream.
//
// A service calls Put inside the bbolt transaction that changes its state;
// a Relay reads the outbox in order, publishes each message with its id as
// Nats-Msg-Id (JetStream deduplicates a message published twice after a
// crash) and deletes it once JetStream has acknowledged it. Events are
// therefore published at least once and deduplicated within the stream's
// duplicate window.
//
// Order. The stream holds a service's events in the outbox's order, also
// across a NATS server or stream leader failure, when the stream allows
// atomic batch publish (allow_atomic, NATS 2.12 or later; the relay
// creates the stream so): the relay publishes up to 256 waiting events as
// one atomic batch, which JetStream stores whole and in order or not at
// all, so an event lost on the way (its server died) fails its batch and
// is never overtaken by the events after it; the relay publishes the
// batch again. A batch JetStream refuses because it holds an event stored
// already (a restart before the outbox removal, a retry of a batch that was
// stored) is published again one event at a time, each awaited, the
// stored ones acknowledged as duplicates; so are a single event and, on a
// stream of one replica in files (whose batches NATS stages on disk, at a
// cost), up to 32. On a stream without allow_atomic the relay publishes
// the events pipelined, in order, on one connection, and warns once at
// start: a failure of the server can then store a lost event after later
// ones (the operator sets allow_atomic, see CreateStream).
//
// Faults. Each call of the relay to JetStream waits at most its ack
// timeout (WithAckTimeout, 5 s by default) and goes through its
// interceptor when one is set (WithInterceptor): the simulation (cmd/sim)
// makes the calls fail, lose their acknowledgement, hang and be
// acknowledged too late, and checks that every event is stored once, in
// order, all the same.
//
// The stream CHEMMY is created by the first service whose relay finds it
// missing (CreateStream), with that service's StreamLimits (defaults: 7
// days, 1 GiB, 1 replica; the oldest events are discarded at a limit) and
// atomic batch publish allowed. Its relays judge how long it keeps events
// (Retention, the gauges chemmy_event_stream_retention_*). No service ever updates an existing
// stream: an operator's limits (nats stream edit CHEMMY) stay; a service
// whose settings differ logs a warning at start.
//
// Batches. A service that writes several events in one transaction may
// put them as one message (PutEvents; table-svc puts a save's table
// events as one chemmy.events.v1.TableEventBatch): the relay publishes it
// as one NATS message, and counts its events.
//
// Bucket "outbox": key = 8-byte big-endian sequence; value = uvarint
// length-prefixed subject, uvarint length-prefixed message id, payload;
// a message of PutEvents starts with a zero byte, the uvarint count of its
// events and its uvarint length-prefixed kinds.
package outbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/synadia-io/orbit.go/jetstreamext"
	bolt "go.etcd.io/bbolt"

	"github.com/chemmy/chemmy/services/kit/store"
)

// Bucket is the outbox's bucket name; pass it to store.Open.
var Bucket = []byte("outbox")

// StreamName is the JetStream stream that keeps every chemmy event
// (subjects "chemmy.>") for replay and audit.
const StreamName = "CHEMMY"

// Put appends a message of one event to the outbox within tx.
func Put(tx *bolt.Tx, subject, msgID string, payload []byte) error {
	return putMsg(tx, subject, msgID, 1, "", payload)
}

// PutEvents appends a message carrying events events (a batch written
// together, e.g. a chemmy.events.v1.TableEventBatch) to the outbox within
// tx: published as one NATS message with id msgID, its Chemmy-Event-Kinds
// header kinds (none when empty). events counts for the relay's
// chemmy_outbox_published_total (at least 1).
func PutEvents(tx *bolt.Tx, subject, msgID string, events int, kinds string, payload []byte) error {
	return putMsg(tx, subject, msgID, max(events, 1), kinds, payload)
}

func putMsg(tx *bolt.Tx, subject, msgID string, events int, kinds string, payload []byte) error {
	b := tx.Bucket(Bucket)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	v := make([]byte, 0, 8+len(kinds)+len(subject)+len(msgID)+len(payload))
	if events != 1 || kinds != "" {
		// A batch: a zero byte (no subject is empty), the count, the kinds.
		v = append(v, 0)
		v = binary.AppendUvarint(v, uint64(events))
		v = binary.AppendUvarint(v, uint64(len(kinds)))
		v = append(v, kinds...)
	}
	v = binary.AppendUvarint(v, uint64(len(subject)))
	v = append(v, subject...)
	v = binary.AppendUvarint(v, uint64(len(msgID)))
	v = append(v, msgID...)
	v = append(v, payload...)
	return b.Put(binary.BigEndian.AppendUint64(nil, seq), v)
}

// Message is one outbox entry: one NATS message.
type Message struct {
	Key     []byte
	Subject string
	ID      string
	Payload []byte
	// Events is the number of events in the message (1 but for a batch);
	// Kinds its Chemmy-Event-Kinds header (PutEvents), empty for none.
	Events int
	Kinds  string
}

func decode(k, v []byte) (Message, error) {
	m := Message{Key: append([]byte(nil), k...), Events: 1}
	if len(v) > 0 && v[0] == 0 {
		v = v[1:]
		n, w := binary.Uvarint(v)
		if w <= 0 {
			return m, errors.New("outbox: corrupt event count")
		}
		m.Events, v = int(n), v[w:]
		n, w = binary.Uvarint(v)
		if w <= 0 || uint64(len(v)-w) < n {
			return m, errors.New("outbox: corrupt kinds")
		}
		m.Kinds, v = string(v[w:w+int(n)]), v[w+int(n):]
	}
	n, w := binary.Uvarint(v)
	if w <= 0 || uint64(len(v)-w) < n {
		return m, errors.New("outbox: corrupt subject")
	}
	m.Subject, v = string(v[w:w+int(n)]), v[w+int(n):]
	n, w = binary.Uvarint(v)
	if w <= 0 || uint64(len(v)-w) < n {
		return m, errors.New("outbox: corrupt id")
	}
	m.ID, v = string(v[w:w+int(n)]), v[w+int(n):]
	m.Payload = append([]byte(nil), v...)
	return m, nil
}

// Pending returns up to max messages in order, oldest first.
func Pending(db *bolt.DB, max int) ([]Message, error) {
	out, _, err := pending(db, max, nil)
	return out, err
}

// pending is Pending of the messages after key after (nil: all) and the
// number of them in the outbox. The count costs nothing more than the
// read: the keys are consecutive sequence numbers (Put numbers them in
// committed transactions; the relay removes only the oldest), so when
// more than max are waiting it is the last key minus the first, plus one.
func pending(db *bolt.DB, max int, after []byte) (out []Message, n int, err error) {
	err = db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(Bucket).Cursor()
		first, v := c.First()
		if after != nil {
			first, v = c.Seek(after)
			if first != nil && bytes.Equal(first, after) {
				first, v = c.Next()
			}
		}
		for k := first; k != nil && len(out) < max; k, v = c.Next() {
			m, err := decode(k, v)
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		n = len(out)
		if last, _ := c.Last(); n == max && last != nil && len(first) == 8 && len(last) == 8 {
			n = int(binary.BigEndian.Uint64(last)-binary.BigEndian.Uint64(first)) + 1
		}
		return nil
	})
	return out, n, err
}

// Connect dials NATS at url and keeps reconnecting for ever; with a
// non-empty nkeyFile it authenticates with the nkey seed in that file.
// extra options follow (e.g. the user's inbox prefix).
func Connect(url, name, nkeyFile string, extra ...nats.Option) (*nats.Conn, error) {
	opts := append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true), nats.ReconnectWait(250 * time.Millisecond)}, extra...)
	if nkeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(nkeyFile)
		if err != nil {
			return nil, fmt.Errorf("nats nkey: %w", err)
		}
		opts = append(opts, o)
	}
	return nats.Connect(url, opts...)
}

// Defaults of StreamLimits.
const (
	DefaultStreamMaxAge = RetentionGoal // 7 days
	// DefaultStreamMaxBytes is 1 GiB: JetStream refuses to create a stream
	// whose max_bytes exceeds the server's max_file_store (4 GB in
	// deploy/k8s; 75% of the free disk for the embedded NATS), so the
	// default must fit a small server. Give more where there is room.
	DefaultStreamMaxBytes = 1 << 30
	DefaultStreamReplicas = 1
	// MinStreamMaxAge is the shortest positive MaxAge: JetStream refuses
	// an age below the duplicate window (two minutes; the stream is then
	// never created), and a stream that keeps less than an hour leaves a
	// watcher or consumer that was away a short while nothing to resume
	// from.
	MinStreamMaxAge = time.Hour
	// MinStreamMaxBytes is the smallest positive MaxBytes (4 MiB): a few
	// of the relay's batches (256 events) and more than NATS's largest
	// message (1 MiB by default); a smaller stream discards events as fast
	// as they come, or refuses them.
	MinStreamMaxBytes = 4 << 20
	// MaxStreamReplicas is the most replicas JetStream allows.
	MaxStreamReplicas = 5
	// streamDuplicates is the stream's duplicate window (Nats-Msg-Id).
	streamDuplicates = 2 * time.Minute
)

// StreamLimits are the limits a service gives the CHEMMY stream when it
// creates it. Zero fields take the defaults. When a limit is reached
// JetStream discards the oldest events (a replay or an audit then starts
// later; publishing never fails for it). Validate refuses limits below
// the minimums.
type StreamLimits struct {
	// MaxAge: events older than this are discarded; default
	// DefaultStreamMaxAge (7 days); negative: no age limit; at least
	// MinStreamMaxAge (1 hour) when positive.
	MaxAge time.Duration
	// MaxBytes: the stream's size in bytes; default DefaultStreamMaxBytes
	// (1 GiB); negative: no size limit; at least MinStreamMaxBytes (4 MiB)
	// when positive. It must fit the server's max_file_store, or the
	// stream is not created (the relay logs why and retries; events wait
	// in the outbox).
	MaxBytes int64
	// Replicas: copies in a JetStream cluster, 1..5; default (0) 1.
	Replicas int
}

// Validate returns an error naming the flag (-stream-max-age,
// -stream-max-bytes, -stream-replicas) of the first limit of l out of
// its range: MaxAge positive and below MinStreamMaxAge, MaxBytes
// positive and below MinStreamMaxBytes, Replicas negative or above
// MaxStreamReplicas. Zero (the default) and negative age or size (no
// limit) are valid. Every service checks its limits with it at start
// (app.Start, CreateStream, the flags of RegisterStreamFlags).
func (l StreamLimits) Validate() error {
	switch {
	case l.MaxAge > 0 && l.MaxAge < MinStreamMaxAge:
		return &LimitError{Flag: "stream-max-age", Value: l.MaxAge,
			Reason: fmt.Sprintf("at least %v when positive (0: the default %v, negative: no age limit)", MinStreamMaxAge, DefaultStreamMaxAge)}
	case l.MaxBytes > 0 && l.MaxBytes < MinStreamMaxBytes:
		return &LimitError{Flag: "stream-max-bytes", Value: l.MaxBytes,
			Reason: fmt.Sprintf("at least %d (4 MiB) when positive (0: the default %d, negative: no size limit)", MinStreamMaxBytes, DefaultStreamMaxBytes)}
	case l.Replicas < 0 || l.Replicas > MaxStreamReplicas:
		return &LimitError{Flag: "stream-replicas", Value: l.Replicas,
			Reason: fmt.Sprintf("1..%d (0: the default %d)", MaxStreamReplicas, DefaultStreamReplicas)}
	}
	return nil
}

// LimitError is a stream limit out of its range (StreamLimits.Validate).
type LimitError struct {
	// Flag sets the limit, without its dash: "stream-max-age".
	Flag string
	// Value is the limit given.
	Value any
	// Reason says the range.
	Reason string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("-%s %v: %s", e.Flag, e.Value, e.Reason)
}

// WithDefaults fills the zero fields of l.
func (l StreamLimits) WithDefaults() StreamLimits {
	if l.MaxAge == 0 {
		l.MaxAge = DefaultStreamMaxAge
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultStreamMaxBytes
	}
	if l.Replicas <= 0 {
		l.Replicas = DefaultStreamReplicas
	}
	return l
}

// Config is the CHEMMY stream configuration with these limits: subjects
// "chemmy.>", file storage, a two-minute duplicate window, the oldest
// events discarded at a limit, atomic batch publish allowed (the relay
// keeps the events in order with it, see the package doc).
func (l StreamLimits) Config() jetstream.StreamConfig {
	l = l.WithDefaults()
	c := jetstream.StreamConfig{
		Name:               StreamName,
		Subjects:           []string{"chemmy.>"},
		Storage:            jetstream.FileStorage,
		Duplicates:         streamDuplicates,
		Discard:            jetstream.DiscardOld,
		MaxAge:             max(l.MaxAge, 0),
		MaxBytes:           l.MaxBytes,
		Replicas:           l.Replicas,
		AllowAtomicPublish: true,
	}
	if l.MaxBytes < 0 {
		c.MaxBytes = -1
	}
	return c
}

// EnsureStream makes sure the CHEMMY stream exists: it creates it with
// the default limits (StreamLimits{}) when it does not, and never changes
// an existing one. Unlike CreateStream it logs nothing when the stream's
// limits differ from the defaults (it runs on every WatchTable; the relay
// warns once at start).
func EnsureStream(ctx context.Context, js jetstream.JetStream) error {
	return CreateStream(ctx, js, StreamLimits{}, slog.New(slog.DiscardHandler))
}

// CreateStream creates the CHEMMY stream with limits l when it does not
// exist. An existing stream is left exactly as it is (an operator may have
// set other limits): when its configuration differs from what this
// service would create, CreateStream logs a warning naming the
// differences to log (nil: slog.Default()) and returns nil. Limits that
// Validate refuses: its *LimitError, nothing created or looked at.
//
// A stream created before atomic batch publish was allowed (allow_atomic
// false) keeps its events in order only while no NATS server fails (see
// the package doc); an operator allows it with a NATS user permitted
// $JS.API.STREAM.UPDATE.CHEMMY (nats stream edit CHEMMY, setting
// allow_atomic to true in the configuration it edits) and then restarts
// the services, whose relays read the setting at start.
func CreateStream(ctx context.Context, js jetstream.JetStream, l StreamLimits, log *slog.Logger) error {
	_, err := createStream(ctx, js, l, log)
	return err
}

// createStream is CreateStream returning the stream's configuration as
// it is.
func createStream(ctx context.Context, js jetstream.JetStream, l StreamLimits, log *slog.Logger) (jetstream.StreamConfig, error) {
	if err := l.Validate(); err != nil {
		return jetstream.StreamConfig{}, err
	}
	want := l.Config()
	st, err := js.Stream(ctx, StreamName)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = js.CreateStream(ctx, want)
		if err == nil {
			return st.CachedInfo().Config, nil
		}
		if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return jetstream.StreamConfig{}, err
		}
		st, err = js.Stream(ctx, StreamName) // another service created it meanwhile
	}
	if err != nil {
		return jetstream.StreamConfig{}, err
	}
	got := st.CachedInfo().Config
	if diff := streamDiff(got, want); len(diff) > 0 {
		if log == nil {
			log = slog.Default()
		}
		log.Warn("the event stream exists with another configuration than this service's; left as it is",
			"stream", StreamName, "differences", diff)
	}
	return got, nil
}

// CreateStreamAt connects to the NATS at url as name (with the nkey seed
// in nkeyFile, when not empty), runs CreateStream with l and
// disconnects, waiting at most timeout. A launcher calls it before
// starting the services so that the stream gets its limits, not those of
// whichever service would create it first.
func CreateStreamAt(ctx context.Context, url, name, nkeyFile string, l StreamLimits, timeout time.Duration, log *slog.Logger, extra ...nats.Option) error {
	nc, err := Connect(url, name, nkeyFile, extra...)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return CreateStream(ctx, js, l, log)
}

// streamDiff lists the settings of got that differ from want, as
// "name: got (want w)".
func streamDiff(got, want jetstream.StreamConfig) []string {
	var out []string
	diff := func(name string, g, w any) {
		if fmt.Sprint(g) != fmt.Sprint(w) {
			out = append(out, fmt.Sprintf("%s: %v (this service: %v)", name, g, w))
		}
	}
	diff("subjects", got.Subjects, want.Subjects)
	diff("storage", got.Storage, want.Storage)
	diff("duplicates", got.Duplicates, want.Duplicates)
	diff("discard", got.Discard, want.Discard)
	diff("max_age", got.MaxAge, want.MaxAge)
	diff("max_bytes", got.MaxBytes, want.MaxBytes)
	diff("replicas", max(got.Replicas, 1), want.Replicas)
	diff("allow_atomic", got.AllowAtomicPublish, want.AllowAtomicPublish)
	return out
}

// Relay publishes a service's outbox to JetStream.
type Relay struct {
	db     *bolt.DB
	js     jetstream.JetStream
	log    *slog.Logger
	wake   chan struct{}
	limits StreamLimits
	// published, when set, is asked about the messages that were in the
	// outbox when Run started (see WithPublishedCheck); suspectTo is the
	// last of their keys.
	published PublishedCheck
	suspectTo []byte
	// removing is the last key published whose removal from the outbox
	// rides on the service's next commit (store.Committer.Ride): the
	// relay reads after it.
	removing []byte
	// atomic: the stream allows atomic batch publish (read when the
	// stream is ready); windows of more than eachMax messages are
	// published as one batch, smaller ones one message at a time (1, or
	// smallWindow on a stream that stages batches on disk). batchMax is
	// the most messages read for one window: window, halved each time
	// JetStream refuses a batch as too large (its max_batch_size set
	// below it).
	atomic   bool
	eachMax  int
	batchMax int
	// ackTimeout bounds each call to JetStream (WithAckTimeout);
	// intercept, when set, wraps each (WithInterceptor).
	ackTimeout time.Duration
	intercept  Interceptor

	// Counted for Register's metrics.
	backlog   atomic.Int64  // messages in the outbox at the last drain
	sent      atomic.Uint64 // events published and removed
	sentMsgs  atomic.Uint64 // messages (NATS messages) published and removed
	pubErrors atomic.Uint64 // failed attempts to publish
	ret       retention     // the stream's retention (watchRetention)

	// For Health: how long events may wait (WithStallAfter), the clock,
	// and, under hmu, when the relay last made progress (published, or
	// found nothing to publish) and since when every attempt has failed
	// (zero: the last one did not), with the last error.
	stallAfter time.Duration
	now        func() time.Time
	hmu        sync.Mutex
	progress   time.Time
	failSince  time.Time
	lastErr    error
}

// DefaultStallAfter is how long the relay may go without publishing
// while events wait, or keep failing, before Health reports it: 30 s.
const DefaultStallAfter = 30 * time.Second

// WithStallAfter sets how long the relay may go without publishing while
// events wait in the outbox, or keep failing, before Health reports it
// (0: DefaultStallAfter); call it before Run.
func (r *Relay) WithStallAfter(d time.Duration) *Relay {
	if d <= 0 {
		d = DefaultStallAfter
	}
	r.stallAfter = d
	return r
}

// Health is nil while the relay does its job, else why it does not: for
// the service's readiness (/readyz). The relay is unhealthy when events
// wait in the outbox and it has published none, nor found the outbox
// drained, for longer than the stall time (NATS or JetStream down or
// refusing, the relay stuck), or when every attempt to publish (or to
// make sure of the stream) has failed for that long. Without NATS (no
// JetStream given: events kept in the outbox on purpose) it is nil.
func (r *Relay) Health() error {
	if r.js == nil {
		return nil
	}
	_, n, err := pending(r.db, 1, nil)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	now := r.now()
	r.hmu.Lock()
	progress, failSince, lastErr := r.progress, r.failSince, r.lastErr
	r.hmu.Unlock()
	stalled := n > 0 && now.Sub(progress) > r.stallAfter
	failing := !failSince.IsZero() && now.Sub(failSince) > r.stallAfter
	if !stalled && !failing {
		return nil
	}
	msg := fmt.Sprintf("events are not published: %d waiting in the outbox", n)
	if n > 0 {
		msg += fmt.Sprintf(", none published for %s", roundAgo(now.Sub(progress)))
	}
	if lastErr != nil {
		msg += fmt.Sprintf("; every attempt has failed for %s: %v", roundAgo(now.Sub(failSince)), lastErr)
	}
	return errors.New(msg)
}

// roundAgo rounds a duration for a message: to the millisecond below
// 10 s, to the second above.
func roundAgo(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// madeProgress notes that the relay published, or found nothing to.
func (r *Relay) madeProgress() {
	now := r.now()
	r.hmu.Lock()
	r.progress, r.failSince, r.lastErr = now, time.Time{}, nil
	r.hmu.Unlock()
}

// failed notes a failed attempt; succeeded an attempt that did not fail.
func (r *Relay) failed(err error) {
	now := r.now()
	r.hmu.Lock()
	if r.failSince.IsZero() {
		r.failSince = now
	}
	r.lastErr = err
	r.hmu.Unlock()
}

func (r *Relay) succeeded() {
	r.hmu.Lock()
	r.failSince, r.lastErr = time.Time{}, nil
	r.hmu.Unlock()
}

// Register registers the relay's metrics on reg, labelled db (the base
// name of the outbox's bbolt file without ".db": "table", "shoe",
// "wallet", as kit/store's counters): chemmy_outbox_backlog (events
// stored and not yet published, as of the relay's last pass),
// chemmy_outbox_published_total (events), chemmy_outbox_messages_total
// (the NATS messages that carried them: a batch is one) and
// chemmy_outbox_publish_errors_total.
// Each service registers its relay on its own registry (a second relay of
// the same file on one registry is refused).
func (r *Relay) Register(reg prometheus.Registerer) error {
	l := prometheus.Labels{"db": strings.TrimSuffix(filepath.Base(r.db.Path()), ".db")}
	for _, c := range append([]prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "chemmy_outbox_backlog", ConstLabels: l,
			Help: "Messages (an event, or a batch of events written together) stored in the outbox and not yet published, as of the relay's last pass."},
			func() float64 { return float64(r.backlog.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "chemmy_outbox_published_total", ConstLabels: l,
			Help: "Events the outbox relay published (acknowledged by JetStream) and removed from the outbox."},
			func() float64 { return float64(r.sent.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "chemmy_outbox_messages_total", ConstLabels: l,
			Help: "NATS messages the outbox relay published (acknowledged by JetStream) and removed from the outbox; a batch of events is one."},
			func() float64 { return float64(r.sentMsgs.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "chemmy_outbox_publish_errors_total", ConstLabels: l,
			Help: "Failed attempts of the outbox relay to publish (stream unavailable, no acknowledgement, outbox write); each is retried."},
			func() float64 { return float64(r.pubErrors.Load()) }),
	}, r.retentionCollectors(l)...) {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("outbox metrics: %w", err)
		}
	}
	return nil
}

// count sets the backlog from the outbox (no NATS, or the stream not
// ready: nothing is drained).
func (r *Relay) count() {
	if _, n, err := pending(r.db, 1, r.removing); err == nil {
		r.backlog.Store(int64(n))
	}
}

// PublishedCheck reports whether m was published already. A message in
// the outbox when the relay starts may have been published by the
// previous run just before it died, with its removal from the outbox lost;
// JetStream drops such a repeat only within its duplicate window, so after
// a longer outage the service must tell (e.g. from the last event of the
// entity in the stream).
type PublishedCheck func(ctx context.Context, js jetstream.JetStream, m Message) (bool, error)

// WithPublishedCheck sets the check of the messages found in the outbox
// at start; call it before Run. Without one they are published again and
// JetStream's duplicate window is relied on.
func (r *Relay) WithPublishedCheck(f PublishedCheck) *Relay {
	r.published = f
	return r
}

// WithStreamLimits sets the limits the relay creates the stream with when
// it does not exist (default: StreamLimits{}); call it before Run.
func (r *Relay) WithStreamLimits(l StreamLimits) *Relay {
	r.limits = l
	return r
}

// WithAckTimeout sets how long the relay waits for JetStream's answer to
// each of its calls (the stream made sure of, a message published and
// acknowledged, a window's acknowledgements); 0: DefaultAckTimeout (5 s).
// Call it before Run. The simulation (cmd/sim) shortens it, so that a
// call that hangs costs it little time.
func (r *Relay) WithAckTimeout(d time.Duration) *Relay {
	if d <= 0 {
		d = DefaultAckTimeout
	}
	r.ackTimeout = d
	return r
}

// Calls of the relay to JetStream, as an Interceptor sees them (Call.Kind).
const (
	// CallStream makes sure the stream exists and reads its settings (at
	// start, and again after a failure).
	CallStream = "stream"
	// CallCheck asks the PublishedCheck whether one message found in the
	// outbox at start, or left unacknowledged by a failed call, is in the
	// stream already.
	CallCheck = "check"
	// CallPublish publishes one message and awaits its acknowledgement.
	CallPublish = "publish"
	// CallBatch publishes the messages as one atomic batch.
	CallBatch = "batch"
	// CallPipelined sends the messages at once and awaits their
	// acknowledgements (a stream without atomic batch publish).
	CallPipelined = "pipelined"
)

// Call is one call of the relay to JetStream.
type Call struct {
	// Kind is CallStream, CallCheck, CallPublish, CallBatch or
	// CallPipelined.
	Kind string
	// Messages are those the call publishes or checks, in the outbox's
	// order (none for CallStream).
	Messages []Message
}

// Interceptor wraps each call of the relay to JetStream; invoke makes the
// call. It may fail the call without making it (return an error, not
// calling invoke: JetStream refused, NATS unreachable); make it and fail
// it all the same (call invoke, return an error of its own: the
// messages may be stored, their acknowledgement lost); hang (wait for ctx,
// which carries the relay's ack timeout, to end, and return its error,
// after or without calling invoke); or return invoke's own answer. It
// returns nil only when invoke returned nil. The relay must publish every
// message, once each and in order, whatever its interceptor does; the
// simulation (cmd/sim) makes its calls fail, hang and time out so.
type Interceptor func(ctx context.Context, c Call, invoke func(ctx context.Context) error) error

// WithInterceptor sets the interceptor of the relay's calls to JetStream
// (nil: none); call it before Run.
func (r *Relay) WithInterceptor(i Interceptor) *Relay {
	r.intercept = i
	return r
}

// call makes one call of the relay to JetStream, through its interceptor.
func (r *Relay) call(ctx context.Context, kind string, msgs []Message, invoke func(ctx context.Context) error) error {
	if r.intercept == nil {
		return invoke(ctx)
	}
	return r.intercept(ctx, Call{Kind: kind, Messages: msgs}, invoke)
}

// NewRelay returns a relay for db's outbox. js may be nil: events then
// stay in the outbox (durable) until a relay with a connection runs.
func NewRelay(db *bolt.DB, js jetstream.JetStream, log *slog.Logger) *Relay {
	return &Relay{db: db, js: js, log: log, wake: make(chan struct{}, 1), eachMax: 1, batchMax: window,
		ackTimeout: DefaultAckTimeout, stallAfter: DefaultStallAfter, now: time.Now, progress: time.Now()}
}

// Notify tells the relay that new messages are waiting. It never blocks.
func (r *Relay) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run publishes until ctx is done. It first makes sure the stream exists
// (CreateStream with the relay's limits; an existing one is never
// changed), retrying, and reads whether it allows atomic batch publish:
// when it does not, Run warns once that the events are kept in order only
// while no NATS server fails, and how an operator allows it.
func (r *Relay) Run(ctx context.Context) {
	if r.js == nil {
		r.log.Warn("no NATS: events are kept in the outbox, not published")
		r.count()
		return
	}
	if r.published != nil {
		if err := r.db.View(func(tx *bolt.Tx) error {
			if k, _ := tx.Bucket(Bucket).Cursor().Last(); k != nil {
				r.suspectTo = append([]byte(nil), k...)
			}
			return nil
		}); err != nil {
			r.log.Warn("outbox", "err", err)
		}
	}
	ready := false
	watching := make(chan struct{})
	defer func() {
		if ready {
			<-watching
		}
	}()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	r.hmu.Lock()
	r.progress = r.now() // a backlog found at start has its stall time
	r.hmu.Unlock()
	for {
		if !ready {
			if err := r.ready(ctx); err != nil {
				r.log.Warn("jetstream stream not ready", "err", err)
				if ctx.Err() == nil {
					r.pubErrors.Add(1)
					r.failed(fmt.Errorf("stream %s: %w", StreamName, err))
				}
				r.count()
			} else {
				ready = true
				r.succeeded()
				go func() { r.watchRetention(ctx); close(watching) }()
			}
		}
		if ready {
			if err := r.drain(ctx); err != nil && ctx.Err() == nil {
				r.pubErrors.Add(1)
				r.failed(err)
				r.log.Warn("outbox relay", "err", err)
			} else if err == nil {
				r.succeeded()
			}
		}
		select {
		case <-ctx.Done():
			r.flush()
			return
		case <-r.wake:
		case <-tick.C:
			// No write came to carry the removals: they commit alone.
			r.flush()
		}
	}
}

// ready makes sure the stream exists and reads whether it allows atomic
// batch publish, warning when it does not; it waits at most the ack
// timeout.
func (r *Relay) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.ackTimeout)
	defer cancel()
	var c jetstream.StreamConfig
	err := r.call(ctx, CallStream, nil, func(ctx context.Context) error {
		var err error
		c, err = createStream(ctx, r.js, r.limits, r.log)
		return err
	})
	if err != nil {
		return err
	}
	r.atomic = c.AllowAtomicPublish
	r.eachMax = 1
	if c.Replicas <= 1 && c.Storage == jetstream.FileStorage {
		r.eachMax = smallWindow
	}
	if !r.atomic {
		r.warnUnordered("the stream does not allow atomic batch publish (allow_atomic false)")
	}
	return nil
}

// flush commits the removals of published messages still riding.
func (r *Relay) flush() {
	if err := store.CommitterFor(r.db).Flush(); err != nil {
		r.log.Warn("outbox: removal of published messages", "err", err)
	}
}

// window is the most messages the relay reads from the outbox, publishes
// at once (one atomic batch, or pipelined) and removes in one write
// transaction. JetStream's limits on atomic batches (nats-server
// jetstream { limits { batch { ... } } }) allow it by default: at most
// 1000 messages a batch (max_msgs; a server set below 256 has the relay
// halve its windows), 50 batches open at once on a stream (each relay has
// one open at a time), 10 s from one message of a batch to the next
// (timeout; a window is written at once, its ack awaited the relay's ack
// timeout, DefaultAckTimeout unless set).
const window = 256

// smallWindow is the most messages the relay publishes one at a time,
// each awaited (in order, as a batch would be), rather than as an atomic
// batch, on a stream of one replica in files: NATS stages such a stream's
// batch in a file store of its own, created, synced and removed for each
// batch, which costs some 2.5 ms of CPU (nats-server 2.15, measured
// embedded), far more than a few single publishes. A replicated stream
// stages batches in memory: there every window of more than one message
// is a batch.
const smallWindow = 32

// DefaultAckTimeout bounds the wait for JetStream's answer to each call of
// the relay (WithAckTimeout): a message's acknowledgement, a window's.
const DefaultAckTimeout = 5 * time.Second

// drain publishes everything pending, oldest first, a window of up to
// window messages at a time (see publish). The acknowledged prefix's
// removal from the outbox rides on the service's next commit
// (store.Committer.Ride: no commit of its own; the relay's tick commits
// it when no write comes within it). A message acknowledged and not yet
// removed when the service dies is published again at start, as one
// whose removal was lost: JetStream drops it by its id (or the
// PublishedCheck finds it). It leaves the backlog counted.
func (r *Relay) drain(ctx context.Context) error {
	for {
		msgs, n, err := pending(r.db, r.batchMax, r.removing)
		if err != nil {
			return err
		}
		r.backlog.Store(int64(n))
		if len(msgs) == 0 {
			r.madeProgress()
			return nil
		}
		done, pubErr := r.publish(ctx, msgs)
		if done > 0 {
			r.madeProgress()
			keys := make([][]byte, done)
			for i, m := range msgs[:done] {
				keys[i] = m.Key
			}
			store.CommitterFor(r.db).Ride(func(tx *bolt.Tx) error {
				b := tx.Bucket(Bucket)
				for _, k := range keys {
					if err := b.Delete(k); err != nil {
						return err
					}
				}
				return nil
			})
			r.removing = keys[done-1]
			events := 0
			for _, m := range msgs[:done] {
				events += m.Events
			}
			r.sent.Add(uint64(events))
			r.sentMsgs.Add(uint64(done))
			r.backlog.Add(-int64(done))
		}
		if pubErr != nil {
			if r.published != nil {
				// The unacknowledged may have been stored all the same: the
				// next try checks them too (past the duplicate window a
				// long outage would otherwise store them twice).
				if last := msgs[len(msgs)-1].Key; bytes.Compare(last, r.suspectTo) > 0 {
					r.suspectTo = append([]byte(nil), last...)
				}
			}
			return fmt.Errorf("publish: %w", pubErr)
		}
	}
}

func (r *Relay) natsMsg(m Message) *nats.Msg {
	return &nats.Msg{Subject: m.Subject, Data: m.Payload, Header: m.Headers()}
}

// publish publishes msgs in order and returns how many of them, from the
// first, JetStream acknowledged. The messages that were in the outbox at
// start are checked (WithPublishedCheck) and published one at a time.
// When the stream allows atomic batch publish, the others are published
// one at a time when they are few (eachMax), else as one atomic batch
// (publishBatch): all are stored, in order, or none; a batch refused for
// a duplicate or its size is published one at a time. Otherwise they are
// all sent at once and their acknowledgements awaited
// (publishPipelined). A message unacknowledged stays in the outbox and is
// published again with its id, as are those after it.
func (r *Relay) publish(ctx context.Context, msgs []Message) (int, error) {
	i := 0
	for ; i < len(msgs) && r.suspectTo != nil && bytes.Compare(msgs[i].Key, r.suspectTo) <= 0; i++ {
		if err := r.publishOne(ctx, msgs[i], true); err != nil {
			return i, err
		}
	}
	rest := msgs[i:]
	if len(rest) == 0 {
		return i, nil
	}
	if r.atomic && len(rest) <= r.eachMax {
		n, err := r.publishEach(ctx, rest)
		return i + n, err
	}
	if r.atomic {
		err := r.publishBatch(ctx, rest)
		var apiErr *jetstream.APIError
		if !errors.As(err, &apiErr) {
			if err != nil {
				return i, err
			}
			return len(msgs), nil
		}
		switch apiErr.ErrorCode {
		case jetstreamext.JSErrCodeBatchPublishDuplicateMsgID:
			// Some of them are stored already: one at a time, in order,
			// JetStream acknowledging those as duplicates.
			n, err := r.publishEach(ctx, rest)
			return i + n, err
		case jetstreamext.JSErrCodeBatchPublishExceedsLimit:
			r.batchMax = max(r.batchMax/2, 1)
			r.log.Warn("JetStream refuses atomic batches this large (its max_batch_size); the outbox relay publishes smaller ones",
				"stream", StreamName, "window", r.batchMax, "err", apiErr)
			n, err := r.publishEach(ctx, rest)
			return i + n, err
		case jetstreamext.JSErrCodeBatchPublishNotEnabled, jetstreamext.JSErrCodeBatchPublishUnsupportedHeader:
			// An operator disabled it since the relay started.
			r.atomic = false
			r.warnUnordered(apiErr.Error())
		default:
			return i, err
		}
	}
	n, err := r.publishPipelined(ctx, rest)
	return i + n, err
}

// warnUnordered logs that the relay publishes pipelined for reason, what
// the stream then no longer guarantees, and how an operator changes it.
func (r *Relay) warnUnordered(reason string) {
	r.log.Warn("the outbox relay publishes events pipelined, not as atomic batches: after a NATS server or stream leader failure an event lost on the way may be stored after later ones; "+
		"to keep them in order an operator sets allow_atomic on the stream (nats stream edit "+StreamName+", as a NATS user allowed $JS.API.STREAM.UPDATE."+StreamName+") and restarts the services",
		"stream", StreamName, "reason", reason)
}

// publishOne publishes m and awaits its acknowledgement (a duplicate's
// too); with check, only when the PublishedCheck does not find it
// published.
func (r *Relay) publishOne(ctx context.Context, m Message, check bool) error {
	ctx, cancel := context.WithTimeout(ctx, r.ackTimeout)
	defer cancel()
	if check {
		var seen bool
		err := r.call(ctx, CallCheck, []Message{m}, func(ctx context.Context) error {
			var err error
			seen, err = r.published(ctx, r.js, m)
			return err
		})
		if err != nil || seen {
			return err
		}
	}
	return r.call(ctx, CallPublish, []Message{m}, func(ctx context.Context) error {
		_, err := r.js.PublishMsg(ctx, r.natsMsg(m), jetstream.WithMsgID(m.ID))
		return err
	})
}

// publishEach publishes msgs one at a time, each awaited, and returns how
// many JetStream acknowledged.
func (r *Relay) publishEach(ctx context.Context, msgs []Message) (int, error) {
	for i, m := range msgs {
		if err := r.publishOne(ctx, m, false); err != nil {
			return i, err
		}
	}
	return len(msgs), nil
}

// publishBatch publishes msgs as one atomic batch (headers Nats-Batch-Id,
// Nats-Batch-Sequence, and Nats-Batch-Commit on the last, set by
// jetstreamext) without awaiting any message but the last: JetStream
// answers the commit with the batch's acknowledgement, or refuses the
// whole batch (a message lost on the way leaves a gap in its sequence; a
// message stored already is a duplicate) and stores none of it. A batch
// once begun is finished even when ctx ends (the relay stopping), within
// ackTimeout: one cut off before its commit would stay open in NATS until
// its batch timeout (and, at a shutdown, on its disk).
func (r *Relay) publishBatch(ctx context.Context, msgs []Message) error {
	batch := make([]*nats.Msg, len(msgs))
	for i, m := range msgs {
		batch[i] = r.natsMsg(m)
		batch[i].Header.Set(jetstream.MsgIDHeader, m.ID)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.ackTimeout)
	defer cancel()
	return r.call(ctx, CallBatch, msgs, func(ctx context.Context) error {
		_, err := jetstreamext.PublishMsgBatch(ctx, r.js, batch, jetstreamext.BatchFlowControl{})
		return err
	})
}

// publishPipelined sends msgs at once, in order on one connection, then
// awaits their acknowledgements (one round trip for all) and returns how
// many of them, from the first, JetStream acknowledged. Those after an
// unacknowledged one may be stored before it, when it is published again.
// Through an interceptor that fails the call, none is acknowledged.
func (r *Relay) publishPipelined(ctx context.Context, msgs []Message) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, r.ackTimeout)
	defer cancel()
	var n int
	var sent error
	err := r.call(ctx, CallPipelined, msgs, func(ctx context.Context) error {
		n, sent = r.sendPipelined(ctx, msgs)
		return sent
	})
	if err != sent {
		return 0, err
	}
	return n, err
}

// sendPipelined is publishPipelined's call, waiting until ctx ends.
func (r *Relay) sendPipelined(ctx context.Context, msgs []Message) (int, error) {
	futures := make([]jetstream.PubAckFuture, 0, len(msgs))
	var sendErr error
	for _, m := range msgs {
		f, err := r.js.PublishMsgAsync(r.natsMsg(m), jetstream.WithMsgID(m.ID))
		if err != nil {
			sendErr = err
			break
		}
		futures = append(futures, f)
	}
	for j, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return j, err
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return j, fmt.Errorf("no acknowledgement within %s", r.ackTimeout)
			}
			return j, ctx.Err()
		}
	}
	return len(futures), sendErr
}
