package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// HouseAccounts are the wallet's own accounts a coup may pay into.
var HouseAccounts = []string{"house:commission", "house:bank"}

// Money is the wallet's state after a run.
type Money struct {
	// Audit is the auditor's report (AuditLedger).
	Audit *walletv1.AuditLedgerResponse
	// Players is the sum of the players' balances, House that of
	// HouseAccounts, minor units.
	Players, House int64
}

// CheckMoney asks the wallet, through the gateway at gw, for its audit
// (as AuditorToken) and for the balance of each account and of
// HouseAccounts (as OperatorToken). It fails unless the ledger is
// balanced and the players' balances and the house's add up to deposits,
// the money put in (and the wallet holds exactly that).
func CheckMoney(ctx context.Context, gw string, accounts []string, deposits int64) (Money, error) {
	cc, err := grpc.NewClient(gw, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return Money{}, err
	}
	defer cc.Close()
	w := walletv1.NewWalletServiceClient(cc)
	as := func(token string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	var m Money
	if m.Audit, err = w.AuditLedger(as(AuditorToken), &walletv1.AuditLedgerRequest{}); err != nil {
		return m, fmt.Errorf("audit: %w", err)
	}
	balance := func(id string) (int64, error) {
		r, err := w.GetAccount(as(OperatorToken), &walletv1.GetAccountRequest{AccountId: id})
		if err != nil {
			return 0, fmt.Errorf("account %s: %w", id, err)
		}
		return r.GetAccount().GetBalance(), nil
	}
	for _, a := range accounts {
		b, err := balance(a)
		if err != nil {
			return m, err
		}
		m.Players += b
	}
	for _, a := range HouseAccounts {
		b, err := balance(a)
		if err != nil && status.Code(errors.Unwrap(err)) != codes.NotFound {
			return m, err
		}
		m.House += b
	}
	var errs []error
	if !m.Audit.GetBalanced() {
		errs = append(errs, fmt.Errorf("the ledger is not balanced: %s", strings.Join(m.Audit.GetDiscrepancies(), "; ")))
	}
	if m.Players+m.House != deposits {
		errs = append(errs, fmt.Errorf("players %d + house %d = %d, the deposits were %d", m.Players, m.House, m.Players+m.House, deposits))
	}
	for _, c := range m.Audit.GetCurrencies() {
		if c.GetInWallet() != deposits {
			errs = append(errs, fmt.Errorf("the wallet holds %d %s, the deposits were %d", c.GetInWallet(), c.GetCurrencyCode(), deposits))
		}
	}
	return m, errors.Join(errs...)
}

// EventSequences asks the table-svc shards, through the gateway at gw
// (as CroupierToken), for the event_sequence of each table: the
// sequence of the table's last event.
func EventSequences(ctx context.Context, gw string, tables []string) (map[string]uint64, error) {
	cc, err := grpc.NewClient(gw, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	tc := tablev1.NewTableServiceClient(cc)
	out := map[string]uint64{}
	for _, id := range tables {
		r, err := tc.GetTable(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+CroupierToken), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", id, err)
		}
		out[id] = r.GetTable().GetEventSequence()
	}
	return out, nil
}

// connectReader connects to NATS at url as the read-only user (nkey
// seed file seed).
func connectReader(url, seed string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := outbox.Connect(url, "chemmy-cluster-check", seed, nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.Reader)))
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// TableEvents reads every table event in the stream CHEMMY (from NATS at
// url, as the reader with seed file seed) and returns, for each table of
// want, the sequences of its events in stream order (each batch
// unpacked, docs/events.md).
func TableEvents(ctx context.Context, url, seed string, want []string) (map[string][]uint64, error) {
	nc, js, err := connectReader(url, seed)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	// An ephemeral pull consumer, gone when idle: the reader may create
	// consumers but delete none (an ordered consumer deletes its own).
	cons, err := js.CreateConsumer(ctx, outbox.StreamName, jetstream.ConsumerConfig{
		FilterSubject: "chemmy.table.>", DeliverPolicy: jetstream.DeliverAllPolicy, AckPolicy: jetstream.AckNonePolicy,
		InactiveThreshold: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	out := map[string][]uint64{}
	for _, id := range want {
		out[id] = nil
	}
	for {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, err
		}
		n := 0
		var pending uint64
		for msg := range batch.Messages() {
			n++
			evs, err := tableevents.Decode(msg.Headers().Get(outbox.TypeHeader), msg.Subject(), msg.Data())
			if err != nil {
				return nil, fmt.Errorf("event %s: %w", msg.Subject(), err)
			}
			for _, ev := range evs {
				if seqs, ok := out[ev.GetTableId()]; ok {
					out[ev.GetTableId()] = append(seqs, ev.GetSequence())
				}
			}
			if md, err := msg.Metadata(); err == nil {
				pending = md.NumPending
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return nil, err
		}
		if n == 0 || pending == 0 {
			return out, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// CheckEvents checks that no table event was lost: for each table of
// want (its event_sequence, EventSequences, read before the stream), the
// stream holds its events 1, 2, ... want[id] in order, each once, and
// maybe more (a live table goes on: a bank offer times out). The outboxes
// may still be publishing: it reads the stream again until the check
// passes or ctx ends, and then returns what is wrong.
func CheckEvents(ctx context.Context, url, seed string, want map[string]uint64) error {
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for {
		got, err := TableEvents(ctx, url, seed, ids)
		var errs []error
		if err != nil {
			errs = append(errs, err)
		}
		for _, id := range ids {
			if err := gapless(got[id], want[id]); err != nil {
				errs = append(errs, fmt.Errorf("table %s: %w", id, err))
			}
		}
		if len(errs) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(errs...)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// gapless checks that seqs is 1, 2, ..., n for some n >= last.
func gapless(seqs []uint64, last uint64) error {
	for i, s := range seqs {
		if s != uint64(i)+1 {
			return fmt.Errorf("event %d of the stream has sequence %d (want %d): a gap or a duplicate", i+1, s, i+1)
		}
	}
	if uint64(len(seqs)) < last {
		return fmt.Errorf("the stream holds events 1..%d, the table is at %d", len(seqs), last)
	}
	return nil
}

// StreamCluster is where the stream CHEMMY's replicas are: its leader's
// name, and each replica's name and whether it is current.
type StreamCluster struct {
	Leader   string
	Replicas map[string]bool
	// Messages in the stream.
	Messages uint64
}

// Stream reads the stream CHEMMY's cluster information from NATS at url
// as the reader (seed file seed).
func Stream(ctx context.Context, url, seed string) (StreamCluster, error) {
	nc, js, err := connectReader(url, seed)
	if err != nil {
		return StreamCluster{}, err
	}
	defer nc.Close()
	st, err := js.Stream(ctx, outbox.StreamName)
	if err != nil {
		return StreamCluster{}, err
	}
	info := st.CachedInfo()
	sc := StreamCluster{Replicas: map[string]bool{}, Messages: info.State.Msgs}
	if info.Cluster != nil {
		sc.Leader = info.Cluster.Leader
		if sc.Leader != "" {
			sc.Replicas[sc.Leader] = true
		}
		for _, r := range info.Cluster.Replicas {
			sc.Replicas[r.Name] = r.Current && !r.Offline
		}
	}
	return sc, nil
}
