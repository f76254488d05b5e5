package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestRunLogsEachCall: `chemmy run` at its default log level writes an
// access line for each call, at the gateway and at the service it
// reaches: the method, the code, the duration and the caller.
func TestRunLogsEachCall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	var out, errOut lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, []string{"-data-dir", t.TempDir(), "-tokens", demoTokens, "-listen", "127.0.0.1:0", "-http", "",
			"-metrics-addr", "", "-nats-port", "-1"}, &out, &errOut)
	}()
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == ""; time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "gateway" {
				addr = f[1]
			}
		}
		select {
		case code := <-done:
			t.Fatalf("chemmy run exited %d:\n%s\n%s", code, out.String(), errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("chemmy run did not start:\n%s\n%s", out.String(), errOut.String())
		}
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	call := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer croupier-token")
	if _, err := tablev1.NewTableServiceClient(cc).ListTables(call, &tablev1.ListTablesRequest{}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("chemmy run exited %d", code)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(errOut.String(), "\n") {
		if !strings.Contains(l, `msg="finished call"`) || !strings.Contains(l, "grpc.method=ListTables") {
			continue
		}
		for _, want := range []string{"level=INFO", "grpc.code=OK", "grpc.time_ms=", "caller=croupier-1", "role=croupier"} {
			if !strings.Contains(l, want) {
				t.Errorf("access line without %s: %s", want, l)
			}
		}
		for _, svc := range []string{"gateway", "table-svc"} {
			if strings.Contains(l, "service="+svc+" ") {
				seen[svc] = true
			}
		}
	}
	if !seen["gateway"] || !seen["table-svc"] {
		t.Errorf("access lines of ListTables from %v, want the gateway's and table-svc's:\n%s", seen, errOut.String())
	}
}
