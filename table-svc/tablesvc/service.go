package tablesvc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// schemaVersion is the version of the bbolt layout described in doc.go.
const schemaVersion = 1

var bucketTables = []byte("tables")

// DefaultInterruptAfter is Config.InterruptAfter's default.
const DefaultInterruptAfter = 2 * time.Minute

// Config configures the table service. Zero values take the defaults
// given.
type Config struct {
	// ListenAddr is the gRPC address; default "127.0.0.1:7001".
	ListenAddr string
	// DBPath is the bbolt file; required.
	DBPath string
	// ShoeAddr and WalletAddr are the addresses of shoe-svc and
	// wallet-svc; defaults "localhost:7003" and "localhost:7002".
	ShoeAddr, WalletAddr string
	// NATSURL of JetStream; empty keeps events in the outbox.
	NATSURL string
	// MetricsAddr serves Prometheus /metrics; empty serves none.
	MetricsAddr string
	// Registry receives the service's metrics (metrics.go); nil: a
	// registry of its own, with the Go and process collectors.
	Registry *prometheus.Registry
	// RetryInterval is how often tables left mid-coup are advanced again
	// and turns whose time ran out are applied; default 1 s. Negative: no
	// background loop; the caller drives it with Recover and Tick
	// (sim_hooks.go), as the deterministic simulation (cmd/sim) does.
	RetryInterval time.Duration
	// Clock gives the time for turn limits; nil means time.Now. Tests
	// inject a fake clock so that they need no sleeping.
	Clock func() time.Time
	// Trust: the service's certificate, key and the suite's CA (mutual
	// TLS; callers identified by certificate and the gateway's signed
	// assertions), or Insecure for plaintext development.
	Trust trust.Config
	// NATSNkeyFile is the nkey seed file the service authenticates to
	// NATS with; empty: no credentials.
	NATSNkeyFile string
	// RequestRetention is how long the idempotency record of a client's
	// request_id is kept; default 7 days (store.DefaultRetention),
	// negative: for ever. A request_id retried after that is a new
	// request: clients must not retry older requests.
	RequestRetention time.Duration
	// InterruptAfter is how long a coup may stay unable to go on before its
	// result (shoe-svc or wallet-svc unreachable or refusing) before it is
	// voided and every bet returned; 0: DefaultInterruptAfter (2 minutes),
	// counted on Clock. A coup with a result is never voided: its
	// settlement is retried until it is done.
	InterruptAfter time.Duration
	// RoundRetention is how long the round history (history.go) keeps a
	// round once it started; every player's last KeepRoundsPerPlayer
	// rounds are kept whatever their age. 0: DefaultRoundRetention (12
	// months, 365 days); negative: for ever. Swept hourly.
	RoundRetention time.Duration
	// SeedWindow is how long the players have to reveal their seeds once
	// a shoe's commitments are fixed, and to commit to a shoe opened while
	// a coup waited for its first card (seeds.go); 0: DefaultSeedWindow
	// (15 s), counted on Clock.
	SeedWindow time.Duration
	// Stream: the limits of the CHEMMY event stream when this service
	// creates it (an existing stream is never changed).
	Stream outbox.StreamLimits
	// IDPrefix starts the id of every table made here: the shard's
	// "s<k>-" in a sharded deployment (package shard), "" otherwise.
	IDPrefix string
	// DialOptions are added to the connections to shoe-svc and wallet-svc
	// (tests and the fault simulation wrap the transport with them). The
	// service counts those calls itself (grpc_client_* on MetricsAddr).
	DialOptions []grpc.DialOption
	Logger      *slog.Logger
}

// Service is a running table service.
type Service struct {
	tablev1.UnimplementedTableServiceServer

	base *app.Base
	db   *bolt.DB
	// commit group-commits the saves of the tables and the escrow
	// intents (many tables' writes, one fsync; see store.Committer).
	commit *store.Committer
	log    *slog.Logger
	shoe   shoev1.ShoeServiceClient
	wallet walletv1.WalletServiceClient
	conns  []*grpc.ClientConn
	retry  time.Duration
	// idPrefix: see Config.IDPrefix.
	idPrefix string
	// interruptAfter: see Config.InterruptAfter.
	interruptAfter time.Duration
	// seedWindow: see Config.SeedWindow.
	seedWindow time.Duration

	locks lockTable // table id -> its mutex, only while held or awaited

	now func() time.Time

	// metrics counts coups, bets and settlements as they are committed.
	metrics *tableMetrics

	// started is when the service started: inactivity counts from it at
	// the earliest (sessions.go).
	started time.Time
	// currency is the wallet's default currency, once learnt.
	currency walletCurrency
	// intervals are the players' reality-check intervals, as last read
	// (realitycheck.go).
	intervals intervalCache

	// lobbyScan is the most tables one ListTables call reads
	// (maxLobbyScan; tests lower it).
	lobbyScan int

	mu        sync.Mutex
	stuck     map[string]time.Time // tables whose advance failed, since when; retried
	deadlines map[string]time.Time // table id -> when its pending turn runs out
}

// policy lists who may call each method (checked again by the gateway).
var (
	anyone = []auth.Role{auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator, auth.RoleAuditor, auth.RoleService}
	// A player's own moves are his alone (and table-svc's own); staff may
	// only stand a player up (LeaveTable).
	players = []auth.Role{auth.RolePlayer, auth.RoleService}
	policy  = auth.Policy{
		tablev1.TableService_CreateTable_FullMethodName:  {auth.RoleCroupier, auth.RoleOperator, auth.RoleService},
		tablev1.TableService_GetTable_FullMethodName:     anyone,
		tablev1.TableService_ListTables_FullMethodName:   anyone,
		tablev1.TableService_JoinTable_FullMethodName:    players,
		tablev1.TableService_AcceptBank_FullMethodName:   players,
		tablev1.TableService_DeclineBank_FullMethodName:  players,
		tablev1.TableService_PlaceBet_FullMethodName:     players,
		tablev1.TableService_DeclineBet_FullMethodName:   players,
		tablev1.TableService_CallBanco_FullMethodName:    players,
		tablev1.TableService_DecideDraw_FullMethodName:   players,
		tablev1.TableService_PassBank_FullMethodName:     players,
		tablev1.TableService_LeaveTable_FullMethodName:   {auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator, auth.RoleService},
		tablev1.TableService_JoinGallery_FullMethodName:  players,
		tablev1.TableService_BidBank_FullMethodName:      players,
		tablev1.TableService_RaiseBank_FullMethodName:    players,
		tablev1.TableService_MoveTopCards_FullMethodName: players,
		tablev1.TableService_CommitSeed_FullMethodName:   players,
		tablev1.TableService_RevealSeed_FullMethodName:   players,
		tablev1.TableService_WatchTable_FullMethodName:   anyone,
		tablev1.TableService_GetAdvice_FullMethodName:    anyone,
		tablev1.TableService_GetOdds_FullMethodName:      anyone,
		tablev1.TableService_GetRoads_FullMethodName:     anyone,
		tablev1.TableService_VoidCoup_FullMethodName:     {auth.RoleCroupier, auth.RoleOperator},
		tablev1.TableService_CloseTable_FullMethodName:   {auth.RoleCroupier, auth.RoleOperator},
		// Round history: a player his own rounds (history.go), staff all.
		tablev1.TableService_ListRounds_FullMethodName: anyone,
		tablev1.TableService_GetRound_FullMethodName:   anyone,
	}
)

// Start opens the store, connects to shoe-svc and wallet-svc, resumes
// tables left mid-coup and serves until ctx is done or Stop.
func Start(ctx context.Context, c Config) (*Service, error) {
	if c.DBPath == "" {
		return nil, fmt.Errorf("tablesvc: DBPath is required")
	}
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1:7001"
	}
	if c.ShoeAddr == "" {
		c.ShoeAddr = "localhost:7003"
	}
	if c.WalletAddr == "" {
		c.WalletAddr = "localhost:7002"
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = time.Second
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.InterruptAfter <= 0 {
		c.InterruptAfter = DefaultInterruptAfter
	}
	if c.RoundRetention == 0 {
		c.RoundRetention = DefaultRoundRetention
	}
	if c.SeedWindow <= 0 {
		c.SeedWindow = DefaultSeedWindow
	}
	s := &Service{started: c.Clock(), retry: c.RetryInterval, idPrefix: c.IDPrefix, interruptAfter: c.InterruptAfter, seedWindow: c.SeedWindow, now: c.Clock, stuck: map[string]time.Time{}, deadlines: map[string]time.Time{},
		metrics: newTableMetrics(), lobbyScan: maxLobbyScan}
	mat, err := trust.Load(c.Trust)
	if err != nil {
		return nil, fmt.Errorf("tablesvc: %w", err)
	}
	// The calls to shoe-svc and wallet-svc, by method and code, on this
	// service's registry (each service has its own: several in one
	// process register nothing twice).
	cm := grpcx.NewClientMetrics()
	// Its calls carry the trace (OpenTelemetry, when configured: see
	// grpcx.SetupTracing), so traces cross from table-svc to the others.
	dial := append(append(append([]grpc.DialOption(nil), c.DialOptions...), grpcx.ClientTracing()...),
		grpc.WithChainUnaryInterceptor(cm.UnaryClientInterceptor()), grpc.WithChainStreamInterceptor(cm.StreamClientInterceptor()))
	for _, dep := range []struct{ addr, name string }{{c.ShoeAddr, trust.Shoe}, {c.WalletAddr, trust.Wallet}} {
		cc, err := mat.Dial(dep.addr, dep.name, trust.Table, dial...)
		if err != nil {
			s.closeConns()
			return nil, fmt.Errorf("tablesvc: dial %s: %w", dep.addr, err)
		}
		s.conns = append(s.conns, cc)
	}
	s.shoe = shoev1.NewShoeServiceClient(s.conns[0])
	s.wallet = walletv1.NewWalletServiceClient(s.conns[1])

	_, err = app.Start(ctx, app.Config{
		Name: trust.Table, ListenAddr: c.ListenAddr, DBPath: c.DBPath, Schema: schemaVersion,
		Buckets: append([][]byte{bucketTables, bucketIntents}, historyBuckets...), NATSURL: c.NATSURL, NATSNkeyFile: c.NATSNkeyFile,
		MetricsAddr: c.MetricsAddr, Registry: c.Registry, Trust: c.Trust, Policy: policy, Domain: domain, Logger: c.Logger, Stream: c.Stream,
	}, func(b *app.Base, g *grpc.Server) error {
		s.base, s.db, s.log = b, b.DB, b.Log
		s.commit = store.CommitterFor(b.DB)
		if err := s.registerMetrics(b.Server.Registry, cm); err != nil {
			return err
		}
		// Before the first call: unfinished coups queued, pending turns
		// given their time again (scanUnfinished).
		if err := s.scanUnfinished(); err != nil {
			return err
		}
		b.Relay.WithPublishedCheck(s.publishedCheck())
		tablev1.RegisterTableServiceServer(g, s)
		if c.RetryInterval > 0 {
			b.Go(s.retryLoop)
			b.Go(func(ctx context.Context) error {
				store.Sweep(ctx, b.DB, store.Retention{Keep: c.RequestRetention}, b.Log)
				return nil
			})
			b.Go(func(ctx context.Context) error {
				s.sweepRounds(ctx, c.RoundRetention)
				return nil
			})
		}
		return nil
	})
	if err != nil {
		s.closeConns()
		return nil, err
	}
	return s, nil
}

// Run starts the service and blocks until it has stopped.
func Run(ctx context.Context, c Config) error {
	s, err := Start(ctx, c)
	if err != nil {
		return err
	}
	return s.Wait()
}

// Addr is the gRPC listen address.
func (s *Service) Addr() string { return s.base.Addr() }

// Ready is nil while the service can do its job, else why not (its
// /readyz: app.Base.Ready).
func (s *Service) Ready() error { return s.base.Ready() }

// Stop asks the service to stop.
func (s *Service) Stop() { s.base.Stop() }

// Wait blocks until the service has stopped.
func (s *Service) Wait() error {
	err := s.base.Wait()
	s.closeConns()
	return err
}

func (s *Service) closeConns() {
	for _, cc := range s.conns {
		_ = cc.Close()
	}
}

// lock serialises all work on one table: it blocks until the caller holds
// the table's lock and returns the function that releases it (call it
// once). Table ids need not exist: the entry lives only while it is held
// or awaited.
func (s *Service) lock(tableID string) func() { return s.locks.lock(tableID) }

// lockTable is a set of mutexes by key whose entries are reference
// counted: an entry exists only while someone holds or waits for its
// lock and is removed by the last unlock, so keys that callers make up
// (ids of tables that do not exist) leave nothing behind. The zero value
// is ready to use.
type lockTable struct {
	mu sync.Mutex
	m  map[string]*lockEntry
}

type lockEntry struct {
	mu   sync.Mutex
	refs int // holders and waiters; guarded by lockTable.mu
}

// lock blocks until the caller holds key's lock and returns its unlock.
func (lt *lockTable) lock(key string) func() {
	lt.mu.Lock()
	if lt.m == nil {
		lt.m = map[string]*lockEntry{}
	}
	e := lt.m[key]
	if e == nil {
		e = &lockEntry{}
		lt.m[key] = e
	}
	e.refs++
	lt.mu.Unlock()

	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		lt.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(lt.m, key)
		}
		lt.mu.Unlock()
	}
}

// len is the number of keys held or awaited.
func (lt *lockTable) len() int {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return len(lt.m)
}

// load reads a table; NOT_FOUND TABLE_NOT_FOUND when absent.
func (s *Service) load(id string) (*table, error) {
	var t *table
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTables).Get([]byte(id))
		if v == nil {
			return fail(codes.NotFound, reasonTableNotFound, "no table %q", id)
		}
		t = new(table)
		return json.Unmarshal(v, t)
	})
	return t, err
}

// change collects the events of one state change.
type change struct {
	t      *table
	events []*eventsv1.TableEvent
	// key and hash are the idempotency record of the request making the
	// change; intents are the escrow intents it resolved (see intent.go).
	key     string
	hash    []byte
	intents []string
	// now is the time of the change (the service's clock).
	now time.Time
	// dealt holds the cards dealt ahead with a coup's opening card (one
	// DealCards), by request id, until the core asks for them.
	dealt map[string]dealtAhead
	// private are events for one player only, outside the table's
	// sequence and subject (reality checks, realitycheck.go).
	private []*eventsv1.TableEvent
	// seedsFixed: the shoe's seed commitments were fixed in this change
	// (seeds.go), which is to be saved though no effect was carried out.
	seedsFixed bool
}

// emit adds an event to the change, numbered in the table's sequence.
func (c *change) emit(coupID string, payload proto.Message) {
	c.t.EventSeq++
	ev := &eventsv1.TableEvent{
		EventId: ulid.Make().String(), TableId: c.t.ID, CoupId: coupID,
		Sequence: c.t.EventSeq, OccurTime: timestamppb.Now(), Certification: c.t.Certification,
	}
	setPayload(ev, payload)
	c.events = append(c.events, ev)
}

// save writes the table, its events and the idempotency record (when key
// is not empty; resp is stored with it) in one transaction, then wakes the
// relay.
func (s *Service) save(c *change, key string, hash, resp []byte) error {
	return s.saveAll(saving{c, key, hash, resp})
}

// saving is a change to save with the idempotency record of its request
// (key, hash, resp; none when key is empty).
type saving struct {
	c          *change
	key        string
	hash, resp []byte
}

// saveAll saves changes of different tables in one transaction, as save
// does one.
func (s *Service) saveAll(cs ...saving) error {
	vs := make([][]byte, len(cs))
	for i, sv := range cs {
		c := sv.c
		s.stampDeadline(c.t)
		v, err := json.Marshal(c.t)
		if err != nil {
			return err
		}
		vs[i] = v
	}
	// Group-committed with the other tables' writes: the function only
	// writes values computed here, so running it again after a rolled
	// back group changes nothing.
	err := s.commit.Update(func(tx *bolt.Tx) error {
		for i, sv := range cs {
			if err := writeChange(tx, sv, vs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	events := false
	for _, sv := range cs {
		c := sv.c
		if err == nil {
			s.track(c.t)
			s.metrics.committed(c.t, c.events)
			events = events || len(c.events)+len(c.private) > 0
		}
		c.events, c.private = nil, nil
	}
	if events {
		s.base.Relay.Notify()
	}
	return err
}

// writeChange writes sv in tx: its table (encoded v), the escrow intents
// it resolved, its events in the outbox and the round history, and its
// idempotency record when sv.key is not empty.
func writeChange(tx *bolt.Tx, sv saving, v []byte) error {
	c := sv.c
	if err := tx.Bucket(bucketTables).Put([]byte(c.t.ID), v); err != nil {
		return err
	}
	for _, id := range c.intents {
		if err := tx.Bucket(bucketIntents).Delete([]byte(id)); err != nil {
			return err
		}
	}
	for _, ev := range c.events {
		b, err := proto.Marshal(c.t.publicEvent(ev))
		if err != nil {
			return err
		}
		if err := outbox.Put(tx, subject(ev), ev.EventId, b); err != nil {
			return err
		}
	}
	if err := putPrivate(tx, c.private); err != nil {
		return err
	}
	// The round history keeps the coup's events in full (history.go).
	if err := recordRounds(tx, c); err != nil {
		return err
	}
	if sv.key != "" {
		return store.Save(tx, sv.key, sv.hash, sv.resp)
	}
	return nil
}

// seen reports whether the request was already applied; an id reused for
// another request is ALREADY_EXISTS REQUEST_ID_REUSED.
func (s *Service) seen(key string, hash []byte) (bool, error) {
	var (
		found bool
		resp  []byte
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		resp, found, err = store.Lookup(tx, key, hash)
		return err
	})
	if err == store.ErrRequestReused {
		return true, fail(codes.AlreadyExists, reasonRequestIDReused, "request_id %q was used for another request", key)
	}
	if err == nil && found && string(resp) == abandoned {
		return true, fail(codes.Aborted, reasonRequestAbandoned, "request %q was cut off and rolled back; send it again with a new request_id", key)
	}
	return found, err
}
