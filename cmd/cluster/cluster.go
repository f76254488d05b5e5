// Package cluster is the local rehearsal of the Kubernetes topology
// (deploy/k8s): real processes on 127.0.0.1, each on free ports, started
// from built binaries with the flags of the manifests.
//
//   - a NATS JetStream cluster of three nodes (nats-0, nats-1, nats-2: the
//     nats-server binary, one configuration file each, routes between the
//     three over mutual TLS, a file store per node, every client an nkey
//     user with the permissions of package natsauth), the stream CHEMMY
//     replicated on all three (created before the services start);
//   - wallet-svc, one;
//   - Shards shards, shard k a shoe-svc (shoe-svc-k) and a table-svc
//     (table-svc-k) both started with -shard=table-svc-k, as a
//     StatefulSet pod's name, the table-svc calling its own shoe-svc;
//   - Gateways gateways (gateway-0, ...), each with every shard's address
//     in its -table-addr and -shoe-addr lists.
//
// Between the services: mutual TLS with a throw-away CA (<DataDir>/tls);
// the services list the three NATS nodes and reconnect to another when
// theirs goes away. Each process writes its log to <DataDir>/logs/<name>.log
// (appended across restarts) and keeps its files in <DataDir>/<name>, so a
// process restarted (Restart) or a cluster started again on the same
// directory finds its data. `chemmy cluster` and `make cluster` run it.
package cluster

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats.go"

	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// NATSNodes is the size of the NATS cluster, and the replicas of the
// stream CHEMMY.
const NATSNodes = 3

// Process names. Wallet is wallet-svc's; the others are numbered.
const Wallet = "wallet-svc"

// NATSName is the name of NATS node i ("nats-0").
func NATSName(i int) string { return "nats-" + strconv.Itoa(i) }

// TableName is the name of shard k's table-svc ("table-svc-0"), also the
// shard's -shard value (a StatefulSet pod's name).
func TableName(k int) string { return "table-svc-" + strconv.Itoa(k) }

// ShoeName is the name of shard k's shoe-svc ("shoe-svc-0").
func ShoeName(k int) string { return "shoe-svc-" + strconv.Itoa(k) }

// GatewayName is the name of gateway g ("gateway-0").
func GatewayName(g int) string { return "gateway-" + strconv.Itoa(g) }

// Binaries are the files Start runs from Config.BinDir (Build makes them).
var Binaries = []string{"nats-server", "wallet-svc", "shoe-svc", "table-svc", "gateway"}

// Config configures a cluster. Zero values take the defaults given.
type Config struct {
	// Shards is the number of table-svc shards, each with its shoe-svc;
	// default 2, at most 16.
	Shards int
	// Gateways is the number of gateways; default 2.
	Gateways int
	// DataDir holds every process's files, their logs (logs/), the
	// certificates (tls/), the NATS nkeys (nats-keys/) and the NATS
	// configuration files; required. One cluster at a time uses it
	// (cluster.lock).
	DataDir string
	// BinDir holds the Binaries; required.
	BinDir string
	// TokensFile is the gateways' token file (-tokens); required.
	TokensFile string
	// RateLimit is the gateways' -rate-limit (calls per second per
	// caller); 0: the gateway's default, negative: none.
	RateLimit float64
	// LogLevel of the services (debug, info, warn, error); default info.
	LogLevel string
	// Currency of the wallet; default EUR.
	Currency string
	// ReadyTimeout bounds the wait for each process to be ready at Start
	// and Restart; default 60s.
	ReadyTimeout time.Duration
	// Logger gets the cluster's own messages (a process that exits
	// without being told to); default slog.Default().
	Logger *slog.Logger
}

// Cluster is a running rehearsal. Its addresses are fixed at Start and
// kept across restarts of its processes.
type Cluster struct {
	// NATSURL lists the three nodes' client URLs, comma-separated, as the
	// services are given it; NATSURLs one each.
	NATSURL  string
	NATSURLs []string
	// WalletAddr is wallet-svc's gRPC address.
	WalletAddr string
	// TableAddrs and ShoeAddrs: shard k's table-svc and shoe-svc at k.
	TableAddrs, ShoeAddrs []string
	// GatewayAddrs are the gateways' public gRPC addresses (plaintext, as
	// behind an ingress), GatewayHTTPAddrs their HTTP/JSON addresses.
	GatewayAddrs, GatewayHTTPAddrs []string
	// MetricsAddrs: each service's /metrics, /healthz, /readyz address,
	// and each NATS node's monitoring address, by process name.
	MetricsAddrs map[string]string
	// PKI is the CA and the certificates; NATSKeys the nkeys (ReaderSeed
	// is the read-only user's seed file).
	PKI      *trust.DevPKI
	NATSKeys *natsauth.DevKeys
	// DataDir and LogDir (<DataDir>/logs).
	DataDir, LogDir string

	cfg   Config
	procs map[string]*proc
	names []string // in the order of start
	lock  *flock.Flock
	once  sync.Once
	err   error
}

// Start starts the cluster: NATS, the stream, wallet-svc, the shoe-svcs,
// the table-svcs, the gateways, each waited for (its /readyz, or a NATS
// node's /healthz) before the next group starts. On error whatever it
// started is stopped. ctx bounds the start only; the processes run until
// Stop.
func Start(ctx context.Context, c Config) (_ *Cluster, err error) {
	if c.DataDir == "" || c.BinDir == "" || c.TokensFile == "" {
		return nil, errors.New("cluster: DataDir, BinDir and TokensFile are required")
	}
	c.Shards, c.Gateways = cmp.Or(c.Shards, 2), cmp.Or(c.Gateways, 2)
	if c.Shards < 1 || c.Shards > 16 || c.Gateways < 1 || c.Gateways > 16 {
		return nil, errors.New("cluster: Shards and Gateways must be 1..16")
	}
	c.LogLevel, c.Currency, c.ReadyTimeout = cmp.Or(c.LogLevel, "info"), cmp.Or(c.Currency, "EUR"), cmp.Or(c.ReadyTimeout, time.Minute)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	for _, b := range Binaries {
		if _, err := os.Stat(filepath.Join(c.BinDir, b)); err != nil {
			return nil, fmt.Errorf("cluster: binary %s: %w (Build makes them; make cluster does)", b, err)
		}
	}
	tokens, err := filepath.Abs(c.TokensFile)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	dataDir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dataDir, "logs"), 0o700); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	lock := flock.New(filepath.Join(dataDir, "cluster.lock"))
	if ok, err := lock.TryLock(); err != nil || !ok {
		return nil, fmt.Errorf("cluster: the data directory %s is in use by another cluster (lock %s): stop it, or use another directory (%v)", dataDir, lock.Path(), err)
	}
	cl := &Cluster{cfg: c, DataDir: dataDir, LogDir: filepath.Join(dataDir, "logs"), procs: map[string]*proc{},
		MetricsAddrs: map[string]string{}, lock: lock}
	defer func() {
		if err != nil {
			_ = cl.Stop()
		}
	}()
	cl.PKI, err = trust.NewDevPKI(filepath.Join(dataDir, "tls"), trust.Gateway, trust.Table, trust.Wallet, trust.Shoe, "nats")
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	cl.NATSKeys, err = natsauth.NewDevKeys(filepath.Join(dataDir, "nats-keys"))
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	used := portAllocator{}
	ports := func(n int) ([]int, error) {
		out := make([]int, n)
		for i := range out {
			if out[i], err = used.next(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }

	// NATS: three nodes with their routes, started together (each waits
	// for its routes), then the stream.
	np, err := ports(3 * NATSNodes)
	if err != nil {
		return nil, err
	}
	routes := np[2*NATSNodes:]
	natsConf := cl.PKI.Config("nats")
	var nodes []string
	for i := range NATSNodes {
		name := NATSName(i)
		cl.NATSURLs = append(cl.NATSURLs, "nats://"+addr(np[i]))
		cl.MetricsAddrs[name] = addr(np[NATSNodes+i])
		dir := filepath.Join(dataDir, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		conf := filepath.Join(dir, "nats.conf")
		text := natsConfig(natsNode{Name: name, Port: np[i], HTTPPort: np[NATSNodes+i], RoutePort: routes[i], RoutePorts: routes,
			StoreDir: filepath.Join(dir, "jetstream"), CertFile: natsConf.CertFile, KeyFile: natsConf.KeyFile, CAFile: natsConf.CAFile,
			Users: cl.NATSKeys.ServerUsers()})
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		healthz := "http://" + cl.MetricsAddrs[name] + "/healthz"
		cl.add(name, "nats-server", []string{"-c", conf}, func(ctx context.Context) error { return httpOK(ctx, healthz) })
		nodes = append(nodes, name)
	}
	cl.NATSURL = strings.Join(cl.NATSURLs, ",")
	if err := cl.startGroup(ctx, nodes); err != nil {
		return nil, err
	}
	if err := cl.createStream(ctx); err != nil {
		return nil, err
	}

	// The services, with the flags of deploy/k8s/base.
	common := func(name, identity, nkeyUser string) []string {
		t := cl.PKI.Config(identity)
		return []string{"-metrics-addr=" + cl.MetricsAddrs[name], "-tls-cert=" + t.CertFile, "-tls-key=" + t.KeyFile, "-tls-ca=" + t.CAFile,
			"-nats-url=" + cl.NATSURL, "-nats-nkey=" + cl.NATSKeys.SeedFile(nkeyUser), "-stream-replicas=" + strconv.Itoa(NATSNodes),
			"-log-level=" + c.LogLevel, "-data-dir=" + filepath.Join(dataDir, name)}
	}
	svc := func(name string) (listen string, err error) {
		p, err := ports(2)
		if err != nil {
			return "", err
		}
		cl.MetricsAddrs[name] = addr(p[1])
		return addr(p[0]), nil
	}
	if cl.WalletAddr, err = svc(Wallet); err != nil {
		return nil, err
	}
	cl.addService(Wallet, "wallet-svc", cl.WalletAddr, append(common(Wallet, trust.Wallet, natsauth.Wallet),
		"-listen="+cl.WalletAddr, "-currency="+c.Currency))
	var shoes, tables, gateways []string
	for k := range c.Shards {
		shoe, table := ShoeName(k), TableName(k)
		shoeAddr, err := svc(shoe)
		if err != nil {
			return nil, err
		}
		tableAddr, err := svc(table)
		if err != nil {
			return nil, err
		}
		cl.ShoeAddrs = append(cl.ShoeAddrs, shoeAddr)
		cl.TableAddrs = append(cl.TableAddrs, tableAddr)
		cl.addService(shoe, "shoe-svc", shoeAddr, append(common(shoe, trust.Shoe, natsauth.Shoe),
			"-shard="+table, "-listen="+shoeAddr))
		cl.addService(table, "table-svc", tableAddr, append(common(table, trust.Table, natsauth.Table),
			"-shard="+table, "-listen="+tableAddr, "-shoe-addr="+shoeAddr, "-wallet-addr="+cl.WalletAddr))
		shoes, tables = append(shoes, shoe), append(tables, table)
	}
	for g := range c.Gateways {
		name := GatewayName(g)
		p, err := ports(3)
		if err != nil {
			return nil, err
		}
		cl.GatewayAddrs = append(cl.GatewayAddrs, addr(p[0]))
		cl.GatewayHTTPAddrs = append(cl.GatewayHTTPAddrs, addr(p[1]))
		cl.MetricsAddrs[name] = addr(p[2])
		t := cl.PKI.Config(trust.Gateway)
		args := []string{"-listen=" + addr(p[0]), "-http-addr=" + addr(p[1]), "-metrics-addr=" + addr(p[2]),
			"-tls-cert=" + t.CertFile, "-tls-key=" + t.KeyFile, "-tls-ca=" + t.CAFile, "-tokens=" + tokens,
			"-table-addr=" + strings.Join(cl.TableAddrs, ","), "-shoe-addr=" + strings.Join(cl.ShoeAddrs, ","),
			"-wallet-addr=" + cl.WalletAddr, "-log-level=" + c.LogLevel}
		if c.RateLimit != 0 {
			args = append(args, "-rate-limit="+strconv.FormatFloat(c.RateLimit, 'g', -1, 64))
		}
		cl.addService(name, "gateway", addr(p[0]), args)
		gateways = append(gateways, name)
	}
	for _, group := range [][]string{{Wallet}, shoes, tables, gateways} {
		if err := cl.startGroup(ctx, group); err != nil {
			return nil, err
		}
	}
	return cl, nil
}

// createStream creates the stream CHEMMY replicated on the three nodes
// (outbox's other limits), as the wallet's user, before any service
// would create it; it retries while the cluster elects its JetStream
// leaders.
func (cl *Cluster) createStream(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, cl.cfg.ReadyTimeout)
	defer cancel()
	for {
		err := outbox.CreateStreamAt(ctx, cl.NATSURL, "chemmy-cluster", cl.NATSKeys.SeedFile(natsauth.Wallet),
			outbox.StreamLimits{Replicas: NATSNodes}, 5*time.Second, cl.cfg.Logger, nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.Wallet)))
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: the stream %s was not created: %w", outbox.StreamName, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// add registers a process; it is started by startGroup.
func (cl *Cluster) add(name, bin string, args []string, ready func(context.Context) error) {
	cl.procs[name] = &proc{name: name, bin: filepath.Join(cl.cfg.BinDir, bin), args: args, ready: ready,
		log: filepath.Join(cl.LogDir, name+".log"), logger: cl.cfg.Logger}
	cl.names = append(cl.names, name)
}

// addService registers a chemmy service: ready when its /readyz answers
// 200 and its gRPC address takes connections.
func (cl *Cluster) addService(name, bin, grpcAddr string, args []string) {
	readyz := "http://" + cl.MetricsAddrs[name] + "/readyz"
	cl.add(name, bin, args, func(ctx context.Context) error {
		if err := httpOK(ctx, readyz); err != nil {
			return err
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", grpcAddr)
		if err != nil {
			return err
		}
		return conn.Close()
	})
}

// startGroup starts the named processes at once and waits until each is
// ready.
func (cl *Cluster) startGroup(ctx context.Context, names []string) error {
	for _, n := range names {
		if err := cl.procs[n].start(); err != nil {
			return err
		}
	}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cl.procs[n].waitReady(ctx, cl.cfg.ReadyTimeout)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Names lists the processes in the order of start: the NATS nodes,
// wallet-svc, the shoe-svcs, the table-svcs, the gateways.
func (cl *Cluster) Names() []string {
	out := slices.Clone(cl.names)
	slices.SortStableFunc(out, func(a, b string) int { return groupOf(a) - groupOf(b) })
	return out
}

// groupOf is the start group of a process: 0 the NATS nodes, 1
// wallet-svc, 2 the shoe-svcs, 3 the table-svcs, 4 the gateways.
func groupOf(name string) int {
	switch {
	case strings.HasPrefix(name, "nats-"):
		return 0
	case name == Wallet:
		return 1
	case strings.HasPrefix(name, "shoe-svc-"):
		return 2
	case strings.HasPrefix(name, "table-svc-"):
		return 3
	}
	return 4
}

func (cl *Cluster) proc(name string) (*proc, error) {
	p, ok := cl.procs[name]
	if !ok {
		return nil, fmt.Errorf("cluster: no process %q (have %s)", name, strings.Join(cl.names, ", "))
	}
	return p, nil
}

// Kill sends SIGKILL to the named process (NATSName, Wallet, ShoeName,
// TableName, GatewayName) and waits until it is gone: a crash, nothing
// flushed. Killing a process that is not running does nothing.
func (cl *Cluster) Kill(name string) error {
	p, err := cl.proc(name)
	if err != nil {
		return err
	}
	p.signal(syscall.SIGKILL, 0)
	return nil
}

// Restart starts the named process again with the same flags, addresses
// and data, and waits until it is ready (ctx and Config.ReadyTimeout
// bound the wait). A process still running is stopped first (SIGTERM).
func (cl *Cluster) Restart(ctx context.Context, name string) error {
	p, err := cl.proc(name)
	if err != nil {
		return err
	}
	p.signal(syscall.SIGTERM, stopGrace)
	if err := p.start(); err != nil {
		return err
	}
	return p.waitReady(ctx, cl.cfg.ReadyTimeout)
}

// stopGrace is how long a process has to stop after SIGTERM before it is
// killed.
const stopGrace = 30 * time.Second

// Stop stops every process with SIGTERM, one group after the other, each
// drained before the next: the gateways (no new calls), the table-svcs
// (the coups in play reach a stored step while shoe and wallet answer),
// the shoe-svcs, wallet-svc, the NATS nodes. A process still running
// after 30s is killed. It returns the failures of processes that exited
// other than cleanly, and releases the data directory; calling it again
// returns the same.
func (cl *Cluster) Stop() error {
	cl.once.Do(func() {
		groups := map[int][]*proc{}
		for _, n := range cl.names {
			groups[groupOf(n)] = append(groups[groupOf(n)], cl.procs[n])
		}
		var errs []error
		for g := 4; g >= 0; g-- {
			var wg sync.WaitGroup
			for _, p := range groups[g] {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p.signal(syscall.SIGTERM, stopGrace)
				}()
			}
			wg.Wait()
			for _, p := range groups[g] {
				if err := p.exitErr(); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if cl.lock != nil {
			_ = cl.lock.Unlock()
		}
		cl.err = errors.Join(errs...)
	})
	return cl.err
}

// PID is the process id of the named process; 0 when it is not running.
func (cl *Cluster) PID(name string) int {
	p, err := cl.proc(name)
	if err != nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// LogFile is the path of the named process's log.
func (cl *Cluster) LogFile(name string) string { return filepath.Join(cl.LogDir, name+".log") }

// ReaderSeed is the nkey seed file of NATS's read-only user.
func (cl *Cluster) ReaderSeed() string { return cl.NATSKeys.SeedFile(natsauth.Reader) }

// proc is one process of the cluster, started again with the same
// command line after a kill.
type proc struct {
	name, bin string
	args      []string
	log       string
	ready     func(context.Context) error
	logger    *slog.Logger

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	err  error         // cmd.Wait's, once done
	told bool          // the exit was asked for (signal)
	kill bool          // ... by Kill: a crash on purpose, not a failure
}

// start runs the process, its output appended to its log. It must not be
// running.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.exited() {
		return fmt.Errorf("cluster: %s is running", p.name)
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	fmt.Fprintf(f, "--- %s start: %s %s\n", time.Now().Format(time.RFC3339Nano), p.bin, strings.Join(p.args, " "))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = childEnv()
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("cluster: start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err, p.told, p.kill = cmd, done, nil, false, false
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(f, "--- %s exit: %v\n", time.Now().Format(time.RFC3339Nano), cmd.ProcessState)
		f.Close()
		p.mu.Lock()
		p.err = err
		told := p.told
		p.mu.Unlock()
		if !told {
			p.logger.Warn("cluster: a process exited by itself", "process", p.name, "state", cmd.ProcessState.String(), "log", p.log)
		}
		close(done)
	}()
	return nil
}

// exited says whether the current command has exited; p.mu held.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig and waits until the process has exited; after grace
// (when not 0) it is killed. A process not running is left alone.
func (p *proc) signal(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	if p.cmd == nil || p.exited() {
		p.mu.Unlock()
		return
	}
	p.told, p.kill = true, sig == syscall.SIGKILL
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	_ = cmd.Process.Signal(sig)
	if grace == 0 {
		<-done
		return
	}
	select {
	case <-done:
	case <-time.After(grace):
		p.logger.Warn("cluster: a process did not stop in time; killed", "process", p.name, "after", grace)
		_ = cmd.Process.Kill()
		<-done
	}
}

// exitErr is the failure of the last run: nil when it exited with status
// 0 (or never ran), otherwise its state and the end of its log.
func (p *proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.err == nil || p.kill {
		return nil
	}
	return fmt.Errorf("%s: %v\n%s", p.name, p.err, tail(p.log, 10))
}

// waitReady waits until ready says so, the process exits (an error with
// the end of its log) or timeout passes.
func (p *proc) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	var last error
	for {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		last = p.ready(rctx)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("cluster: %s exited while starting:\n%s", p.name, tail(p.log, 15))
		case <-ctx.Done():
			return fmt.Errorf("cluster: %s not ready: %v (log %s)", p.name, last, p.log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// httpOK gets url and wants 200.
func httpOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// portAllocator hands out TCP ports free on 127.0.0.1, each once. It
// picks them below the kernel's ephemeral range (from 20000 up), where no
// outgoing connection can take one between the pick and the process's
// bind (a port of the ephemeral range, as a listener on :0 gets, may be
// taken meanwhile by any connection of the machine).
type portAllocator map[int]bool

func (used portAllocator) next() (int, error) {
	lo, hi := 20000, ephemeralLow()
	for range 200 {
		if hi-lo < 1000 {
			break
		}
		p := lo + rand.IntN(hi-lo)
		if used[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l.Close()
		used[p] = true
		return p, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cluster: free port: %w", err)
	}
	defer l.Close()
	p := l.Addr().(*net.TCPAddr).Port
	used[p] = true
	return p, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux:
// /proc/sys/net/ipv4/ip_local_port_range), 32768 when unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// childEnv is this process's environment without the CHEMMY_ variables,
// which the services would take as defaults of flags the cluster does
// not give (CHEMMY_INSECURE above all).
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CHEMMY_") {
			out = append(out, kv)
		}
	}
	return out
}

// tail is the last n lines of the file at path.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
