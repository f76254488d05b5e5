package e2e

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// TestCrashAtEveryStep kills table-svc (a real process, built with -tags
// failpoints) at each step of a coup in turn: with a bet held by the
// wallet but not stored, after each stored action, after each card, after
// the decision, and after the wallet settled but before the table stored
// it. Started again on the same bbolt file, with the client retrying what
// was cut off, the coup finishes exactly as it would have: the same cards,
// the money moved once, no hold left behind.
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
	for _, fp := range []string{"AcceptBank", "bet-held", "PlaceBet", "card-1", "card-2", "card-3", "card-4",
		"DecideDraw", "card-5", "after-settle"} {
		t.Run(fp, func(t *testing.T) { crashAndResume(t, bin, fp) })
	}
}

func crashAndResume(t *testing.T, bin, failpoint string) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

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
	tableAddr := freeAddr(t)
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
	runTable := func(env ...string) *exec.Cmd {
		cmd := exec.Command(bin, "-listen", tableAddr, "-data-dir", dir, "-shoe-addr", shoe.Addr(),
			"-wallet-addr", wallet.Addr(), "-nats-url", ns.ClientURL(), "-log-level", "error",
			"-tls-cert", tc.CertFile, "-tls-key", tc.KeyFile, "-tls-ca", tc.CAFile)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitServing(t, tableAddr, gwCreds.DialOption(trust.Table))
		return cmd
	}
	proc := runTable("CHEMMY_TABLE_FAILPOINT=" + failpoint)
	crashed := false

	c := dial(t, gw.Addr())
	c.fund(t, 5000, "alice", "bob", "carol")
	// Player 2C 3D = 5, banker TH 6S = 6: bob, holding the hand, draws 4H
	// (9); the banker stands on 6 against a 4 (CF-PLAYER-DRAW,
	// CF-BANKER-DRAW); the bank loses 1000.
	order := []string{"2C", "TH", "3D", "6S", "4H"}
	for i := 0; i < 20; i++ {
		order = append(order, "KD")
	}
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{RequestId: "order", Cards: order, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "crash-table", ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: &tablev1.HouseRules{CertificationRealMoney: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	// Each step takes a request-id suffix: a request cut off before the
	// table stored it is rolled back (REQUEST_ABANDONED) and sent again
	// with a new id, as a client would.
	steps := []func(again string) error{}
	for _, p := range []string{"alice", "bob", "carol"} {
		steps = append(steps, func(again string) error {
			_, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "join-" + p + again, TableId: id, PlayerId: p})
			return err
		})
	}
	steps = append(steps,
		func(again string) error {
			_, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "bank" + again, TableId: id, PlayerId: "alice", Amount: 1000})
			return err
		},
		func(again string) error {
			_, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "bet-bob" + again, TableId: id, PlayerId: "bob", Amount: 600})
			return err
		},
		func(again string) error {
			_, err := c.table.PlaceBet(as(t, "carol"), &tablev1.PlaceBetRequest{RequestId: "bet-carol" + again, TableId: id, PlayerId: "carol", Amount: 400})
			return err
		},
		func(again string) error {
			_, err := c.table.DecideDraw(as(t, "bob"), &tablev1.DecideDrawRequest{RequestId: "draw" + again, TableId: id, PlayerId: "bob", Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
			return err
		},
	)
	for i, step := range steps {
		err := step("")
		if err == nil {
			continue
		}
		if crashed {
			t.Fatalf("step %d after the restart: %v", i, err)
		}
		// The process died at the failpoint: restart it and retry.
		var exit *exec.ExitError
		if werr := proc.Wait(); !errors.As(werr, &exit) || exit.ExitCode() != 86 {
			t.Fatalf("step %d failed (%v) but table-svc did not die at %s: %v", i, err, failpoint, werr)
		}
		crashed = true
		runTable()
		waitState(t, c, id) // the restarted service finishes what was automatic
		err = step("")
		if errs.Reason(err) == "REQUEST_ABANDONED" {
			err = step("-again")
		}
		if err != nil {
			t.Fatalf("step %d retried after the restart: %v", i, err)
		}
	}
	if !crashed {
		t.Fatalf("table-svc never reached failpoint %s", failpoint)
	}
	tbl := waitState(t, c, id)
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
	want := map[string]int64{"player:alice": 4000, "player:bob": 5600, "player:carol": 5400, "house:commission": 0}
	got := c.balances(t)
	for a, w := range want {
		if got[a] != w {
			t.Errorf("%s = %d, want %d (money moved once)", a, got[a], w)
		}
	}
	for _, p := range []string{"alice", "bob", "carol"} {
		resp, err := c.wallet.GetAccount(as(t, "operator"), &walletv1.GetAccountRequest{AccountId: "player:" + p})
		if err != nil || resp.GetAccount().GetHeld() != 0 {
			t.Errorf("%s still has %d held (%v)", p, resp.GetAccount().GetHeld(), err)
		}
	}
}

// waitState waits until the table is in no automatic state (DEALING,
// SETTLING) and returns it.
func waitState(t *testing.T, c *client, id string) *tablev1.Table {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
		if err == nil {
			st := resp.GetTable().GetState()
			if st != tablev1.TableState_TABLE_STATE_DEALING && st != tablev1.TableState_TABLE_STATE_SETTLING {
				return resp.GetTable()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("table %s never settled down: %v", id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
