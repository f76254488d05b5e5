package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"

	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// startProbe starts a service with no gRPC service of its own on a
// JetStream server of its own, with a stall time of 200 ms, and returns
// it and its NATS server.
func startProbe(t *testing.T) (*Base, *server.Server) {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats not ready")
	}
	ctx, cancel := context.WithCancel(context.Background())
	b, err := Start(ctx, Config{Name: "probe", ListenAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", DBPath: filepath.Join(t.TempDir(), "probe.db"),
		Schema: 1, NATSURL: ns.ClientURL(), Trust: trust.Config{Insecure: true}, StallAfter: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)},
		func(*Base, *grpc.Server) error { return nil })
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = b.Wait()
	})
	return b, ns
}

// readyz is the code and body of the service's /readyz.
func readyz(t *testing.T, b *Base) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + b.MetricsAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitReadyz polls /readyz every 20 ms, for at most 20 s, until it
// answers code with a body that holds want.
func waitReadyz(t *testing.T, b *Base, code int, want string) {
	t.Helper()
	var got int
	var body string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, body = readyz(t, b); got == code && strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %q, want %d with %q", got, body, code, want)
		}
	}
}

// TestReadyzEventsNotPublished: a service is ready while it publishes its
// events; once NATS is gone and an event waits in its outbox for longer
// than the stall time, /readyz answers 503 saying events are not
// published (it used to say ready throughout).
func TestReadyzEventsNotPublished(t *testing.T) {
	b, ns := startProbe(t)
	waitReadyz(t, b, http.StatusOK, "ready")
	ns.Shutdown()
	ns.WaitForShutdown()
	if err := b.DB.Update(func(tx *bolt.Tx) error { return outbox.Put(tx, "chemmy.probe.p1.thing", "ev-1", []byte{1}) }); err != nil {
		t.Fatal(err)
	}
	b.Relay.Notify()
	waitReadyz(t, b, http.StatusServiceUnavailable, "events are not published: 1 waiting in the outbox")
}

// TestReadyzStoreNotWritable: a service whose store takes no more writes
// (here its file closed under it) answers /readyz 503 saying so.
func TestReadyzStoreNotWritable(t *testing.T) {
	b, _ := startProbe(t)
	waitReadyz(t, b, http.StatusOK, "ready")
	path := b.DB.Path()
	if err := b.DB.Close(); err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, b, http.StatusServiceUnavailable, "store "+path+": ")
}
