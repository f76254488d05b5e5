package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
	"github.com/chemmy/chemmy/table-svc/tablesvc"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// Service names, as the simulation and its trace call them.
const (
	svcShoe   = "shoe"
	svcWallet = "wallet"
	svcTable  = "table"
	svcNATS   = "nats"
)

// devMode: services believe the identity metadata, so the simulation acts
// as any player, croupier, operator or auditor (see package trust).
var devMode = trust.Config{Insecure: true}

// cluster is the suite in this process: an embedded NATS with JetStream,
// shoe-svc, wallet-svc and table-svc, each on a port chosen once and kept
// across restarts, each on its own bbolt file (NATS on its own store
// directory), and the simulation's clients of them.
type cluster struct {
	dir    string
	log    *slog.Logger
	clock  *clock
	faults *faults
	// relay: the faults of the services' outbox relays (relay.go).
	relay *relayFaults
	// interruptAfter is table-svc's Config.InterruptAfter (0: its default).
	interruptAfter time.Duration
	// tableStart is the simulated time table-svc last started at.
	tableStart time.Time

	natsPort                        int
	shoeAddr, walletAddr, tableAddr string

	nats   *server.Server
	shoe   *shoesvc.Service
	wallet *walletsvc.Service
	table  *tablesvc.Service

	mu sync.Mutex
	up map[string]bool
	// bases are the running services' parts (Config.Hook); killed the
	// services killed and not yet started again, each with the copy of
	// its store at the kill; kills counts them by service (kill.go).
	bases   map[string]*app.Base
	killed  map[string]string
	kills   map[string]int
	killErr error
	// natsDownSince: when NATS stopped (real time); natsLong: it stays
	// down at least longNATSOutage of real time.
	natsDownSince time.Time
	natsLong      bool

	conns   []*grpc.ClientConn
	tables  tablev1.TableServiceClient
	wallets walletv1.WalletServiceClient
	shoes   shoev1.ShoeServiceClient
}

// newCluster starts the suite. dupWindow > 0: the event stream is
// created first, with that duplicate window (the services never change
// an existing stream). interruptAfter is table-svc's limit for a coup
// that cannot go on (0: its default).
func newCluster(dir string, log *slog.Logger, clk *clock, f *faults, rf *relayFaults, dupWindow, interruptAfter time.Duration) (*cluster, error) {
	c := &cluster{dir: dir, log: log, clock: clk, faults: f, relay: rf, interruptAfter: interruptAfter, up: map[string]bool{},
		bases: map[string]*app.Base{}, killed: map[string]string{}, kills: map[string]int{}}
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	c.natsPort = ports[0]
	c.shoeAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
	c.walletAddr = "127.0.0.1:" + strconv.Itoa(ports[2])
	c.tableAddr = "127.0.0.1:" + strconv.Itoa(ports[3])
	f.isUp = c.isUp
	f.kill = c.kill
	stream := func() error {
		if dupWindow <= 0 {
			return nil
		}
		return createStream(c.natsURL(), dupWindow)
	}
	for _, start := range []func() error{c.startNATS, stream, c.startShoe, c.startWallet, c.startTable} {
		if err := start(); err != nil {
			c.close()
			return nil, err
		}
	}
	c.tables = tablev1.NewTableServiceClient(c.dial(c.tableAddr, svcTable))
	c.wallets = walletv1.NewWalletServiceClient(c.dial(c.walletAddr, svcWallet))
	c.shoes = shoev1.NewShoeServiceClient(c.dial(c.shoeAddr, svcShoe))
	return c, nil
}

// createStream creates the event stream CHEMMY as the services would
// (atomic batch publish allowed: the relays keep the events in order),
// but with the given duplicate window.
func createStream(url string, dupWindow time.Duration) error {
	nc, err := nats.Connect(url, nats.Name("chemmy-sim"))
	if err != nil {
		return fmt.Errorf("sim: nats: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "CHEMMY", Subjects: []string{"chemmy.>"}, Storage: jetstream.FileStorage, Duplicates: dupWindow,
		AllowAtomicPublish: true,
	})
	if err != nil {
		return fmt.Errorf("sim: create the event stream: %w", err)
	}
	return nil
}

// freePorts finds n free loopback ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func (c *cluster) isUp(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up[name]
}

func (c *cluster) setUp(name string, up bool) {
	c.mu.Lock()
	c.up[name] = up
	c.mu.Unlock()
}

func (c *cluster) natsURL() string { return "nats://127.0.0.1:" + strconv.Itoa(c.natsPort) }

// retryListen retries a start that may fail while the port is still held
// by the instance just stopped (the listener closes asynchronously).
func retryListen(start func() error) error {
	var err error
	for range 100 {
		if err = start(); err == nil || !strings.Contains(err.Error(), "address already in use") {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

func (c *cluster) startNATS() error {
	c.mu.Lock()
	wait := time.Until(c.natsDownSince.Add(longNATSOutage))
	long := c.natsLong
	c.natsLong = false
	c.mu.Unlock()
	if long && wait > 0 {
		// A long outage: NATS stays away past the relays' ack timeout.
		time.Sleep(wait)
	}
	err := retryListen(func() error {
		ns, err := server.NewServer(&server.Options{
			ServerName: "chemmy-sim", Host: "127.0.0.1", Port: c.natsPort, JetStream: true,
			StoreDir: filepath.Join(c.dir, "nats"), NoLog: true, NoSigs: true,
		})
		if err != nil {
			return err
		}
		ns.Start()
		if !ns.ReadyForConnections(10 * time.Second) {
			ns.Shutdown()
			ns.WaitForShutdown()
			return errors.New("sim: embedded nats did not start (address already in use?)")
		}
		c.nats = ns
		return nil
	})
	if err != nil {
		return fmt.Errorf("sim: nats: %w", err)
	}
	c.setUp(svcNATS, true)
	return nil
}

// stopNATSFor stops NATS; long: it stays down at least longNATSOutage of
// real time.
func (c *cluster) stopNATSFor(long bool) {
	c.mu.Lock()
	c.natsDownSince, c.natsLong = time.Now(), long
	c.mu.Unlock()
	c.stopNATS()
}

func (c *cluster) stopNATS() {
	c.setUp(svcNATS, false)
	if c.nats != nil {
		c.nats.Shutdown()
		c.nats.WaitForShutdown()
		c.nats = nil
	}
}

func (c *cluster) startShoe() error {
	err := retryListen(func() error {
		s, err := shoesvc.Start(context.Background(), shoesvc.Config{ListenAddr: c.shoeAddr, DBPath: filepath.Join(c.dir, "shoe.db"),
			NATSURL: c.natsURL(), Trust: devMode, Logger: c.log, Hook: c.hook(svcShoe)})
		c.shoe = s
		return err
	})
	if err != nil {
		return fmt.Errorf("sim: start shoe-svc: %w", err)
	}
	c.setUp(svcShoe, true)
	return nil
}

func (c *cluster) startWallet() error {
	err := retryListen(func() error {
		s, err := walletsvc.Start(context.Background(), walletsvc.Config{ListenAddr: c.walletAddr, DBPath: filepath.Join(c.dir, "wallet.db"),
			NATSURL: c.natsURL(), Trust: devMode, Logger: c.log, HoldSweepInterval: -1, Hook: c.hook(svcWallet)})
		c.wallet = s
		return err
	})
	if err != nil {
		return fmt.Errorf("sim: start wallet-svc: %w", err)
	}
	c.setUp(svcWallet, true)
	return nil
}

// startTable starts table-svc without its background loop (the driver
// ticks it) and runs its start-up recovery.
func (c *cluster) startTable() error {
	err := retryListen(func() error {
		s, err := tablesvc.Start(context.Background(), tablesvc.Config{
			ListenAddr: c.tableAddr, DBPath: filepath.Join(c.dir, "table.db"),
			ShoeAddr: c.shoeAddr, WalletAddr: c.walletAddr, NATSURL: c.natsURL(),
			RetryInterval: -1, Clock: c.clock.Now, Trust: devMode, Logger: c.log, InterruptAfter: c.interruptAfter, Hook: c.hook(svcTable),
			DialOptions: []grpc.DialOption{
				grpc.WithChainUnaryInterceptor(c.faults.intercept),
				grpc.WithConnectParams(fastReconnect),
			},
		})
		c.table = s
		return err
	})
	if err != nil {
		return fmt.Errorf("sim: start table-svc: %w", err)
	}
	c.setUp(svcTable, true)
	c.tableStart = c.clock.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.table.Recover(ctx); err != nil && !c.pendingKill(svcTable) {
		return fmt.Errorf("sim: table-svc recovery: %w", err)
	}
	return nil
}

// stop stops a service (Stop, then Wait: its calls finish, its file is
// closed).
func (c *cluster) stop(name string) error {
	c.setUp(name, false)
	var s interface {
		Stop()
		Wait() error
	}
	switch name {
	case svcShoe:
		s = c.shoe
	case svcWallet:
		s = c.wallet
	case svcTable:
		s = c.table
	case svcNATS:
		c.stopNATS()
		return nil
	}
	s.Stop()
	return s.Wait()
}

// start starts a service, and again those its start killed (reap).
func (c *cluster) start(name string) error {
	if err := c.startOnly(name); err != nil {
		return err
	}
	return c.reap()
}

// startOnly starts a service (on another port when its own was taken).
func (c *cluster) startOnly(name string) error {
	var err error
	switch name {
	case svcShoe:
		err = c.startShoe()
	case svcWallet:
		err = c.startWallet()
	case svcTable:
		err = c.startTable()
	case svcNATS:
		return c.startNATS()
	default:
		return fmt.Errorf("sim: no service %q", name)
	}
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		return err
	}
	return c.move(name)
}

// move starts a service on another port, when another process took its
// port while it was down (tests of other packages run alongside), and
// points its callers there: table-svc is restarted for a new shoe-svc or
// wallet-svc address; the simulation's client follows a new table-svc.
func (c *cluster) move(name string) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	switch name {
	case svcShoe, svcWallet:
		if name == svcShoe {
			c.shoeAddr = addr
			if err = c.startShoe(); err == nil {
				c.shoes = shoev1.NewShoeServiceClient(c.dial(c.shoeAddr, svcShoe))
			}
		} else {
			c.walletAddr = addr
			if err = c.startWallet(); err == nil {
				c.wallets = walletv1.NewWalletServiceClient(c.dial(c.walletAddr, svcWallet))
			}
		}
		if err != nil || !c.isUp(svcTable) {
			return err
		}
		if err := c.stop(svcTable); err != nil {
			return err
		}
		return c.startTable()
	case svcTable:
		c.tableAddr = addr
		if err := c.startTable(); err != nil {
			return err
		}
		c.tables = tablev1.NewTableServiceClient(c.dial(c.tableAddr, svcTable))
	}
	return nil
}

// close stops everything that runs, table-svc first.
func (c *cluster) close() {
	for _, cc := range c.conns {
		_ = cc.Close()
	}
	for _, name := range []string{svcTable, svcWallet, svcShoe} {
		if c.isUp(name) {
			_ = c.stop(name)
		}
	}
	c.stopNATS()
}

// fastReconnect lets a connection find a restarted service at once, so
// that a call after a restart never waits for a long backoff.
var fastReconnect = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 10 * time.Millisecond, Multiplier: 1.5, Jitter: 0.1, MaxDelay: 100 * time.Millisecond},
	MinConnectTimeout: 2 * time.Second,
}

// dial is the simulation's own client of a service: it waits for the
// connection to be ready and retries a call that failed in the transport
// (a connection the service closed when it restarted). The driver never
// calls a service it knows is down.
func (c *cluster) dial(addr, name string) *grpc.ClientConn {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(fastReconnect), grpc.WithChainUnaryInterceptor(transportRetry))
	if err != nil {
		panic(err) // only for a malformed address
	}
	c.conns = append(c.conns, cc)
	return cc
}

// transportRetry waits for the connection to be ready and repeats a call
// that failed in the transport (UNAVAILABLE with no ErrorInfo: no service
// answered). Every call of the suite is idempotent, and the simulation
// never stops a service with a call in flight, so a repeat is safe and
// changes nothing of what the simulation does: it hides the only
// scheduling race that real sockets add (a connection to the old process
// noticed closed only at the next call).
func transportRetry(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	opts = append(opts, grpc.WaitForReady(true))
	var err error
	for range 50 {
		err = invoker(ctx, method, req, reply, cc, opts...)
		if !transportError(err) || ctx.Err() != nil {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
	return err
}

// transportError reports whether err is a failure of the connection
// rather than an answer of the service.
func transportError(err error) bool {
	return status.Code(err) == codes.Unavailable && errs.Reason(err) == ""
}
