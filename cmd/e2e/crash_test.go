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
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// TestCrashBetweenDealAndSettlement kills table-svc (a real process,
// built with -tags failpoints) in the middle of a coup, once right after
// the fourth card is stored and once right after wallet-svc has settled but
// before the table has stored it. Started again on the same bbolt file,
// table-svc finishes the coup once: the same cards, the money moved once.
func TestCrashBetweenDealAndSettlement(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a process")
	}
	bin := filepath.Join(t.TempDir(), "table-svc")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "failpoints", "-o", bin, "github.com/chemmy/chemmy/table-svc")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build table-svc: %v\n%s", err, out)
	}
	for _, fp := range []string{"after-deal", "after-settle"} {
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
	shoe, err := shoesvc.Start(ctx, shoesvc.Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(dir, "shoe.db"), NATSURL: ns.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shoe.Stop(); _ = shoe.Wait() })
	wallet, err := walletsvc.Start(ctx, walletsvc.Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(dir, "wallet.db"), NATSURL: ns.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wallet.Stop(); _ = wallet.Wait() })
	tableAddr := freeAddr(t)
	gw, err := gateway.Start(ctx, gateway.Config{ListenAddr: "127.0.0.1:0", TokensFile: tokensFile(t), TableAddr: tableAddr, WalletAddr: wallet.Addr(), ShoeAddr: shoe.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Stop(); _ = gw.Wait() })

	runTable := func(env ...string) *exec.Cmd {
		cmd := exec.Command(bin, "-listen", tableAddr, "-data-dir", dir, "-shoe-addr", shoe.Addr(),
			"-wallet-addr", wallet.Addr(), "-nats-url", ns.ClientURL(), "-log-level", "warn")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitServing(t, tableAddr)
		return cmd
	}
	proc := runTable("CHEMMY_TABLE_FAILPOINT=" + failpoint)

	c := dial(t, gw.Addr())
	c.fund(t, 5000, "alice", "bob", "carol")
	// Player 2C TH, banker 3D 4S: player 2 draws 4C (6); banker 7 stands
	// on 7 against a 4 (CF-PLAYER-DRAW, CF-BANKER-DRAW); the bank wins.
	order := []string{"2C", "3D", "TH", "4S", "4C"}
	for i := 0; i < 20; i++ {
		order = append(order, "KD")
	}
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{RequestId: "order", Cards: order})
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "crash-table", ShoeId: sh.GetShoe().GetShoeId()})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "join-" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "bet-bob", TableId: id, PlayerId: "bob", Amount: 600}); err != nil {
		t.Fatal(err)
	}
	lastBet := &tablev1.PlaceBetRequest{RequestId: "bet-carol", TableId: id, PlayerId: "carol", Amount: 400}
	if _, err := c.table.PlaceBet(as(t, "carol"), lastBet); err == nil {
		t.Fatalf("the last bet answered although table-svc should have died at %s", failpoint)
	}
	var exit *exec.ExitError
	if err := proc.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 86 {
		t.Fatalf("table-svc did not die at the failpoint: %v", err)
	}

	runTable() // same file, no failpoint
	var tbl *tablev1.Table
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
		if err == nil && resp.GetTable().GetCoupsPlayed() == 1 {
			tbl = resp.GetTable()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tbl == nil {
		t.Fatal("the coup was not finished after the restart")
	}
	// The client's retry of the bet that was cut off changes nothing.
	if _, err := c.table.PlaceBet(as(t, "carol"), lastBet); err != nil {
		t.Fatalf("retrying the last bet: %v", err)
	}
	last := tbl.GetLastCoup()
	if got := cardCodes(last.GetPlayerCards()) + "|" + cardCodes(last.GetBankerCards()); got != "2C TH 4C|3D 4S" {
		t.Errorf("cards %s, want 2C TH 4C|3D 4S", got)
	}
	if last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS || last.GetCommission() != 50 || tbl.GetBank() != 1950 {
		t.Errorf("coup %v, bank %d; want bank wins, commission 50, bank 1950", last, tbl.GetBank())
	}
	want := map[string]int64{"player:alice": 5950, "player:bob": 4400, "player:carol": 4600, "house:commission": 50}
	got := c.balances(t)
	for a, w := range want {
		if got[a] != w {
			t.Errorf("%s = %d, want %d (money moved once)", a, got[a], w)
		}
	}
	if sum(got) != 15000 {
		t.Errorf("money not conserved: %v", got)
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
func waitServing(t *testing.T, addr string) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
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
