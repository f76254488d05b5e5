package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chemmy/chemmy/services/kit/natsauth"
)

// The size of TestClusterRehearsal: its shards and the tables it plays.
const (
	rehearsalShards = 3
	rehearsalTables = 18
)

// TestClusterRehearsal drives the local rehearsal of the Kubernetes
// topology (issue 14): three table-svc shards with their shoe-svc, one
// wallet-svc, two gateways and a three-node NATS cluster, real processes.
// Tables play through both gateways and spread over every shard. One
// shard's table-svc is killed (SIGKILL) while they play: the other
// shards' tables settle coups throughout its outage; once restarted, its
// tables play on. Then the NATS node leading the event stream is killed
// and restarted while they play. At the end every table finishes its coup
// in play, the money is exact (a balanced ledger; the players' balances
// and the house's add up to the deposits), and no table event was lost
// (each table's events in the stream are 1..event_sequence, in order,
// once each). Set CHEMMY_CLUSTER_BIN to a directory of built binaries
// (Build) to skip the build, which runs offline (GOPROXY=off).
func TestClusterRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ten processes and plays for a minute (not in -short)")
	}
	cl, dir := startRehearsal(t, rehearsalShards, rehearsalTables)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	play, err := StartPlay(ctx, PlayConfig{Gateways: cl.GatewayAddrs, Tables: rehearsalTables, Prefix: "rehearsal"})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			cancel()
			_ = play.Stop()
		}
	}()

	// Every table is made and has settled a coup; they are on both shards.
	waitFor(ctx, t, play, "every table to settle a coup", func() bool {
		for _, s := range play.Stats() {
			if s.Coups == 0 {
				return false
			}
		}
		return true
	})
	perShard := map[int][]string{}
	for _, s := range play.Stats() {
		perShard[s.Shard] = append(perShard[s.Shard], s.ID)
	}
	for k := range rehearsalShards {
		if len(perShard[k]) == 0 {
			t.Fatalf("no table on shard %d: %v", k, perShard)
		}
		t.Logf("shard %d: %d tables", k, len(perShard[k]))
	}
	if len(perShard) != rehearsalShards {
		t.Fatalf("tables on shards the cluster does not have: %v", perShard)
	}

	// Shard 1's table-svc crashes: the other shards' tables play on, each
	// settling coups while it is down.
	if err := cl.Kill(TableName(1)); err != nil {
		t.Fatal(err)
	}
	down := play.Stats()
	downAt := time.Now()
	waitFor(ctx, t, play, "every table of the other shards to settle 5 coups while shard 1 is down", func() bool {
		now := play.Stats()
		return allPlayed(now, down, 0, 5) && allPlayed(now, down, 2, 5)
	})
	during := play.Stats()
	outage := time.Since(downAt)
	if err := cl.Restart(ctx, TableName(1)); err != nil {
		t.Fatal(err)
	}
	settled := coupsSince(during, down)
	t.Logf("shard 1 down for %s: coups settled meanwhile by shard 0: %d, shard 1: %d, shard 2: %d", outage.Round(time.Millisecond),
		settled[0], settled[1], settled[2])
	waitFor(ctx, t, play, "every table of shard 1 to settle 2 coups after its restart", func() bool {
		return allPlayed(play.Stats(), during, 1, 2)
	})

	// The node leading the event stream crashes while they play, and
	// comes back.
	st, err := Stream(ctx, cl.NATSURL, cl.ReaderSeed())
	if err != nil || st.Leader == "" {
		t.Fatalf("stream: %+v, %v", st, err)
	}
	if len(st.Replicas) != NATSNodes {
		t.Fatalf("the stream has replicas %v, want %d", st.Replicas, NATSNodes)
	}
	if err := cl.Kill(st.Leader); err != nil {
		t.Fatal(err)
	}
	natsDown := play.Stats()
	waitFor(ctx, t, play, "every table to settle 2 coups while "+st.Leader+" is down", func() bool {
		return allPlayed(play.Stats(), natsDown, -1, 2)
	})
	if err := cl.Restart(ctx, st.Leader); err != nil {
		t.Fatal(err)
	}
	natsBack := play.Stats()
	waitFor(ctx, t, play, "every table to settle 2 coups after "+st.Leader+" came back", func() bool {
		return allPlayed(play.Stats(), natsBack, -1, 2)
	})
	t.Logf("%s (the stream's leader) down: %d coups settled meanwhile", st.Leader, TotalCoups(natsBack)-TotalCoups(natsDown))

	// Every table finishes its coup in play.
	stopped = true
	if err := play.Stop(); err != nil {
		t.Fatalf("tables stopped on errors: %v", err)
	}
	retries := int64(0)
	var ids []string
	for _, s := range play.Stats() {
		retries += s.Retries
		ids = append(ids, s.ID)
	}
	t.Logf("%d coups settled at %d tables, %d calls retried", TotalCoups(play.Stats()), len(ids), retries)

	m, err := CheckMoney(ctx, cl.GatewayAddrs[1], play.Accounts(), play.Deposits())
	if err != nil {
		t.Error(err)
	}
	t.Logf("money: players %d + house %d = deposits %d; audit: %d transfers replayed, %d holds open", m.Players, m.House,
		play.Deposits(), m.Audit.GetTransfersReplayed(), m.Audit.GetOpenHolds())

	seqs, err := EventSequences(ctx, cl.GatewayAddrs[0], ids)
	if err != nil {
		t.Fatal(err)
	}
	ectx, ecancel := context.WithTimeout(ctx, 30*time.Second)
	defer ecancel()
	if err := CheckEvents(ectx, cl.NATSURL, cl.ReaderSeed(), seqs); err != nil {
		t.Errorf("events lost: %v", err)
	}
	waitFor(ctx, t, play, "every replica of the stream to be current", func() bool {
		st, err := Stream(ctx, cl.NATSURL, cl.ReaderSeed())
		if err != nil || len(st.Replicas) != NATSNodes {
			return false
		}
		for _, cur := range st.Replicas {
			if !cur {
				return false
			}
		}
		return true
	})
	if err := cl.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if t.Failed() {
		t.Logf("logs in %s", dir)
	}
}

// startRehearsal builds the binaries (unless CHEMMY_CLUSTER_BIN names
// them), writes the token file of a run of tables tables with prefix
// "rehearsal" and starts a cluster of shards shards, stopped at the end
// of the test.
func startRehearsal(t *testing.T, shards, tables int) (*Cluster, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := os.Getenv("CHEMMY_CLUSTER_BIN")
	if bin == "" {
		root, err := FindRoot(".")
		if err != nil {
			t.Fatal(err)
		}
		bin = t.TempDir()
		// Offline: every module from the cache, none fetched.
		if err := Build(ctx, root, bin, "GOPROXY=off"); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.yaml")
	if err := WriteTokens(tokens, "rehearsal", tables); err != nil {
		t.Fatal(err)
	}
	cl, err := Start(ctx, Config{Shards: shards, Gateways: 2, DataDir: filepath.Join(dir, "data"), BinDir: bin, TokensFile: tokens, RateLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cl.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		if t.Failed() {
			for _, n := range cl.Names() {
				t.Logf("--- %s (end of %s)\n%s", n, cl.LogFile(n), tail(cl.LogFile(n), 8))
			}
		}
	})
	return cl, dir
}

// waitFor polls cond until it holds; the test fails when ctx ends first
// or a table of play stops on an error.
func waitFor(ctx context.Context, t *testing.T, play *Play, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if err := play.Err(); err != nil {
			t.Fatalf("waiting for %s: a table stopped: %v", what, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// allPlayed says whether every table of shard k (every table when k < 0)
// has settled at least n coups since before.
func allPlayed(now, before []TableStat, k int, n int64) bool {
	for i, s := range now {
		if (k < 0 || s.Shard == k) && s.Coups-before[i].Coups < n {
			return false
		}
	}
	return true
}

// coupsSince is the coups settled per shard between before and now.
func coupsSince(now, before []TableStat) map[int]int64 {
	out := map[int]int64{}
	for i, s := range now {
		out[s.Shard] += s.Coups - before[i].Coups
	}
	return out
}

// TestNATSConfig checks the rendering of a node's configuration: the
// routes, the file store, the routes' TLS, each user's nkey and
// permissions.
func TestNATSConfig(t *testing.T) {
	keys, err := natsauth.NewDevKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	text := natsConfig(natsNode{Name: "nats-1", Port: 4001, HTTPPort: 8001, RoutePort: 6001, RoutePorts: []int{6000, 6001, 6002},
		StoreDir: "/d/nats-1/jetstream", CertFile: "/t/nats.crt", KeyFile: "/t/nats.key", CAFile: "/t/ca.crt", Users: keys.ServerUsers()})
	want := []string{`server_name: "nats-1"`, `listen: "127.0.0.1:4001"`, `http: "127.0.0.1:8001"`, `store_dir: "/d/nats-1/jetstream"`,
		`"nats://127.0.0.1:6000"`, `"nats://127.0.0.1:6002"`, `listen: "127.0.0.1:6001"`, `cert_file: "/t/nats.crt"`, `verify: true`,
		`no_advertise: true`, `"chemmy.table.>"`, `"$JS.API.STREAM.CREATE.CHEMMY"`, `"_INBOX_reader.>"`}
	for _, u := range keys.ServerUsers() {
		want = append(want, `nkey: "`+u.Nkey+`"`)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("config lacks %s:\n%s", w, text)
		}
	}
}

// TestBuildIsOffline: the rehearsal's build fetches nothing: nats-server
// is built in the module that requires it (its version from cmd/go.mod,
// its checksum from go.sum), not installed at a version (`go install
// module@version` resolves it outside the workspace, through the module
// proxy); and that command, run with GOPROXY=off, builds a nats-server.
func TestBuildIsOffline(t *testing.T) {
	bin := t.TempDir()
	cmds := buildCommands(bin)
	var nats []string
	for _, c := range cmds {
		line := strings.Join(c.args, " ")
		if c.args[0] != "build" || strings.Contains(line, "@") {
			t.Errorf("go %s: not a build from the workspace", line)
		}
		if strings.HasSuffix(line, " "+NATSServerModule) {
			nats = c.args
			if c.dir != "cmd" {
				t.Errorf("nats-server built in %s, not in the cmd module that requires it", c.dir)
			}
		}
	}
	if nats == nil {
		t.Fatalf("no build of nats-server in %v", cmds)
	}
	if testing.Short() {
		t.Skip("builds nats-server")
	}
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", nats...)
	cmd.Dir = filepath.Join(root, "cmd")
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s, offline: %v\n%s", strings.Join(nats, " "), err, out)
	}
	mod, err := os.ReadFile(filepath.Join(root, "cmd", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, l := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == NATSServerModule {
			want = f[1]
		}
	}
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "nats-server"), "--version").CombinedOutput()
	if err != nil || want == "" || strings.TrimSpace(string(out)) != "nats-server: "+want {
		t.Fatalf("nats-server --version: %v %q, want cmd/go.mod's %q", err, out, want)
	}
}
