// Package outbox makes events durable with the state change that causes
// them, then publishes them to NATS JetStream.
//
// A service calls Put inside the bbolt transaction that changes its state;
// a Relay reads the outbox in order, publishes each message with its id as
// Nats-Msg-Id (JetStream deduplicates a message published twice after a
// crash) and deletes it once JetStream has acknowledged it. Events are
// therefore published at least once, in order, and deduplicated within the
// stream's duplicate window.
//
// Bucket "outbox": key = 8-byte big-endian sequence; value = uvarint
// length-prefixed subject, uvarint length-prefixed message id, payload.
package outbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"
)

// Bucket is the outbox's bucket name; pass it to store.Open.
var Bucket = []byte("outbox")

// StreamName is the JetStream stream that keeps every chemmy event
// (subjects "chemmy.>") for replay and audit.
const StreamName = "CHEMMY"

// Put appends a message to the outbox within tx.
func Put(tx *bolt.Tx, subject, msgID string, payload []byte) error {
	b := tx.Bucket(Bucket)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	v := binary.AppendUvarint(nil, uint64(len(subject)))
	v = append(v, subject...)
	v = binary.AppendUvarint(v, uint64(len(msgID)))
	v = append(v, msgID...)
	v = append(v, payload...)
	return b.Put(binary.BigEndian.AppendUint64(nil, seq), v)
}

// Message is one outbox entry.
type Message struct {
	Key     []byte
	Subject string
	ID      string
	Payload []byte
}

func decode(k, v []byte) (Message, error) {
	m := Message{Key: append([]byte(nil), k...)}
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
	var out []Message
	err := db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(Bucket).Cursor()
		for k, v := c.First(); k != nil && len(out) < max; k, v = c.Next() {
			m, err := decode(k, v)
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

// Connect dials NATS at url and keeps reconnecting for ever; with a
// non-empty nkeyFile it authenticates with the nkey seed in that file.
func Connect(url, name, nkeyFile string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true), nats.ReconnectWait(250 * time.Millisecond)}
	if nkeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(nkeyFile)
		if err != nil {
			return nil, fmt.Errorf("nats nkey: %w", err)
		}
		opts = append(opts, o)
	}
	return nats.Connect(url, opts...)
}

// EnsureStream creates or updates the CHEMMY stream (file storage,
// two-minute duplicate window).
func EnsureStream(ctx context.Context, js jetstream.JetStream) error {
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       StreamName,
		Subjects:   []string{"chemmy.>"},
		Storage:    jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	})
	return err
}

// Relay publishes a service's outbox to JetStream.
type Relay struct {
	db   *bolt.DB
	js   jetstream.JetStream
	log  *slog.Logger
	wake chan struct{}
}

// NewRelay returns a relay for db's outbox. js may be nil: events then
// stay in the outbox (durable) until a relay with a connection runs.
func NewRelay(db *bolt.DB, js jetstream.JetStream, log *slog.Logger) *Relay {
	return &Relay{db: db, js: js, log: log, wake: make(chan struct{}, 1)}
}

// Notify tells the relay that new messages are waiting. It never blocks.
func (r *Relay) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run publishes until ctx is done. It ensures the stream first, retrying.
func (r *Relay) Run(ctx context.Context) {
	if r.js == nil {
		r.log.Warn("no NATS: events are kept in the outbox, not published")
		return
	}
	ready := false
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if !ready {
			if err := EnsureStream(ctx, r.js); err != nil {
				r.log.Warn("jetstream stream not ready", "err", err)
			} else {
				ready = true
			}
		}
		if ready {
			if err := r.drain(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("outbox relay", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-tick.C:
		}
	}
}

// drain publishes everything pending, oldest first.
func (r *Relay) drain(ctx context.Context) error {
	for {
		msgs, err := Pending(r.db, 256)
		if err != nil || len(msgs) == 0 {
			return err
		}
		done := 0
		var pubErr error
		for _, m := range msgs {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, pubErr = r.js.Publish(pctx, m.Subject, m.Payload, jetstream.WithMsgID(m.ID))
			cancel()
			if pubErr != nil {
				break
			}
			done++
		}
		if done > 0 {
			if err := r.db.Update(func(tx *bolt.Tx) error {
				b := tx.Bucket(Bucket)
				for _, m := range msgs[:done] {
					if err := b.Delete(m.Key); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if pubErr != nil {
			return fmt.Errorf("publish: %w", pubErr)
		}
	}
}
