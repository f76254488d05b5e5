package tablesvc

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/table-svc/game"
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
	// Hook, when set, is called with the service's store and outbox relay
	// before it serves (app.Config.Hook): for the simulation (cmd/sim).
	Hook func(*app.Base)
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
	// hub hands each committed save's events to this process's watches
	// (watchhub.go); nil: none (a Service made without Start).
	hub *watchHub

	// lobbyScan is the most tables one ListTables call reads
	// (maxLobbyScan; tests lower it).
	lobbyScan int
	// roundScan is the most rounds one ListRounds call reads
	// (maxRoundScan; tests lower it).
	roundScan int

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
		// A reality check is the player's to answer.
		tablev1.TableService_AnswerRealityCheck_FullMethodName: players,
		tablev1.TableService_WatchTable_FullMethodName:         anyone,
		tablev1.TableService_GetAdvice_FullMethodName:          anyone,
		tablev1.TableService_GetOdds_FullMethodName:            anyone,
		tablev1.TableService_GetRoads_FullMethodName:           anyone,
		tablev1.TableService_VoidCoup_FullMethodName:           {auth.RoleCroupier, auth.RoleOperator},
		tablev1.TableService_CloseTable_FullMethodName:         {auth.RoleCroupier, auth.RoleOperator},
		// Round history: a player his own rounds (history.go), staff all.
		tablev1.TableService_ListRounds_FullMethodName: anyone,
		tablev1.TableService_GetRound_FullMethodName:   anyone,
	}
)

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
			return tableNotFound(id)
		}
		t = new(table)
		return decodeTable(v, t)
	})
	return t, err
}

// loadFor reads the table id for the caller of ctx: NOT_FOUND
// TABLE_NOT_FOUND when it does not exist or is another operator's. A call
// without a caller (the service's own work) sees every table.
func (s *Service) loadFor(ctx context.Context, id string) (*table, error) {
	t, err := s.load(id)
	if err != nil {
		return nil, err
	}
	if c, ok := auth.FromContext(ctx); ok && !sees(c, t.operator()) {
		return nil, tableNotFound(id)
	}
	return t, nil
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
	// reacted: the shell's reactions to the coup settled in this change
	// ran (saga.go react).
	reacted bool
}

// emit adds an event to the change, numbered in the table's sequence.
func (c *change) emit(coupID string, payload proto.Message) {
	c.t.EventSeq++
	ev := &eventsv1.TableEvent{
		EventId: ulid.Make().String(), TableId: c.t.ID, CoupId: coupID,
		Sequence: c.t.EventSeq, OccurTime: timestamppb.Now(), Certification: c.t.Certification,
		CurrencyCode: c.t.Currency, CurrencyExponent: c.t.tableExponent(), OperatorId: c.t.operator(),
	}
	setPayload(ev, payload)
	c.events = append(c.events, ev)
}

// walletCurrency is the cached default currency of wallet-svc, and the
// exponents of the currencies it accepted (currency.go).
type walletCurrency struct {
	mu        sync.Mutex
	code      string
	exponents map[string]int32
}

type cachedInterval struct {
	d    time.Duration
	read time.Time
}

// get returns the interval of account read at most realityIntervalTTL
// before now.
func (c *intervalCache) get(account string, now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[account]
	if !ok || now.Sub(v.read) >= realityIntervalTTL || now.Before(v.read) {
		return 0, false
	}
	return v.d, true
}

// put keeps account's interval as read at now, dropping the stale
// entries once the cache has grown large.
func (c *intervalCache) put(account string, d time.Duration, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedInterval{}
	}
	if len(c.m) >= 10000 {
		for k, v := range c.m {
			if now.Sub(v.read) >= realityIntervalTTL {
				delete(c.m, k)
			}
		}
	}
	c.m[account] = cachedInterval{d: d, read: now}
}

// dealtAhead is a card dealt with its coup's opening card.
type dealtAhead struct {
	card game.DealCard
	resp *shoev1.DealCardResponse
}

// realityIntervalTTL is how long table-svc keeps a player's
// reality-check interval once read from the wallet: a coup costs no wallet
// call per player, and a changed interval applies within this time.
const realityIntervalTTL = time.Minute

// intervalCache holds reality-check intervals by account, each with the
// time it was read.
type intervalCache struct {
	mu sync.Mutex
	m  map[string]cachedInterval
}
