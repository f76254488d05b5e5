package e2e

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// repoRoot is the repository's top directory (this package is cmd/e2e).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// tokensFile is the demo token file of the local stack.
func tokensFile(t *testing.T) string {
	return filepath.Join(repoRoot(t), "deploy", "local", "tokens.yaml")
}

// startStack starts the whole suite on random ports with temporary files,
// as in production (mutual TLS, assertions, NATS nkeys), with the demo
// tokens and no rate limit (tests fire calls faster than a person; the
// limits have their own test).
func startStack(t *testing.T) *stack.Stack {
	t.Helper()
	return startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1}})
}

// startStackWith starts the suite with c, in a temporary directory, quiet
// below warnings, stopped when the test ends.
func startStackWith(t *testing.T, c stack.Config) *stack.Stack {
	t.Helper()
	c.DataDir = t.TempDir()
	c.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	st, err := stack.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Stop()
		if err := st.Wait(); err != nil {
			t.Errorf("stack stopped with: %v", err)
		}
	})
	return st
}

// client talks to the gateway with a demo token per call.
type client struct {
	conn   *grpc.ClientConn
	table  tablev1.TableServiceClient
	wallet walletv1.WalletServiceClient
	shoe   shoev1.ShoeServiceClient
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return &client{conn: cc, table: tablev1.NewTableServiceClient(cc),
		wallet: walletv1.NewWalletServiceClient(cc), shoe: shoev1.NewShoeServiceClient(cc)}
}

// as returns a context whose calls carry the demo token of who
// ("alice", "operator", ...).
func as(t *testing.T, who string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token")
}

// balance is an account's balance (0 for an account never funded).
func (c *client) balance(t *testing.T, account string) int64 {
	t.Helper()
	resp, err := c.wallet.GetAccount(as(t, "operator"), &walletv1.GetAccountRequest{AccountId: account})
	if err != nil {
		t.Fatalf("GetAccount %s: %v", account, err)
	}
	return resp.GetAccount().GetBalance()
}

// balances reads the demo players' and the house's balances.
func (c *client) balances(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, a := range []string{"player:alice", "player:bob", "player:carol", "house:commission"} {
		out[a] = c.balance(t, a)
	}
	return out
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// fund deposits amount to each player.
func (c *client) fund(t *testing.T, amount int64, players ...string) {
	t.Helper()
	for _, p := range players {
		_, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{
			RequestId: t.Name() + "/deposit/" + p, AccountId: "player:" + p, Amount: amount,
		})
		if err != nil {
			t.Fatalf("deposit %s: %v", p, err)
		}
	}
}

// lookPath finds grpcurl: $GRPCURL, the repo's bin/ (make tools), or PATH.
func grpcurlPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GRPCURL"); p != "" {
		return p
	}
	if p := filepath.Join(repoRoot(t), "bin", "grpcurl"); fileExists(p) {
		return p
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if p := filepath.Join(dir, "grpcurl"); fileExists(p) {
			return p
		}
	}
	t.Fatal("grpcurl not found: run `make tool-grpcurl` (make test does) or set GRPCURL")
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
