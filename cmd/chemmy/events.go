package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1" // the event types, by name too
	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/table-svc/tableevents"
	"github.com/chemmy/chemmy/wallet-svc/walletevents"
)

// eventsOptions are `chemmy events`'s flags.
type eventsOptions struct {
	url, nkey, table, subject string
	// operator: only the table and wallet events of this operator (their
	// operator_id; an event recorded before events had one is the
	// default operator's, "operator").
	operator    string
	all, follow bool
	max         int
	wait        time.Duration
}

// eventsFlags parses `chemmy events`'s args.
func eventsFlags(args []string, out io.Writer) (eventsOptions, error) {
	fs := flag.NewFlagSet("chemmy events", flag.ContinueOnError)
	fs.SetOutput(out)
	var o eventsOptions
	fs.StringVar(&o.url, "nats-url", "nats://127.0.0.1:4222", "NATS with the CHEMMY stream")
	fs.StringVar(&o.nkey, "nkey", filepath.Join(".chemmy", "nats-keys", "reader.nk"), "nkey seed file of a user who may read the stream (make run writes the read-only reader's); empty: none")
	fs.StringVar(&o.table, "table", "", "only this table's events (chemmy.table.ID.>)")
	fs.StringVar(&o.operator, "operator", "", "only the table and wallet events of this operator (their operator_id; the default operator is 'operator'); empty: every event")
	fs.StringVar(&o.subject, "subject", "chemmy.>", "subject filter, when -table is not given (e.g. 'chemmy.wallet.>')")
	fs.BoolVar(&o.follow, "follow", false, "after the events stored, wait for new ones and print them as they come, until Ctrl-C (or -n, -wait)")
	fs.BoolVar(&o.all, "all", false, "with -follow: from the start of the stream, not only new events (without -follow the stored events are printed from the start anyway)")
	fs.IntVar(&o.max, "n", 0, "stop after this many events; 0: no limit")
	fs.DurationVar(&o.wait, "wait", 0, "with -follow: stop when no event comes for this long; 0: wait for ever")
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: chemmy events [flags]   chemmy's events stored in the stream as JSON lines, then (-follow) the new ones")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return o, errors.New("unexpected arguments")
	}
	return o, nil
}

// runEvents prints the events of the CHEMMY stream, each as one line of
// JSON: {"subject","type","kind","streamSequence","time","event":{...}};
// a batch (docs/events.md) as one line per event, each as if published
// alone (subject "chemmy.table.<table_id>.<kind>", type
// chemmy.events.v1.TableEvent), with the batch's stream sequence.
// Without -follow it returns once it has printed those stored when it
// started; with -follow it goes on with the new ones.
func runEvents(args []string) int {
	o, err := eventsFlags(args, os.Stderr)
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := followEvents(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chemmy events:", err)
		return 1
	}
	return 0
}

// endWait is how long, without -follow, a fetch waits for a stored
// event the consumer still counts as pending (one removed meanwhile by
// the stream's limits never comes).
const endWait = 2 * time.Second

func followEvents(ctx context.Context, o eventsOptions, w io.Writer) error {
	// The reader's own inbox: it may read no other replies.
	opts := []nats.Option{nats.Name("chemmy-events"), nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.Reader))}
	if o.nkey != "" {
		if _, err := os.Stat(o.nkey); err == nil {
			opt, err := nats.NkeyOptionFromSeed(o.nkey)
			if err != nil {
				return err
			}
			opts = append(opts, opt)
		} else if o.nkey != filepath.Join(".chemmy", "nats-keys", "reader.nk") {
			return fmt.Errorf("-nkey: %w", err)
		}
	}
	nc, err := nats.Connect(o.url, opts...)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	filter := o.subject
	if o.table != "" {
		filter = "chemmy.table." + o.table + ".>"
	}
	// An ephemeral pull consumer that acknowledges nothing: the server
	// removes it once idle (InactiveThreshold). Not nats.go's ordered
	// consumer, which deletes and recreates its consumers, something the
	// read-only reader may not do (NATS logs each refusal).
	cfg := jetstream.ConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: 30 * time.Second}
	if o.follow && !o.all {
		cfg.DeliverPolicy = jetstream.DeliverNewPolicy
	}
	cons, err := js.CreateConsumer(ctx, outbox.StreamName, cfg)
	if err != nil {
		return fmt.Errorf("stream %s: %w", outbox.StreamName, err)
	}
	// Without -follow: the events stored when the consumer was made, and
	// no more (those published meanwhile come after them).
	stored := cons.CachedInfo().NumPending
	wait := o.wait
	if !o.follow {
		if stored == 0 {
			return nil
		}
		wait = endWait
	}
	enc := json.NewEncoder(w)
	read := 0 // messages read, printed or not (-operator)
	for n := 0; o.max == 0 || n < o.max; read++ {
		if !o.follow && uint64(read) >= stored {
			return nil
		}
		var nopts []jetstream.FetchOpt
		if wait > 0 {
			nopts = append(nopts, jetstream.FetchMaxWait(wait))
		}
		msg, err := next(ctx, cons, wait, nopts)
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, errQuiet) {
				return nil
			}
			return err
		}
		// A batch is printed as its events, one line each (docs/events.md).
		for _, e := range messageEvents(msg) {
			if o.max > 0 && n >= o.max {
				break
			}
			if !ofOperator(e.msg, o.operator) {
				continue
			}
			if err := enc.Encode(e.printed); err != nil {
				return err
			}
			n++
		}
		if md, err := msg.Metadata(); !o.follow && err == nil && md.NumPending == 0 {
			return nil // the end of the stream as it stands
		}
	}
	return nil
}

var errQuiet = errors.New("no event for -wait")

// defaultOperator is the operator of a table event that names none (one
// recorded before events had an operator_id).
const defaultOperator = "operator"

// ofOperator reports whether an event is to be printed with -operator
// op: any when op is empty, else only a table or wallet event of
// operator op (ev nil: a message that is neither, or undecodable).
func ofOperator(ev proto.Message, op string) bool {
	if op == "" {
		return true
	}
	var got string
	switch e := ev.(type) {
	case *eventsv1.TableEvent:
		got = e.GetOperatorId()
	case *eventsv1.WalletEvent:
		got = e.GetOperatorId()
	default:
		return false
	}
	if got == "" {
		got = defaultOperator
	}
	return got == op
}

// next is the next message, waiting up to wait (0: for ever, until ctx).
func next(ctx context.Context, cons jetstream.Consumer, wait time.Duration, opts []jetstream.FetchOpt) (jetstream.Msg, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o := opts
		if wait == 0 {
			o = []jetstream.FetchOpt{jetstream.FetchMaxWait(time.Second)}
		}
		msg, err := cons.Next(o...)
		if err == nil {
			return msg, nil
		}
		if !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		if wait > 0 {
			return nil, errQuiet
		}
	}
}

// printedEvent is one line of `chemmy events`.
type printedEvent struct {
	Subject        string          `json:"subject"`
	Type           string          `json:"type,omitempty"`
	Kind           string          `json:"kind,omitempty"`
	StreamSequence uint64          `json:"streamSequence,omitempty"`
	Time           string          `json:"time,omitempty"`
	Event          json.RawMessage `json:"event,omitempty"`
	Error          string          `json:"error,omitempty"`
}

// shownEvent is one event of a message, as printed, and decoded (nil
// when it could not be).
type shownEvent struct {
	printed printedEvent
	msg     proto.Message
}

// messageEvents are the events of msg, decoded by its Chemmy-Event-Type
// header (by its subject for a batch, which has none, and for messages
// published before the header existed): one, or a batch's (a
// chemmy.events.v1.TableEventBatch or WalletEventBatch), each printed as
// version 1 published it alone (its own subject
// "chemmy.table.<table_id>.<kind>" or
// "chemmy.wallet.<transfer_id>.transfer_recorded", type
// chemmy.events.v1.TableEvent or WalletEvent, its kind, the whole event)
// with the batch's stream sequence and time.
func messageEvents(msg jetstream.Msg) []shownEvent {
	p := printedEvent{Subject: msg.Subject()}
	if md, err := msg.Metadata(); err == nil {
		p.StreamSequence = md.Sequence.Stream
		p.Time = md.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	p.Type, p.Kind = msg.Headers().Get(outbox.TypeHeader), msg.Headers().Get(outbox.KindHeader)
	if p.Type == "" {
		p.Type, p.Kind = outbox.EventType(msg.Subject())
	}
	switch p.Type {
	case tableevents.BatchType:
		evs, err := tableevents.Decode(p.Type, msg.Subject(), msg.Data())
		if err != nil {
			p.Error = err.Error()
			return []shownEvent{{printed: p}}
		}
		out := make([]shownEvent, len(evs))
		for i, ev := range evs {
			out[i] = batchEvent(p, ev, tableevents.Subject(ev), tableevents.EventType, tableevents.Kind(ev))
		}
		return out
	case walletevents.BatchType:
		evs, err := walletevents.Decode(p.Type, msg.Subject(), msg.Data())
		if err != nil {
			p.Error = err.Error()
			return []shownEvent{{printed: p}}
		}
		out := make([]shownEvent, len(evs))
		for i, ev := range evs {
			out[i] = batchEvent(p, ev, "chemmy.wallet."+ev.GetEventId()+".transfer_recorded", walletevents.EventType, "transfer_recorded")
		}
		return out
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(p.Type))
	if err != nil {
		p.Error = fmt.Sprintf("unknown type %q: %d bytes", p.Type, len(msg.Data()))
		return []shownEvent{{printed: p}}
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(msg.Data(), m); err != nil {
		p.Error = err.Error()
		return []shownEvent{{printed: p}}
	}
	p.Event, p.Error = eventJSON(m)
	return []shownEvent{{printed: p, msg: m}}
}

// batchEvent is ev, one event of a batch printed as p, printed as
// version 1 published it alone: on subject, of type typ and kind kind,
// with the batch's stream sequence and time.
func batchEvent(p printedEvent, ev proto.Message, subject, typ, kind string) shownEvent {
	p.Subject, p.Type, p.Kind = subject, typ, kind
	p.Event, p.Error = eventJSON(ev)
	return shownEvent{printed: p, msg: ev}
}

// eventJSON is m in protobuf JSON, or why not.
func eventJSON(m proto.Message) (json.RawMessage, string) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err.Error()
	}
	return b, ""
}
