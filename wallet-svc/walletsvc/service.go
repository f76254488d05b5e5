package walletsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/currency"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Config.
const (
	DefaultListenAddr = "127.0.0.1:7002"
	DefaultDBPath     = "data/wallet.db"
	DefaultCurrency   = "EUR"
)

// Config configures the wallet service. Zero fields take their defaults.
type Config struct {
	// ListenAddr is the gRPC address; default "127.0.0.1:7002". "127.0.0.1:0" picks
	// a free port (see Service.Addr).
	ListenAddr string
	// DBPath is the bbolt ledger file; default "data/wallet.db" (relative
	// to the working directory). Its directory is created.
	DBPath string
	// NATSURL of the JetStream server; default empty: no NATS connection
	// (events stay in the outbox).
	NATSURL string
	// MetricsAddr serves Prometheus /metrics; default empty: none.
	MetricsAddr string
	// Registry receives the service's metrics (metrics.go); nil: a
	// registry of its own, with the Go and process collectors.
	Registry *prometheus.Registry
	// Currency is the wallet's default currency: an active ISO 4217 code
	// or one of Currencies; default "EUR". A ledger file keeps the
	// currency it was created with; starting it with another fails.
	Currency string
	// Currencies are the codes the wallet accepts besides ISO 4217's (chips
	// or tokens, 3..12 characters [A-Z0-9]), each with its exponent
	// (currency.ParseSet "CHIPS:0,GOLD:2"; wallet-svc -currencies). Any
	// other code is refused: CURRENCY_UNKNOWN for an account, a hold or a
	// GetCurrency in it, and the service does not start in it. Removing a
	// configured code under accounts in it leaves them readable, without
	// an exponent, but refuses new requests in it.
	Currencies currency.Set
	// SessionGap: a pause in a player's play longer than this ends his
	// session (the unit of the session loss and time limits); default
	// DefaultSessionGap (30 minutes).
	SessionGap time.Duration
	// LimitsCoolingOff: how long a looser responsible-gaming limit waits
	// before it takes effect; default DefaultLimitsCoolingOff (24 hours).
	LimitsCoolingOff time.Duration
	// LimitsOverride lets an operator lift a limit at once, without the
	// cooling-off (SetPlayerLimits override, with a reason, recorded):
	// only where the deployment's regulator allows it. Default off:
	// refused with LIMIT_OVERRIDE_NOT_ALLOWED.
	LimitsOverride bool
	// now is the clock; nil means time.Now (this package's tests set it).
	now func() time.Time
	// HoldSweepInterval is how often expired holds are expired; default
	// 1s, negative: never (ExpireHolds only).
	HoldSweepInterval time.Duration
	// RequestRetention is how long the idempotency record of a request_id
	// (Deposit, Withdraw, PlaceHold, ...) is kept; default 7 days
	// (store.DefaultRetention), negative: for ever. A request_id retried
	// after that is a new request: clients must not retry older requests.
	// Coup settlements (keyed by coup_id) are kept for ever whatever this
	// says (doc.go).
	RequestRetention time.Duration
	// Stream: the limits of the CHEMMY event stream when this service
	// creates it (an existing stream is never changed); zero fields take
	// the defaults: 7 days, 1 GiB, 1 replica (package outbox).
	Stream outbox.StreamLimits
	// Trust: the service's certificate, key and the suite's CA (mutual
	// TLS; callers identified by certificate and the gateway's signed
	// assertions), or Insecure for plaintext development.
	Trust trust.Config
	// NATSNkeyFile is the nkey seed file the service authenticates to
	// NATS with; empty: no credentials.
	NATSNkeyFile string
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Hook, when set, is called with the service's store and outbox relay
	// before it serves (app.Config.Hook): for the simulation (cmd/sim).
	Hook func(*app.Base)
	// Operator, when set, makes the wallet seamless (doc.go "Seamless
	// wallet mode"): every "player:" account mirrors the player's money
	// in this operator wallet (opwallet.NewHTTP, or another adapter),
	// debited before a stake and credited after. nil: transfer mode.
	Operator opwallet.Operator
	// OperatorID names the operator in the reconciliation report
	// (GetOperatorReport); default "operator".
	OperatorID string
	// OperatorProbeInterval is how often seamless mode probes the
	// operator's wallet (a balance call for OperatorProbePlayer: any answer
	// signed with the shared secret proves the URL and the secret; probe.go,
	// chemmy_operator_up); default DefaultOperatorProbeInterval (30 s),
	// negative: never. The first probe runs at start.
	OperatorProbeInterval time.Duration
	// OperatorProbePlayer is the player id of the probe's balance call;
	// default DefaultOperatorProbePlayer ("chemmy-probe"). The operator
	// may answer it UNKNOWN_PLAYER (a signed refusal is a success).
	OperatorProbePlayer string
	// OperatorsFile is the operators file (docs/operators.md; opwallets.go):
	// in seamless mode each listed operator's wallet, and each operator's
	// currencies. Empty: none (the default operator's wallet is Operator).
	OperatorsFile string
	// OperatorsReloadInterval is how often OperatorsFile and its secret
	// files are read again; default DefaultOperatorsReloadInterval (10 s),
	// negative: never.
	OperatorsReloadInterval time.Duration
	// Seamless makes the wallet seamless when Operator is nil: the default
	// operator's wallet is then its entry's in OperatorsFile (required).
	Seamless bool
	// OperatorTimeout and OperatorAllowHTTP configure the clients of the
	// operators file's wallets (opwallet.HTTPConfig's Timeout and
	// AllowInsecureHTTP).
	OperatorTimeout   time.Duration
	OperatorAllowHTTP bool
	// operatorBackoff is the relay's first retry delay; default 100 ms
	// (this package's tests shorten it).
	operatorBackoff time.Duration
	// crashAfterDebit, when it returns true for a debit's transaction id,
	// fails the request right after the debit was logged in flight, as a
	// crash there would (this package's tests).
	crashAfterDebit func(id string) bool
	// roundIdle is how long a round with only failed debits waits for a
	// stake before it ends; default 1 minute (this package's tests
	// shorten it).
	roundIdle time.Duration
}

func (c Config) withDefaults() Config {
	if c.ListenAddr == "" {
		c.ListenAddr = DefaultListenAddr
	}
	if c.DBPath == "" {
		c.DBPath = DefaultDBPath
	}
	if c.Currency == "" {
		c.Currency = DefaultCurrency
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.HoldSweepInterval == 0 {
		c.HoldSweepInterval = time.Second
	}
	return c
}

// Policy is the wallet's role policy (defence in depth behind the gateway).
func Policy() auth.Policy {
	return auth.Policy{
		walletv1.WalletService_Deposit_FullMethodName:  {auth.RoleOperator},
		walletv1.WalletService_Withdraw_FullMethodName: {auth.RoleOperator},
		walletv1.WalletService_GetAccount_FullMethodName: {auth.RolePlayer, auth.RoleCroupier,
			auth.RoleOperator, auth.RoleAuditor, auth.RoleService},
		walletv1.WalletService_GetCurrency_FullMethodName: {auth.RolePlayer, auth.RoleCroupier,
			auth.RoleOperator, auth.RoleAuditor, auth.RoleService},
		walletv1.WalletService_PlaceHold_FullMethodName:   {auth.RoleService},
		walletv1.WalletService_VoidHold_FullMethodName:    {auth.RoleService},
		walletv1.WalletService_SettleCoup_FullMethodName:  {auth.RoleService},
		walletv1.WalletService_PostHold_FullMethodName:    {auth.RoleService},
		walletv1.WalletService_ResizeHold_FullMethodName:  {auth.RoleService},
		walletv1.WalletService_ExpireHolds_FullMethodName: {auth.RoleService, auth.RoleOperator},
		walletv1.WalletService_ListStatement_FullMethodName: {auth.RolePlayer, auth.RoleCroupier,
			auth.RoleOperator, auth.RoleAuditor, auth.RoleService},
		walletv1.WalletService_AuditLedger_FullMethodName:      {auth.RoleAuditor, auth.RoleOperator},
		walletv1.WalletService_SettlePuntoBanco_FullMethodName: {auth.RoleService},
		walletv1.WalletService_SettleBanque_FullMethodName:     {auth.RoleService},
		walletv1.WalletService_ChargeFee_FullMethodName:        {auth.RoleService},
		walletv1.WalletService_SettleOld_FullMethodName:        {auth.RoleService},
		walletv1.WalletService_SetPlayerLimits_FullMethodName:  {auth.RoleOperator},
		walletv1.WalletService_CheckStake_FullMethodName:       {auth.RoleService},
		walletv1.WalletService_GetPlayerLimits_FullMethodName: {auth.RolePlayer, auth.RoleCroupier,
			auth.RoleOperator, auth.RoleAuditor, auth.RoleService},
		walletv1.WalletService_GetOperatorReport_FullMethodName: {auth.RoleOperator, auth.RoleAuditor},
		walletv1.WalletService_GetOperatorRound_FullMethodName:  {auth.RoleOperator, auth.RoleAuditor, auth.RoleService},
		walletv1.WalletService_ListLimitChanges_FullMethodName:  {auth.RoleOperator, auth.RoleAuditor},
		walletv1.WalletService_CancelPlaceHold_FullMethodName:   {auth.RoleService},
		// Whether a coup is settled: table-svc before a void, and staff
		// looking into a coup.
		walletv1.WalletService_GetCoupSettlement_FullMethodName: {auth.RoleService, auth.RoleOperator, auth.RoleAuditor},
		// The exception list of seamless mode: read by operators and
		// auditors, resolved by operators.
		walletv1.WalletService_ListOperatorExceptions_FullMethodName:  {auth.RoleOperator, auth.RoleAuditor},
		walletv1.WalletService_RetryOperatorException_FullMethodName:  {auth.RoleOperator},
		walletv1.WalletService_SettleOperatorException_FullMethodName: {auth.RoleOperator},
		// Game-launch sessions (launch.go): created and revoked by the
		// operator, read by staff who look into them; the gateway (role
		// service, its own certificate) authenticates their tokens.
		walletv1.WalletService_CreateLaunchSession_FullMethodName:       {auth.RoleOperator},
		walletv1.WalletService_RevokeLaunchSession_FullMethodName:       {auth.RoleOperator},
		walletv1.WalletService_GetLaunchSession_FullMethodName:          {auth.RoleOperator, auth.RoleAuditor},
		walletv1.WalletService_AuthenticateLaunchSession_FullMethodName: {auth.RoleService},
	}
}

// Service is a running wallet service. It implements
// walletv1.WalletServiceServer.
type Service struct {
	walletv1.UnimplementedWalletServiceServer

	base     *app.Base
	db       *bolt.DB
	log      *slog.Logger
	currency string
	// cur is the default currency and the accepted ones (validate.go).
	cur    currencies
	commit *store.Committer // the ledger's, shared with the outbox relay (store.CommitterFor)
	relay  *outbox.Relay
	now    func() time.Time
	// sessionGap and coolingOff: see Config.SessionGap and
	// Config.LimitsCoolingOff.
	sessionGap, coolingOff time.Duration
	// limitsOverride: see Config.LimitsOverride.
	limitsOverride bool
	// metrics counts transfers, settlements and holds as they commit.
	metrics *walletMetrics

	// Seamless mode (seamless.go, opoutbox.go): the operator's wallet (nil
	// in transfer mode), its name, the relay's wake-up and first retry
	// delay, the per-request-id locks and the metrics.
	op              opwallet.Operator
	opFile          *opFile // the operators file; nil: none (opwallets.go)
	opID            string
	opWake          chan struct{}
	opFirst         time.Duration
	keys            keyLocks
	opMetrics       *opMetrics
	crashAfterDebit func(id string) bool
	roundIdle       time.Duration
	// gate orders a round's debits and the relay's credits and round
	// ends (opoutbox.go "Order"); relayPasses counts the relay's passes
	// (this package's tests wait on it).
	gate        *roundGate
	relayPasses atomic.Uint64
}

var _ walletv1.WalletServiceServer = (*Service)(nil)

// Start opens the ledger, creates the system accounts on a new file and
// serves until ctx is done or Stop is called.
func Start(ctx context.Context, c Config) (*Service, error) {
	c = c.withDefaults()
	if err := validCurrency(c.Currency); err != nil {
		return nil, err
	}
	if _, ok := c.Currencies.Exponent(c.Currency); !ok {
		return nil, fmt.Errorf("wallet: currency %s is neither an active ISO 4217 code nor configured: start it with -currencies %s:EXPONENT (its minor unit, 0..%d)",
			c.Currency, c.Currency, currency.MaxExponent)
	}
	s := &Service{currency: c.Currency, cur: currencies{def: c.Currency, known: c.Currencies}, limitsOverride: c.LimitsOverride, now: time.Now, sessionGap: c.SessionGap, coolingOff: c.LimitsCoolingOff,
		metrics: newWalletMetrics(c.Currency, "")}
	if c.now != nil {
		s.now = c.now
	}
	if s.sessionGap <= 0 {
		s.sessionGap = DefaultSessionGap
	}
	if s.coolingOff <= 0 {
		s.coolingOff = DefaultLimitsCoolingOff
	}
	s.op, s.opID, s.opFirst, s.crashAfterDebit = c.Operator, c.OperatorID, c.operatorBackoff, c.crashAfterDebit
	if s.opID == "" {
		s.opID = DefaultOperatorID
	}
	s.metrics.op = s.opID
	if c.OperatorsFile != "" {
		s.opFile = newOpFile(c)
		if err := s.opFile.load(s.cur); err != nil {
			return nil, fmt.Errorf("wallet: -operators: %w", err)
		}
		if s.op == nil && c.Seamless {
			if s.op = s.walletOf(s.opID); s.op == nil {
				return nil, fmt.Errorf("wallet: seamless mode needs the default operator %q's wallet: -operator-url, or its entry's wallet in the operators file", s.opID)
			}
		}
	} else if c.Seamless && s.op == nil {
		return nil, errors.New("wallet: seamless mode needs the operator's wallet (Operator)")
	}
	if s.opFirst <= 0 {
		s.opFirst = defaultRelayFirst
	}
	if s.roundIdle = c.roundIdle; s.roundIdle <= 0 {
		s.roundIdle = defaultRoundIdle
	}
	s.opMetrics = newOpMetrics()
	s.opMetrics.queues.count = s.queueCounts
	s.opMetrics.defaultOperator = s.opID
	s.gate = newRoundGate()
	probeEvery, probePlayer := c.OperatorProbeInterval, c.OperatorProbePlayer
	if probeEvery == 0 {
		probeEvery = DefaultOperatorProbeInterval
	}
	if probePlayer == "" {
		probePlayer = DefaultOperatorProbePlayer
	}
	base, err := app.Start(ctx, app.Config{
		Name:     trust.Wallet,
		Trust:    c.Trust,
		Services: []string{trust.Table},
		// The gateway asks about a launch token before it knows the
		// caller (launch.go).
		GatewayMethods: []string{walletv1.WalletService_AuthenticateLaunchSession_FullMethodName},
		NATSNkeyFile:   c.NATSNkeyFile,
		ListenAddr:     c.ListenAddr,
		DBPath:         c.DBPath,
		Schema:         schemaVersion,
		Buckets:        buckets(),
		NATSURL:        c.NATSURL,
		MetricsAddr:    c.MetricsAddr,
		Registry:       c.Registry,
		Stream:         c.Stream,
		Policy:         Policy(),
		Domain:         Domain,
		Logger:         c.Logger,
		Hook:           c.Hook,
	}, func(b *app.Base, g *grpc.Server) error {
		// First of all, before anything is written: a ledger file of the
		// other wallet mode is refused (mode.go).
		mode := ModeTransfer
		if s.op != nil {
			mode = ModeSeamless
		}
		if err := takeMode(b.DB, c.DBPath, mode, s.now()); err != nil {
			return err
		}
		if err := initLedger(b.DB, c.Currency); err != nil {
			return err
		}
		if err := s.metrics.register(b.Server.Registry, b.DB); err != nil {
			return err
		}
		s.db, s.log, s.relay = b.DB, b.Log, b.Relay
		s.commit = store.CommitterFor(b.DB)
		if err := s.logOldLimitChanges(); err != nil {
			return err
		}
		registerScoped(g, s)
		if s.opFile != nil {
			if err := b.Server.Registry.Register(s.opFile.errors); err != nil {
				return err
			}
			every := c.OperatorsReloadInterval
			if every == 0 {
				every = DefaultOperatorsReloadInterval
			}
			if every > 0 {
				b.Go(func(ctx context.Context) error { s.operatorsLoop(ctx, every); return nil })
			}
		}
		if s.op != nil {
			if err := s.opMetrics.register(b.Server.Registry); err != nil {
				return err
			}
			if err := s.recoverDebits(); err != nil {
				return err
			}
			if err := s.indexRoundTransactions(); err != nil {
				return err
			}
			s.opWake = make(chan struct{}, 1)
			b.Go(func(ctx context.Context) error { s.relayLoop(ctx); return nil })
			b.Go(func(ctx context.Context) error { s.roundSweepLoop(ctx, retention(c.RequestRetention)); return nil })
			if probeEvery > 0 {
				b.Server.Health.SetServingStatus(OperatorHealthService, healthpb.HealthCheckResponse_NOT_SERVING)
				b.Go(func(ctx context.Context) error {
					s.probeLoop(ctx, b.Server.Health, probeEvery, probePlayer)
					return nil
				})
			}
		}
		if c.HoldSweepInterval > 0 {
			b.Go(func(ctx context.Context) error { s.sweepLoop(ctx, c.HoldSweepInterval); return nil })
		}
		b.Go(func(ctx context.Context) error {
			store.Sweep(ctx, b.DB, retention(c.RequestRetention), b.Log)
			return nil
		})
		b.Go(func(ctx context.Context) error { s.launchSweepLoop(ctx, retention(c.RequestRetention)); return nil })
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.base = base
	return s, nil
}

// Run starts the service and serves until ctx is done.
func Run(ctx context.Context, c Config) error {
	s, err := Start(ctx, c)
	if err != nil {
		return err
	}
	return s.Wait()
}

// Addr is the address the gRPC server listens on.
func (s *Service) Addr() string { return s.base.Addr() }

// Ready is nil while the service can do its job, else why not (its
// /readyz: app.Base.Ready).
func (s *Service) Ready() error { return s.base.Ready() }

// Stop asks the service to stop: calls in flight finish, then the ledger
// is closed. Wait waits for that.
func (s *Service) Stop() { s.base.Stop() }

// Wait blocks until the service has stopped and returns its first error.
func (s *Service) Wait() error { return s.base.Wait() }

// retention is the wallet's idempotency record retention: keep the
// records of coup settlements (and their final failures) for ever, so
// that a coup is settled exactly once however late the table retries it
// (a bet hold is SETTLED once, but the bank hold stays open across coups,
// and the table must get the coup's own answer back); the records of
// request ids go after keep.
func retention(keep time.Duration) store.Retention {
	return store.Retention{Keep: keep, Forever: func(key string) bool {
		return isCoupKey(key) || isCoupKey(strings.TrimPrefix(key, "fail/"))
	}}
}

// failKey is where the failure of the request keyed key is stored.
func failKey(key string) string { return "fail/" + key }

// errNotStored rolls back a request whose failure is not its final
// answer (finalFailure).
var errNotStored = errors.New("failure not stored")

// isCoupKey reports whether key is a coup settlement's (doc.go).
func isCoupKey(key string) bool { return strings.HasPrefix(key, "coup/") }

// finalFailure reports whether err, a status error of the request keyed
// key, is its permanent answer, stored under failKey(key). For a request
// id (the client picks a new one to try again) every failure is. For a
// coup settlement (the coup id is fixed for the coup's life) only the
// failures no later change of the ledger can alter are: a hold that does
// not exist, is resolved or has expired, a malformed settlement
// (INVALID_ARGUMENT: e.g. a bet on the banker's own hold), an invalid
// account, a currency mismatch. The others (INVALID_AMOUNT: a bet's amount
// differs from its hold's, as while a ResizeHold is still in flight, or an
// empty bank hold; BETS_EXCEED_BANK; INSUFFICIENT_FUNDS: house:bank short)
// depend on amounts that may still change: nothing is stored, and a retry
// under the same coup id, as is or corrected, is decided afresh.
func finalFailure(key string, err error) bool {
	if !isCoupKey(key) {
		return true
	}
	switch errs.Reason(err) {
	case reasonHoldNotFound, reasonHoldNotOpen, reasonHoldExpired, reasonInvalidArgument, reasonInvalidAccount, reasonCurrencyMismatch:
		return true
	}
	return false
}

// forgetStaleFailure deletes, in tx, a failure stored for the coup key
// by an older version although it is not final (finalFailure), whatever
// request it was stored for, so that the coup can still be settled. It
// reports whether it deleted one.
func forgetStaleFailure(tx *bolt.Tx, key string) (bool, error) {
	if !isCoupKey(key) {
		return false, nil
	}
	_, b, found := store.Get(tx, failKey(key))
	if !found {
		return false, nil
	}
	st := &spb.Status{}
	if err := proto.Unmarshal(b, st); err != nil {
		return false, err
	}
	if finalFailure(key, status.FromProto(st).Err()) {
		return false, nil
	}
	return true, store.Delete(tx, failKey(key))
}

// idempotent runs apply in one read-write transaction keyed by key, or
// returns the result stored for an earlier identical request: its
// response, or its error (a failure with a reason is stored too, under
// failKey(key), in the same transaction, when it is final: finalFailure;
// AIP-155). method names the RPC in the request fingerprint. Errors
// without a status (internal ones) and failures that are not final roll
// the transaction back and store nothing: a retry is a new attempt.
func idempotent[R proto.Message](ctx context.Context, s *Service, method, key string, req proto.Message, newResp func() R, apply func(t *txn) (R, error)) (R, error) {
	sc := s.scopeOf(ctx)
	shown := key // the caller's own request's, without his operator
	key = sc.key(key)
	hash := requestHash(method, req)
	var zero R
	var out R
	var failure error
	var wrote bool
	err := s.commit.Update(func(tx *bolt.Tx) error {
		out, failure, wrote = zero, nil, false // this function may run again
		if _, err := forgetStaleFailure(tx, key); err != nil {
			return err
		}
		for _, k := range []string{key, failKey(key)} {
			stored, found, err := store.Lookup(tx, k, hash)
			if errors.Is(err, store.ErrRequestReused) {
				return failf(codes.AlreadyExists, reasonRequestIDReused,
					"%s was used before with a different request", shown)
			}
			if err != nil {
				return err
			}
			if !found {
				continue
			}
			if k != key {
				st := &spb.Status{}
				if err := proto.Unmarshal(stored, st); err != nil {
					return err
				}
				failure = status.FromProto(st).Err()
				return nil
			}
			r := newResp()
			if err := proto.Unmarshal(stored, r); err != nil {
				return err
			}
			out = r
			return nil
		}
		t := s.newTxn(tx)
		t.sc, t.sc.all = sc, false
		if isCoupKey(key) && t.op != nil {
			t.op.coup = strings.TrimPrefix(key, "coup/")
		}
		r, err := apply(t)
		if err != nil {
			if !errs.IsStatus(err) {
				return err
			}
			failure = err
			if !finalFailure(key, err) {
				return errNotStored
			}
			b, merr := marshal.Marshal(status.Convert(err).Proto())
			if merr != nil {
				return merr
			}
			return store.Save(tx, failKey(key), hash, b)
		}
		if err := s.commitTxn(t, method, key); err != nil {
			return err
		}
		b, err := marshal.Marshal(r)
		if err != nil {
			return err
		}
		if err := store.Save(tx, key, hash, b); err != nil {
			return err
		}
		// (Seamless: an operator transaction queued without a transfer,
		// e.g. a round_end, wakes the relay too.)
		out, wrote = r, len(t.transfers) > 0 || t.op != nil && t.op.queued
		return nil
	})
	if errors.Is(err, errNotStored) && failure != nil {
		return zero, failure
	}
	if err != nil {
		return zero, s.internal(method, err)
	}
	if wrote {
		s.relay.Notify()
		s.notifyOperator()
	}
	if failure != nil {
		return zero, failure
	}
	return out, nil
}

// newTxn is a txn of tx at the service's clock, with the seamless mode's
// working set when an operator is configured.
func (s *Service) newTxn(tx *bolt.Tx) *txn {
	t := newTxn(tx, s.now(), s.currency)
	t.gap, t.known = s.sessionGap, s.cur.known
	// The service's own jobs (the hold sweep, recovery) see every
	// operator's holds; a request's transaction gets its scope (txnFor).
	t.sc = scope{op: s.opID, def: s.opID, all: true}
	if s.op != nil {
		t.op = newOpTxn(tx, t.nowT, s.currency)
	}
	return t
}

// txnFor is newTxn for a request of ctx's scope: it sees its operator's
// holds only.
func (s *Service) txnFor(ctx context.Context, tx *bolt.Tx) *txn {
	t := s.newTxn(tx)
	t.sc = s.scopeOf(ctx)
	t.sc.all = false
	return t
}

// commitTxn writes a successful transaction: the seamless mode's sweep
// (sweepOut), the metrics (observe) and the ledger (flush). method and key
// are the request's; empty for the hold sweep.
func (s *Service) commitTxn(t *txn, method, key string) error {
	if err := t.sweepOut(); err != nil {
		return err
	}
	if err := t.savePlaced(); err != nil {
		return err
	}
	s.metrics.observe(t, method, key)
	return t.flush()
}

// internal passes status errors through and hides others behind INTERNAL.
func (s *Service) internal(method string, err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	s.log.Error("ledger transaction failed", "method", method, "err", err)
	return status.Error(codes.Internal, "wallet: internal error")
}
