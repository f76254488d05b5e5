package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// TestCrashAtEveryStep kills table-svc (a real process, built once with
// -tags failpoints) at each step of a coup in turn, one subtest per step,
// each on a stack of its own. Chemin de fer (the subtests named by their
// step): with a bet held by the wallet but not stored, after each stored
// action, after each card, after the decision, and after the wallet
// settled but before the table stored it. The games on a core (subtests
// punto_banco/..., old_baccarat/..., banque/..., crash_games_test.go):
// with a hold not stored, after a stored action, after each card, the
// fee, the move of top cards and the settlement carried out but not
// stored. Started again on the same bbolt file, with the client retrying
// what was cut off, the coup finishes exactly as it would have: the same
// cards, the money moved once, no hold left behind.
func TestCrashAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a process")
	}
	bin := filepath.Join(t.TempDir(), "table-svc")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "failpoints", "-o", bin, "github.com/chemmy/chemmy/table-svc")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build table-svc: %v\n%s", err, out)
	}
	for _, fp := range []string{"AcceptBank", "core-hold-place_bet", "PlaceBet", "card-1", "card-2", "card-3", "card-4",
		"DecideDraw", "card-5", "after-settle"} {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			crashAndResume(t, bin, fp)
		})
	}
	for _, g := range coreCrashGames {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, fp := range g.failpoints {
				t.Run(fp, func(t *testing.T) {
					t.Parallel()
					g.run(newCrashRig(t, bin, fp, g.calm))
				})
			}
		})
	}
}

// crashRig is the stack of one crash test: NATS, shoe-svc, wallet-svc
// and the gateway in the test's process, table-svc a process of the
// failpoints build, first armed to die at one failpoint, then, once it
// has, started again without on the same files and address.
type crashRig struct {
	t         *testing.T
	c         *client // through the gateway
	failpoint string
	// calm says the table is not in the middle of what the service does
	// by itself (a deal, a settlement): after a restart the client waits
	// for it, as a client waits for what it sees moving.
	calm    func(*tablev1.Table) bool
	start   func(env ...string) *tableProc
	proc    *tableProc
	crashed bool
	tableID string // the table whose calm is awaited after a restart
}

// tableProc is a running table-svc; done is closed once it has exited,
// err then its exit.
type tableProc struct {
	done chan struct{}
	err  error
}

// exited reports whether the process has exited, waiting up to d.
func (p *tableProc) exited(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// crashAddr is a loopback address with a port free right now. On Linux
// every 127/8 address is the loopback: each test takes one of its own, so
// that while its table-svc is down (between the crash and the restart)
// nothing else listening on 127.0.0.1 (the other tests' services) can
// take its port.
func crashAddr(t *testing.T) string {
	t.Helper()
	host := "127.0.0.1"
	if runtime.GOOS == "linux" {
		n := crashHosts.Add(1)
		host = fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(250), n/250%250, 1+n%250)
	}
	l, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var crashHosts atomic.Int64

// newCrashRig starts the stack with table-svc armed at failpoint. calm
// says the table is not moving by itself (nil: neither DEALING nor
// SETTLING).
func newCrashRig(t *testing.T, bin, failpoint string, calm func(*tablev1.Table) bool) *crashRig {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: filepath.Join(dir, "nats"), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats not ready")
	}
	pki, err := trust.NewDevPKI(filepath.Join(dir, "tls"), trust.Gateway, trust.Table, trust.Wallet, trust.Shoe)
	if err != nil {
		t.Fatal(err)
	}
	shoe, err := shoesvc.Start(ctx, shoesvc.Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(dir, "shoe.db"), NATSURL: ns.ClientURL(), Trust: pki.Config(trust.Shoe)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shoe.Stop(); _ = shoe.Wait() })
	wallet, err := walletsvc.Start(ctx, walletsvc.Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(dir, "wallet.db"), NATSURL: ns.ClientURL(), Trust: pki.Config(trust.Wallet)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wallet.Stop(); _ = wallet.Wait() })
	tableAddr := crashAddr(t)
	gw, err := gateway.Start(ctx, gateway.Config{ListenAddr: "127.0.0.1:0", TokensFile: tokensFile(t), TableAddr: tableAddr, WalletAddr: wallet.Addr(), ShoeAddr: shoe.Addr(),
		Trust: pki.Config(trust.Gateway), Limits: gateway.LimitConfig{Rate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Stop(); _ = gw.Wait() })

	tc := pki.Config(trust.Table)
	// The health check connects as the gateway would (mutual TLS).
	gwCreds, err := trust.Load(pki.Config(trust.Gateway))
	if err != nil {
		t.Fatal(err)
	}
	if calm == nil {
		calm = notDealing
	}
	r := &crashRig{t: t, failpoint: failpoint, calm: calm}
	r.start = func(env ...string) *tableProc {
		cmd := exec.Command(bin, "-listen", tableAddr, "-data-dir", dir, "-shoe-addr", shoe.Addr(),
			"-wallet-addr", wallet.Addr(), "-nats-url", ns.ClientURL(), "-log-level", "error",
			"-tls-cert", tc.CertFile, "-tls-key", tc.KeyFile, "-tls-ca", tc.CAFile)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p := &tableProc{done: make(chan struct{})}
		go func() { p.err = cmd.Wait(); close(p.done) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.done })
		waitServing(t, tableAddr, gwCreds.DialOption(trust.Table))
		return p
	}
	r.proc = r.start("CHEMMY_TABLE_FAILPOINT=" + failpoint)
	r.c = dial(t, gw.Addr())
	return r
}

// restart starts table-svc again, once it has died at the failpoint (and
// only then: any other exit, or a second one, fails the test), and waits
// until the table is calm.
func (r *crashRig) restart() {
	r.t.Helper()
	var exit *exec.ExitError
	if !errors.As(r.proc.err, &exit) || exit.ExitCode() != 86 {
		r.t.Fatalf("table-svc exited with %v, not at failpoint %s", r.proc.err, r.failpoint)
	}
	if r.crashed {
		r.t.Fatalf("table-svc died twice at %s: the restarted one has no failpoint", r.failpoint)
	}
	r.crashed = true
	r.t.Logf("table-svc died at %s; started again", r.failpoint)
	r.proc = r.start()
	if r.tableID != "" {
		r.settle(r.tableID)
	}
}

// do makes a client's call. When it fails because table-svc died, the
// service is started again and the call retried with the same request id,
// or, once answered REQUEST_ABANDONED (the request was rolled back), with
// a new one (the suffix again), as a client would.
func (r *crashRig) do(what string, call func(again string) error) {
	r.t.Helper()
	err := call("")
	if err == nil {
		return
	}
	if r.crashed || !r.proc.exited(10*time.Second) {
		r.t.Fatalf("%s: %v", what, err)
	}
	r.restart()
	again := ""
	for deadline := time.Now().Add(20 * time.Second); ; {
		err := call(again)
		switch {
		case err == nil:
			return
		case errs.Reason(err) == "REQUEST_ABANDONED" && again == "":
			r.t.Logf("%s: rolled back (REQUEST_ABANDONED); sent again with a new request id", what)
			again = "-again"
			continue
		case status.Code(err) != codes.Unavailable || time.Now().After(deadline):
			r.t.Fatalf("%s retried after the restart: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond) // the gateway reconnecting
	}
}

// get is the table as the croupier sees it; an error while table-svc is
// down or the gateway reconnects.
func (r *crashRig) get(id string) (*tablev1.Table, error) {
	resp, err := r.c.table.GetTable(as(r.t, "croupier"), &tablev1.GetTableRequest{TableId: id})
	return resp.GetTable(), err
}

// poll waits, polling every 50 ms as a client would, until ok says the
// table is as wanted, and returns it. When table-svc dies meanwhile (at a
// step of its own: a deal, a settlement), it is started again.
func (r *crashRig) poll(id, what string, ok func(*tablev1.Table) bool) *tablev1.Table {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tbl, err := r.get(id)
		if err == nil && ok(tbl) {
			return tbl
		}
		if r.proc.exited(0) {
			r.restart()
			continue
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waited 20 s for %s: %v (%v)", what, tbl, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settle waits until the table is calm.
func (r *crashRig) settle(id string) *tablev1.Table {
	r.t.Helper()
	return r.poll(id, "the table to settle down", r.calm)
}

// notDealing: the table is neither dealing nor settling.
func notDealing(tbl *tablev1.Table) bool {
	st := tbl.GetState()
	return st != tablev1.TableState_TABLE_STATE_DEALING && st != tablev1.TableState_TABLE_STATE_SETTLING
}

// checkAccounts checks the accounts' balances and what they still hold
// (want, held: only those named; an account not named in held holds
// nothing), and that they add up to deposits.
func (r *crashRig) checkAccounts(deposits int64, want, held map[string]int64) {
	r.t.Helper()
	var total int64
	for a, w := range want {
		acct := r.c.account(r.t, a)
		total += acct.GetBalance()
		if acct.GetBalance() != w {
			r.t.Errorf("%s = %d, want %d (money moved once)", a, acct.GetBalance(), w)
		}
		if acct.GetHeld() != held[a] {
			r.t.Errorf("%s holds %d, want %d", a, acct.GetHeld(), held[a])
		}
	}
	if total != deposits {
		r.t.Errorf("money not conserved: the accounts hold %d, %d was deposited", total, deposits)
	}
}

// preparedShoe opens a test shoe dealing cards, then kings.
func (r *crashRig) preparedShoe(cards ...string) string {
	r.t.Helper()
	order := append([]string(nil), cards...)
	for len(order) < 40 {
		order = append(order, "KD")
	}
	sh, err := r.c.shoe.CreateShoeFromOrder(as(r.t, "operator"), &shoev1.CreateShoeFromOrderRequest{RequestId: "order", Cards: order, TestShoe: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return sh.GetShoe().GetShoeId()
}

// createTable opens the table of the test and returns its id.
func (r *crashRig) createTable(req *tablev1.CreateTableRequest) string {
	r.t.Helper()
	req.RequestId = "crash-table"
	created, err := r.c.table.CreateTable(as(r.t, "operator"), req)
	if err != nil {
		r.t.Fatal(err)
	}
	r.tableID = created.GetTable().GetTableId()
	return r.tableID
}

// join seats players, on a side when side is given (banque).
func (r *crashRig) join(id string, side tablev1.BanqueSide, players ...string) {
	for _, p := range players {
		r.do("JoinTable "+p, func(again string) error {
			_, err := r.c.table.JoinTable(as(r.t, p), &tablev1.JoinTableRequest{RequestId: "join-" + p + again, TableId: id, PlayerId: p, Side: side})
			return err
		})
	}
}

// bet places a bet (spot: punto banco; side: banque; neither: old
// baccarat's stake).
func (r *crashRig) bet(id, p string, amount int64, spot tablev1.BetSpot, side tablev1.BanqueSide) {
	r.do("PlaceBet "+p, func(again string) error {
		_, err := r.c.table.PlaceBet(as(r.t, p), &tablev1.PlaceBetRequest{RequestId: "bet-" + p + again, TableId: id, PlayerId: p,
			Amount: amount, Spot: spot, Side: side})
		return err
	})
}

// crashAndResume plays a coup of chemin de fer with table-svc armed to die
// at failpoint.
func crashAndResume(t *testing.T, bin, failpoint string) {
	r := newCrashRig(t, bin, failpoint, nil)
	c := r.c
	c.fund(t, 5000, "alice", "bob", "carol")
	// Player 2C 3D = 5, banker TH 6S = 6: bob, holding the hand, draws 4H
	// (9); the banker stands on 6 against a 4 (CF-PLAYER-DRAW,
	// CF-BANKER-DRAW); the bank loses 1000.
	id := r.createTable(&tablev1.CreateTableRequest{ShoeId: r.preparedShoe("2C", "TH", "3D", "6S", "4H"),
		HouseRules: &tablev1.HouseRules{CertificationRealMoney: true}})
	r.join(id, 0, "alice", "bob", "carol")
	r.do("AcceptBank", func(again string) error {
		_, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "bank" + again, TableId: id, PlayerId: "alice", Amount: 1000})
		return err
	})
	r.bet(id, "bob", 600, 0, 0)
	r.bet(id, "carol", 400, 0, 0)
	r.do("DecideDraw", func(again string) error {
		_, err := c.table.DecideDraw(as(t, "bob"), &tablev1.DecideDrawRequest{RequestId: "draw" + again, TableId: id, PlayerId: "bob", Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
		return err
	})
	tbl := r.settle(id)
	if !r.crashed {
		t.Fatalf("table-svc never reached failpoint %s", failpoint)
	}
	if tbl.GetCoupsPlayed() != 1 {
		t.Fatalf("the coup was not finished after the restart: %v", tbl)
	}
	last := tbl.GetLastCoup()
	if got := cardCodes(last.GetPlayerCards()) + "|" + cardCodes(last.GetBankerCards()); got != "2C 3D 4H|TH 6S" {
		t.Errorf("cards %s, want 2C 3D 4H|TH 6S", got)
	}
	if last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES || last.GetCommission() != 0 {
		t.Errorf("coup %v; want the bank to lose", last)
	}
	r.checkAccounts(15000, map[string]int64{"player:alice": 4000, "player:bob": 5600, "player:carol": 5400, "house:commission": 0}, nil)
}

func cardCodes(cards []*shoev1.Card) string {
	s := ""
	for i, c := range cards {
		if i > 0 {
			s += " "
		}
		s += c.GetCode()
	}
	return s
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// waitServing waits until the gRPC health service at addr says SERVING.
func waitServing(t *testing.T, addr string, creds grpc.DialOption) {
	t.Helper()
	cc, err := grpc.NewClient(addr, creds)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never served", addr)
}
