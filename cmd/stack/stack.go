// Package stack starts the whole chemmy suite in one process: an embedded
// NATS server with JetStream (unless an external one is named) and the
// four services, each on its own address with its own bbolt file under
// one data directory. `chemmy run` uses it, and so do the end-to-end
// tests, with random ports and a temporary directory.
//
// It runs the suite as production does: at each start it makes a
// throw-away CA and a certificate per service in <DataDir>/tls (mutual
// TLS between all services, caller assertions signed by the gateway), and
// nkeys in <DataDir>/nats-keys with which each service authenticates to
// the embedded NATS, allowed to publish only its own subjects (reader.nk
// is the read-only user's seed, for `nats sub`).
package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/chemmy/chemmy/gateway/gateway"
	"github.com/chemmy/chemmy/services/kit/currency"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/shard"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
	"github.com/chemmy/chemmy/table-svc/tablesvc"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// Config configures the stack. Zero values take the defaults given.
type Config struct {
	// DataDir holds shoe.db, wallet.db, table.db and the embedded NATS
	// store (nats/); required.
	DataDir string
	// GatewayAddr is the public address; default "127.0.0.1:0".
	GatewayAddr string
	// GatewayHTTPAddr is the gateway's HTTP/JSON address (Connect,
	// NDJSON streams, the table console); empty serves none.
	GatewayHTTPAddr string
	// MetricsAddr serves /metrics of every service (each series labelled
	// service: gateway, table-svc, wallet-svc, shoe-svc; and shard with
	// several shards) and of the process, /healthz and /readyz (Ready);
	// empty serves none.
	MetricsAddr string
	// ShoeAddr, WalletAddr, TableAddr are the services' addresses;
	// default "127.0.0.1:0" each (a free port). With several shards they
	// are shard 0's and the other shards take free ports.
	ShoeAddr, WalletAddr, TableAddr string
	// Shards is the number of table-svc shards, each with its own
	// shoe-svc (package shard); default 1 (ids without a shard prefix).
	// Shard 0 keeps its files in DataDir, shard k its own in
	// DataDir/shard-k; the gateway routes by the shard in the ids.
	Shards int
	// TokensFile is the gateway's token file; required unless JWKS or
	// OperatorsFile is given.
	TokensFile string
	// NATSURL of an external NATS with JetStream; empty starts an
	// embedded one on 127.0.0.1 at NATSPort (default: a free port).
	NATSURL  string
	NATSPort int
	// Currency of the wallet; default "EUR".
	Currency string
	// Currencies the wallet accepts besides ISO 4217's
	// (walletsvc.Config.Currencies).
	Currencies currency.Set
	// LimitsOverride: walletsvc.Config.LimitsOverride.
	LimitsOverride bool
	// Wallet is the wallet mode: "transfer" (default: wallet-svc holds the
	// players' money, funded by Deposit) or "seamless" (the operator's
	// wallet holds it and wallet-svc debits and credits it round by round;
	// docs/operator-wallet.md). A data dir keeps the mode it was first
	// started in: Start refuses the other before it starts anything
	// (walletsvc.CheckMode; chemmy wallet migrate changes it).
	Wallet string
	// Operator is the seamless operator's wallet. When nil in seamless
	// mode the stack starts the reference operator wallet (package
	// refwallet) in process at OperatorWalletAddr (default a free port),
	// its books in DataDir/operator/opwallet.db, its HMAC secret and admin
	// token made on first start in DataDir/operator/ and kept.
	Operator           opwallet.Operator
	OperatorWalletAddr string
	// OperatorFaults are the reference operator wallet's injected faults
	// (none by default).
	OperatorFaults refwallet.Faults
	// OperatorID names the operator in the reconciliation report
	// (walletsvc.Config.OperatorID; default "operator").
	OperatorID string
	// Stream: the limits of the CHEMMY event stream, created with them
	// before the services start when it does not exist (an existing stream
	// is never changed); zero fields take outbox's defaults (7 days,
	// 1 GiB, 1 replica); limits outbox.StreamLimits.Validate refuses fail
	// Start.
	Stream outbox.StreamLimits
	// InterruptAfter is how long table-svc lets a coup stay unable to go
	// on before its result before voiding it, every bet returned
	// (tablesvc.Config.InterruptAfter); 0: tablesvc.DefaultInterruptAfter.
	InterruptAfter time.Duration
	// SeedWindow is how long table-svc gives the players to reveal their
	// committed seeds, and a new shoe's commitment round after an
	// abandoned one (tablesvc.Config.SeedWindow, table-svc -seed-window);
	// 0: tablesvc.DefaultSeedWindow.
	SeedWindow time.Duration
	// Insecure runs the services in plaintext development mode (identity
	// metadata believed; see package trust). Off by default.
	Insecure bool
	// Gateway settings: operator JWTs (one issuer, the default
	// operator's, or an operators file: gateway.Config), reload interval,
	// abuse limits. The operators file and the reload interval are
	// wallet-svc's too (each operator's currencies and seamless wallet:
	// walletsvc.Config.OperatorsFile).
	JWKS, JWTIssuer, JWTAudience string
	OperatorsFile                string
	ReloadInterval               time.Duration
	Limits                       gateway.LimitConfig
	// GatewayConn: the caps on the gateway's public connections and
	// their timeouts (gateway.ConnConfig; zero values: the defaults).
	GatewayConn gateway.ConnConfig
	Logger      *slog.Logger
}

// Stack is the running suite.
type Stack struct {
	// Addresses, as bound.
	GatewayAddr, ShoeAddr, WalletAddr, TableAddr, NATSURL string
	// TableAddrs and ShoeAddrs: every shard's table-svc and shoe-svc,
	// shard i at i (TableAddr and ShoeAddr are shard 0's).
	TableAddrs, ShoeAddrs []string
	// GatewayHTTPAddr is the gateway's HTTP address, as bound (empty when
	// none).
	GatewayHTTPAddr string
	// MetricsAddr is the metrics address, as bound (empty when none).
	MetricsAddr string
	// PKI is the throw-away CA and the services' certificates (nil when
	// Insecure); NATSKeys the services' NATS nkeys (nil with an external
	// NATS).
	PKI      *trust.DevPKI
	NATSKeys *natsauth.DevKeys
	// OperatorWallet is the reference operator wallet the stack started
	// (seamless mode without Config.Operator; nil otherwise), and
	// OperatorAdminTokenFile the file of its admin bearer token.
	OperatorWallet         *refwallet.Server
	OperatorAdminTokenFile string

	nats  *server.Server
	stops []func()
	waits []func() error
	once  sync.Once
	done  chan struct{}
	err   error
	// lock holds the data directory for this stack (chemmy.lock).
	lock *flock.Flock
	// gatherers are the services' registries (metrics.go); serving is
	// true from the end of Start to Stop; readies are the services' Ready
	// by name (the stack's /readyz: Ready), complete once serving.
	gatherers []prometheus.Gatherer
	serving   atomic.Bool
	readies   []namedReady
}

type namedReady struct {
	name  string
	ready func() error
}

// Ready is nil while the stack serves and every service in it can do its
// job, else every reason it cannot, each named by its service (a
// service's events not published, its store not writable: app.Base.Ready;
// the gateway not serving): the stack's /readyz and the gateway's HTTP
// /readyz answer 503 with them.
func (s *Stack) Ready() error {
	if !s.serving.Load() {
		return errors.New("the stack is not serving (starting or stopping)")
	}
	var errs []error
	for _, r := range s.readies {
		if err := r.ready(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.name, err))
		}
	}
	return errors.Join(errs...)
}

// Start starts NATS and the services, in dependency order. On error
// everything already started is stopped. When ctx ends the stack stops as
// Stop does.
func Start(ctx context.Context, c Config) (_ *Stack, err error) {
	if c.DataDir == "" || (c.TokensFile == "" && c.JWKS == "" && c.OperatorsFile == "") {
		return nil, errors.New("stack: DataDir and TokensFile (or JWKS, or OperatorsFile) are required")
	}
	if err := c.Stream.Validate(); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	if c.Wallet != "" && c.Wallet != WalletTransfer && c.Wallet != WalletSeamless {
		return nil, fmt.Errorf("stack: wallet mode %q: want %q or %q", c.Wallet, WalletTransfer, WalletSeamless)
	}
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&c.GatewayAddr, "127.0.0.1:0")
	def(&c.ShoeAddr, "127.0.0.1:0")
	def(&c.WalletAddr, "127.0.0.1:0")
	def(&c.TableAddr, "127.0.0.1:0")
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	// Each service's spans carry its own service.name (grpcx tracing).
	grpcx.SeveralServices()
	s := &Stack{NATSURL: c.NATSURL, done: make(chan struct{})}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	parent := ctx
	// Each service stops when Stop says, in order; not all at once when
	// the caller's context ends.
	ctx = context.WithoutCancel(ctx)
	// One stack per data directory: a second one must fail before it
	// touches anything of the first's (its certificates above all).
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	lock := flock.New(filepath.Join(c.DataDir, "chemmy.lock"))
	if ok, err := lock.TryLock(); err != nil || !ok {
		if err == nil {
			return nil, fmt.Errorf("stack: the data directory %s is in use by another chemmy (lock %s): stop it, or use another -data-dir", c.DataDir, lock.Path())
		}
		return nil, fmt.Errorf("stack: cannot lock the data directory %s (lock %s): %w", c.DataDir, lock.Path(), err)
	}
	s.lock = lock
	// A wallet file of the other wallet mode is refused before anything
	// starts (walletsvc.CheckMode; wallet-svc checks it again).
	if err := walletsvc.CheckMode(filepath.Join(c.DataDir, "wallet.db"), walletMode(c.Wallet)); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	tc := func(string) trust.Config { return trust.Config{Insecure: true} }
	if !c.Insecure {
		s.PKI, err = trust.NewDevPKI(filepath.Join(c.DataDir, "tls"), trust.Gateway, trust.Table, trust.Wallet, trust.Shoe)
		if err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
		tc = s.PKI.Config
	}
	nkey := func(string) string { return "" }
	if s.NATSURL == "" {
		port := c.NATSPort
		if port == 0 {
			port = -1
		}
		s.NATSKeys, err = natsauth.NewDevKeys(filepath.Join(c.DataDir, "nats-keys"))
		if err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
		nkey = s.NATSKeys.SeedFile
		ns, err := server.NewServer(&server.Options{
			Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: filepath.Join(c.DataDir, "nats"),
			NoSigs: true, NoLog: true, Nkeys: s.NATSKeys.ServerUsers(),
		})
		if err != nil {
			return nil, fmt.Errorf("stack: nats: %w", err)
		}
		ns.Start()
		if !ns.ReadyForConnections(10 * time.Second) {
			ns.Shutdown()
			return nil, fmt.Errorf("stack: embedded nats did not start on 127.0.0.1:%d (is the port in use? -nats-port picks another, -1 a free one)", port)
		}
		s.nats = ns
		s.NATSURL = ns.ClientURL()
		// NATS's own metrics, from its monitoring in process (nats.go).
		s.registry("nats").MustRegister(natsCollector{ns})
	}

	// The stream with the stack's limits, before a service creates it with
	// its own; if NATS is not reachable yet, the services' relays will.
	if err := outbox.CreateStreamAt(ctx, s.NATSURL, "chemmy-stack", nkey(natsauth.Wallet), c.Stream, 5*time.Second, c.Logger,
		nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.Wallet))); err != nil {
		c.Logger.Warn("stack: event stream not created at start", "err", err)
	}

	op, err := s.operator(ctx, c)
	if err != nil {
		return nil, err
	}
	wallet, err := walletsvc.Start(ctx, walletsvc.Config{ListenAddr: c.WalletAddr, DBPath: filepath.Join(c.DataDir, "wallet.db"), NATSURL: s.NATSURL,
		NATSNkeyFile: nkey(natsauth.Wallet), Trust: tc(trust.Wallet), Currency: c.Currency, Currencies: c.Currencies, LimitsOverride: c.LimitsOverride, Stream: c.Stream, Logger: c.Logger, Registry: s.registry(trust.Wallet),
		Operator: op, OperatorID: c.OperatorID, OperatorsFile: c.OperatorsFile, OperatorsReloadInterval: c.ReloadInterval})
	if err != nil {
		return nil, err
	}
	s.add(wallet.Stop, wallet.Wait)
	s.readies = append(s.readies, namedReady{trust.Wallet, wallet.Ready})
	s.WalletAddr = wallet.Addr()

	// Each shard's shoe-svc, then each one's table-svc: where
	// the shard keeps its files, the prefix of its ids, its address.
	type tableShard struct{ dir, prefix, addr string }
	var tables []tableShard
	shards := max(c.Shards, 1)
	// With several shards, each shard's services' metrics are labelled
	// shard too.
	shardRegistry := func(name string, k int) *prometheus.Registry {
		if shards == 1 {
			return s.registry(name)
		}
		return s.registry(name, "shard", strconv.Itoa(k))
	}
	for k := range shards {
		dir, prefix, shoeAddr, tableAddr := c.DataDir, "", c.ShoeAddr, c.TableAddr
		if shards > 1 {
			prefix = shard.Prefix(k)
		}
		if k > 0 {
			dir, shoeAddr, tableAddr = filepath.Join(c.DataDir, fmt.Sprintf("shard-%d", k)), "127.0.0.1:0", "127.0.0.1:0"
		}
		shoe, err := shoesvc.Start(ctx, shoesvc.Config{ListenAddr: shoeAddr, DBPath: filepath.Join(dir, "shoe.db"), NATSURL: s.NATSURL, IDPrefix: prefix,
			NATSNkeyFile: nkey(natsauth.Shoe), Trust: tc(trust.Shoe), Stream: c.Stream, Logger: c.Logger, Registry: shardRegistry(trust.Shoe, k)})
		if err != nil {
			return nil, err
		}
		s.add(shoe.Stop, shoe.Wait)
		s.readies = append(s.readies, namedReady{shardName(trust.Shoe, k, shards), shoe.Ready})
		s.ShoeAddrs = append(s.ShoeAddrs, shoe.Addr())
		tables = append(tables, tableShard{dir: dir, prefix: prefix, addr: tableAddr})
	}
	s.ShoeAddr = s.ShoeAddrs[0]

	// table-svc counts its calls to shoe-svc and wallet-svc itself
	// (grpc_client_*), and its coups, bets and settlements.
	for k, ts := range tables {
		table, err := tablesvc.Start(ctx, tablesvc.Config{ListenAddr: ts.addr, DBPath: filepath.Join(ts.dir, "table.db"), ShoeAddr: s.ShoeAddrs[k], WalletAddr: s.WalletAddr,
			NATSURL: s.NATSURL, NATSNkeyFile: nkey(natsauth.Table), Trust: tc(trust.Table), Stream: c.Stream, Logger: c.Logger, Registry: shardRegistry(trust.Table, k),
			IDPrefix: ts.prefix, InterruptAfter: c.InterruptAfter, SeedWindow: c.SeedWindow,
			// Its calls to shoe-svc and wallet-svc are table-svc's spans.
			DialOptions: grpcx.ServiceClientTracing(trust.Table),
		})
		if err != nil {
			return nil, err
		}
		s.add(table.Stop, table.Wait)
		if err := table.RegisterGauges(); err != nil {
			return nil, err
		}
		s.readies = append(s.readies, namedReady{shardName(trust.Table, k, len(tables)), table.Ready})
		s.TableAddrs = append(s.TableAddrs, table.Addr())
	}
	s.TableAddr = s.TableAddrs[0]

	gw, err := gateway.Start(ctx, gateway.Config{ListenAddr: c.GatewayAddr, TokensFile: c.TokensFile, TableAddr: strings.Join(s.TableAddrs, ","), WalletAddr: s.WalletAddr, ShoeAddr: strings.Join(s.ShoeAddrs, ","),
		JWKS: c.JWKS, JWTIssuer: c.JWTIssuer, JWTAudience: c.JWTAudience, OperatorsFile: c.OperatorsFile, ReloadInterval: c.ReloadInterval,
		Limits: c.Limits, Conn: c.GatewayConn, Trust: tc(trust.Gateway), Logger: c.Logger, HTTPAddr: c.GatewayHTTPAddr, Registry: s.registry(trust.Gateway),
		Ready: s.Ready})
	if err != nil {
		return nil, err
	}
	s.add(gw.Stop, gw.Wait)
	s.readies = append(s.readies, namedReady{trust.Gateway, gw.Ready})
	s.GatewayAddr = gw.Addr()
	s.GatewayHTTPAddr = gw.HTTPAddr()
	if c.MetricsAddr != "" {
		if err := s.serveMetrics(ctx, c.MetricsAddr, c.Logger); err != nil {
			return nil, err
		}
	}
	s.serving.Store(true)
	go func() {
		select {
		case <-parent.Done():
			s.Stop()
		case <-s.done:
		}
	}()
	return s, nil
}

// shardName is the name of service of shard k of n in the stack's
// readiness: name alone with one shard.
func shardName(name string, k, n int) string {
	if n == 1 {
		return name
	}
	return fmt.Sprintf("%s (shard %d)", name, k)
}

func (s *Stack) add(stop func(), wait func() error) {
	s.stops = append(s.stops, stop)
	s.waits = append(s.waits, wait)
}

// Stop stops the services in reverse order of start, each drained before
// the next: the gateway first (no new calls), then table-svc (the coups in
// play reach a stored step while the shoe and the wallet still answer),
// then wallet-svc and shoe-svc, and the embedded NATS last. It returns
// once everything has stopped; calling it again does nothing.
func (s *Stack) Stop() {
	s.once.Do(func() {
		s.serving.Store(false)
		var errs []error
		for i := len(s.waits) - 1; i >= 0; i-- {
			s.stops[i]()
			if err := s.waits[i](); err != nil {
				errs = append(errs, err)
			}
		}
		if s.nats != nil {
			s.nats.Shutdown()
			s.nats.WaitForShutdown()
		}
		if s.lock != nil {
			_ = s.lock.Unlock()
		}
		s.err = errors.Join(errs...)
		close(s.done)
	})
}

// Wait blocks until the stack has stopped (Stop, or the end of Start's
// context) and returns the services' errors.
func (s *Stack) Wait() error {
	<-s.done
	return s.err
}
