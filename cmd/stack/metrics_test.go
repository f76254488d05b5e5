package stack

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
)

// TestMetricsOfEveryShard: with two shards, the one address serves every
// service's metrics, each shard's labelled with it (no series twice: the
// gatherer refuses duplicates), and /readyz says ready while the stack
// serves.
func TestMetricsOfEveryShard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	s, err := Start(context.Background(), Config{DataDir: t.TempDir(), TokensFile: "../../deploy/local/tokens.yaml", Insecure: true, Shards: 2,
		MetricsAddr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.Stop()
		if err := s.Wait(); err != nil {
			t.Error(err)
		}
	}()
	mfs, err := s.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "chemmy_store_commits_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + " "
			}
			stores[key] = true
		}
	}
	for _, want := range []string{
		"db=shoe service=shoe-svc shard=0 ", "db=shoe service=shoe-svc shard=1 ",
		"db=table service=table-svc shard=0 ", "db=table service=table-svc shard=1 ",
		"db=wallet service=wallet-svc ",
	} {
		if !stores[want] {
			t.Errorf("no store counters %q; have %v", want, stores)
		}
	}
	if len(stores) != 5 {
		t.Errorf("store counters %v, want 5 files", stores)
	}
	resp, err := http.Get("http://" + s.MetricsAddr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %d %s", resp.StatusCode, body)
	}
}
