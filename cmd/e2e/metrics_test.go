package e2e

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsOfTheStack plays a coup (examples/coup-http.sh) on a stack
// that serves metrics as `make run` does, and reads them: /healthz and
// /readyz of every process, the gRPC client metrics of the gateway and of
// table-svc, table-svc's timers and retry queue, each service's outbox
// relay and the business metrics counted from the events.
func TestMetricsOfTheStack(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl on PATH")
	}
	m := stack.MetricsAddrs{Gateway: freeAddr(t), Table: freeAddr(t), Wallet: freeAddr(t), Shoe: freeAddr(t), Stack: freeAddr(t)}
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1}, GatewayHTTPAddr: "127.0.0.1:0", Metrics: m})
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", "coup-http.sh"))
	cmd.Env = append(os.Environ(), "CHEMMY_HTTP="+st.GatewayHTTPAddr, "CURL="+curl, "RUN_ID=e2e-metrics")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("coup-http.sh: %v\n%s", err, out.String())
	}
	for _, a := range []string{m.Gateway, m.Table, m.Wallet, m.Shoe, m.Stack} {
		for _, p := range []string{"/healthz", "/readyz"} {
			if code, body := get(t, "http://"+a+p); code != 200 {
				t.Errorf("%s%s: %d %s", a, p, code, body)
			}
		}
	}
	want := map[string][]string{
		// Forwarded calls are streams of frames at the gateway, both ways.
		m.Gateway: {`grpc_server_handled_total{grpc_code="OK",grpc_method="PlaceBet",grpc_service="chemmy.table.v1.TableService",grpc_type="bidi_stream"} 2`,
			`grpc_client_handled_total{grpc_code="OK",grpc_method="PlaceBet",grpc_service="chemmy.table.v1.TableService",grpc_type="bidi_stream"} 2`},
		// table-svc: its calls to wallet-svc and shoe-svc, its timers and
		// retry queue, its outbox relay (every event of the coup published).
		m.Table: {`grpc_server_handled_total{grpc_code="OK",grpc_method="PlaceBet",grpc_service="chemmy.table.v1.TableService",grpc_type="unary"} 2`,
			`grpc_client_handled_total{grpc_code="OK",grpc_method="SettleCoup",grpc_service="chemmy.wallet.v1.WalletService",grpc_type="unary"} 1`,
			`grpc_client_handled_total{grpc_code="OK",grpc_method="DealCard",grpc_service="chemmy.shoe.v1.ShoeService",grpc_type="unary"} `,
			"\nchemmy_table_timers_pending ", "\nchemmy_table_stuck 0\n",
			"\nchemmy_outbox_backlog{db=\"table\"} 0\n", `chemmy_outbox_published_total{db="table"} `, `chemmy_outbox_publish_errors_total{db="table"} `,
			// The store's commits and fsyncs, on the service's own port too.
			`chemmy_store_commits_total{db="table"} `, `chemmy_store_fsyncs_total{db="table"} `},
		m.Wallet: {"\nchemmy_outbox_backlog{db=\"wallet\"} 0\n", `chemmy_outbox_published_total{db="wallet"} `, `chemmy_outbox_publish_errors_total{db="wallet"} `},
		m.Shoe:   {"\nchemmy_outbox_backlog{db=\"shoe\"} 0\n", `chemmy_outbox_published_total{db="shoe"} `, `chemmy_outbox_publish_errors_total{db="shoe"} `},
		m.Stack: {`chemmy_bets_total{kind="bet"} 2`, `chemmy_wagered_minor_units_total{kind="bet"} 1000`, `chemmy_coups_total{outcome="OUTCOME_`,
			`chemmy_settlement_seconds_count 1`, `chemmy_events_total{kind="transfer_recorded",type="chemmy.events.v1.WalletEvent"}`},
	}
	deadline := time.Now().Add(15 * time.Second)
	for addr, lines := range want {
		for {
			_, body := get(t, "http://"+addr+"/metrics")
			var missing []string
			for _, l := range lines {
				if !strings.Contains(body, l) {
					missing = append(missing, l)
				}
			}
			if len(missing) == 0 {
				break
			}
			if time.Now().After(deadline) {
				re := regexp.MustCompile(`(?m)^(chemmy_|grpc_client_handled_total).*$`)
				t.Fatalf("%s/metrics lacks %q; has:\n%s", addr, missing, strings.Join(re.FindAllString(body, -1), "\n"))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
