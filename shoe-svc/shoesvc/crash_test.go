package shoesvc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

// TestCrashDuringDeals runs shoe-svc as a real process (built with -tags
// failpoints) and kills it with SIGKILL again and again while a client
// deals a shoe as table-svc does (request ids "<coup>/card/<n>", a failed
// call retried with the same id after the restart): inside the deal's
// bbolt transaction, right after its commit, and at random moments.
// Restarted on the same file the shoe goes on at the right card: every
// acknowledged card keeps its position, positions are 0, 1, 2, ... with no
// gap or repeat, and after the close the reveal verifies and lists exactly
// the cards the client saw.
func TestCrashDuringDeals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a process")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "shoe-svc")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "failpoints", "-o", bin, ".")
	build.Dir = ".." // the shoe-svc module
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var proc *exec.Cmd
	var conn *grpc.ClientConn
	var c shoev1.ShoeServiceClient
	start := func(env ...string) {
		t.Helper()
		proc = exec.Command(bin, "-listen", addr, "-data-dir", dir, "-log-level", "error", "-insecure")
		proc.Env = append(os.Environ(), env...)
		proc.Stderr = os.Stderr
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
		conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		c = shoev1.NewShoeServiceClient(conn)
		deadline := time.Now().Add(20 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			cancel()
			if err == nil && h.Status == healthpb.HealthCheckResponse_SERVING {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("shoe-svc not serving: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	stop := func() { // waits for the process to be gone
		_ = proc.Process.Kill()
		_ = proc.Wait()
		conn.Close()
	}
	t.Cleanup(func() {
		if proc != nil && proc.ProcessState == nil {
			stop()
		}
	})

	start()
	ctx := as(tableSvc)
	cr, err := c.CreateShoe(ctx, &shoev1.CreateShoeRequest{RequestId: "create", Decks: 8, ClientSeed: "crash-test"})
	if err != nil {
		t.Fatal(err)
	}
	shoe := cr.Shoe
	total := int(shoe.CardsTotal)
	reqID := func(n int) string { return fmt.Sprintf("coup-%d/card/%d", n/6, n%6) }
	var seen []string // card code at each acknowledged position
	kills := 0
	cutOutAt := -1
	// Each round arms one crash, deals until the process dies (or the
	// coup with the cut card is complete), then restarts.
	for round := 0; ; round++ {
		done := false
		switch round % 3 {
		case 0, 1:
			stop()
			fp := []string{"deal-in-tx", "deal-after-commit"}[round%3]
			start("CHEMMY_SHOE_FAILPOINT="+fp, fmt.Sprintf("CHEMMY_SHOE_FAILPOINT_AFTER=%d", 1+rng.IntN(40)))
		case 2:
			stop()
			start()
			p := proc.Process
			time.AfterFunc(time.Duration(5+rng.IntN(60))*time.Millisecond, func() { _ = p.Kill() })
		}
		for {
			n := len(seen)
			if cutOutAt >= 0 && n/6 != cutOutAt/6 {
				done = true
				break
			}
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			resp, err := c.DealCard(cctx, &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: reqID(n)})
			cancel()
			if err != nil {
				kills++
				break // the process died; the same id is retried after the restart
			}
			if int(resp.Position) != n {
				t.Fatalf("request %s: position %d, want %d (a card skipped or dealt twice)", reqID(n), resp.Position, n)
			}
			seen = append(seen, resp.Card.Code)
			if resp.CutCardOut && cutOutAt < 0 {
				cutOutAt = n
			}
			if n+1 == total {
				done = true
				break
			}
		}
		if done {
			break
		}
		if round > 200 {
			t.Fatal("too many rounds")
		}
	}
	// The last round's timed kill (round%3 == 2) may still be pending and
	// hit the checks below: check them on a fresh process (the old one's
	// timer kills only the old one). The answers must survive a restart
	// anyway.
	stop()
	start()
	// Every acknowledged deal answers the same after all the restarts.
	for _, n := range []int{0, len(seen) / 2, len(seen) - 1} {
		r, err := c.DealCard(ctx, &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: reqID(n)})
		if err != nil || int(r.Position) != n || r.Card.Code != seen[n] {
			t.Fatalf("retry of %s: %v %v, first %s", reqID(n), r, err, seen[n])
		}
	}
	if _, err := c.CloseShoe(ctx, &shoev1.CloseShoeRequest{RequestId: "close", ShoeId: shoe.ShoeId}); err != nil {
		t.Fatal(err)
	}
	rv, err := c.GetShoeReveal(ctx, &shoev1.GetShoeRevealRequest{ShoeId: shoe.ShoeId})
	if err != nil {
		t.Fatal(err)
	}
	if err := fair.Verify(FairReveal(rv.Reveal)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rv.Reveal.Dealt) != fmt.Sprint(seen) {
		t.Fatal("the reveal's dealt cards differ from the acknowledged ones")
	}
	stop()
	t.Logf("%d cards dealt through %d kills; cut card out at %d; reveal verifies", len(seen), kills, cutOutAt)
	if kills < 5 {
		t.Fatalf("only %d kills", kills)
	}
}
