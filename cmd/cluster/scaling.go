package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// CPU is the CPU time (user and system) the named process has used since
// it was last started.
func (cl *Cluster) CPU(name string) (time.Duration, error) {
	pid := cl.PID(name)
	if pid == 0 {
		return 0, fmt.Errorf("cluster: %s is not running", name)
	}
	return processCPU(pid)
}

// Driver is the name ScalingRun.CPU gives the load driver (this process).
const Driver = "driver"

// ScalingConfig configures Scaling. Zero values take the defaults given.
type ScalingConfig struct {
	// BinDir holds the Binaries; required.
	BinDir string
	// Shards: one run for each, in order; default 1, 2, 3.
	Shards []int
	// Tables playing in each run; default 24.
	Tables int
	// Duration of each run's measurement, after every table has settled
	// a coup; default 20s.
	Duration time.Duration
	// Gateways of each run; default 2.
	Gateways int
	// Progress, when not nil, gets a line as each run starts and ends.
	Progress io.Writer
}

// ScalingRun is the measurement of one run.
type ScalingRun struct {
	Shards, Tables int
	// Elapsed is the measurement's length, Coups the coups settled in it.
	Elapsed time.Duration
	Coups   int64
	// CPU used in it by each process (Cluster.Names) and by the driver
	// (Driver).
	CPU map[string]time.Duration
}

// CoupsPerSecond is the run's throughput.
func (r ScalingRun) CoupsPerSecond() float64 { return float64(r.Coups) / r.Elapsed.Seconds() }

// PerCoup is the CPU per settled coup of the processes whose name starts
// with prefix (NATSName, TableName, ... without the number: "nats-",
// "table-svc-"; Wallet; Driver), summed.
func (r ScalingRun) PerCoup(prefix string) time.Duration {
	if r.Coups == 0 {
		return 0
	}
	var sum time.Duration
	for n, c := range r.CPU {
		if strings.HasPrefix(n, prefix) {
			sum += c
		}
	}
	return sum / time.Duration(r.Coups)
}

// Scaling runs the same load on a fresh cluster of each size of
// c.Shards, one after the other (each in its own temporary directory,
// removed after it), and measures the coups settled per second and the
// CPU each process used per coup (from /proc). On a machine of few cores
// the coups per second stop growing with the shards once the cores are
// busy, but the CPU per coup of each process still says what each
// would need on machines of its own.
func Scaling(ctx context.Context, c ScalingConfig) ([]ScalingRun, error) {
	if c.BinDir == "" {
		return nil, fmt.Errorf("cluster: scaling: BinDir is required")
	}
	if len(c.Shards) == 0 {
		c.Shards = []int{1, 2, 3}
	}
	if c.Tables == 0 {
		c.Tables = 24
	}
	if c.Duration == 0 {
		c.Duration = 20 * time.Second
	}
	if c.Gateways == 0 {
		c.Gateways = 2
	}
	progress := c.Progress
	if progress == nil {
		progress = io.Discard
	}
	var runs []ScalingRun
	for i, shards := range c.Shards {
		fmt.Fprintf(progress, "== %d shard(s), %d tables, %s...\n", shards, c.Tables, c.Duration)
		r, err := scalingRun(ctx, c, shards, fmt.Sprintf("scale%d", i))
		if err != nil {
			return runs, err
		}
		fmt.Fprintf(progress, "   %d coups, %.1f coups/s\n", r.Coups, r.CoupsPerSecond())
		runs = append(runs, r)
	}
	return runs, nil
}

func scalingRun(ctx context.Context, c ScalingConfig, shards int, prefix string) (ScalingRun, error) {
	dir, err := os.MkdirTemp("", "chemmy-scaling-")
	if err != nil {
		return ScalingRun{}, err
	}
	defer os.RemoveAll(dir)
	tokens := filepath.Join(dir, "tokens.yaml")
	if err := WriteTokens(tokens, prefix, c.Tables); err != nil {
		return ScalingRun{}, err
	}
	cl, err := Start(ctx, Config{Shards: shards, Gateways: c.Gateways, DataDir: filepath.Join(dir, "data"), BinDir: c.BinDir,
		TokensFile: tokens, RateLimit: -1, LogLevel: "warn", Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		return ScalingRun{}, err
	}
	defer cl.Stop()
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	play, err := StartPlay(pctx, PlayConfig{Gateways: cl.GatewayAddrs, Tables: c.Tables, Prefix: prefix})
	if err != nil {
		return ScalingRun{}, err
	}
	defer func() { cancel(); _ = play.Stop() }()
	// The measurement starts once every table plays.
	for {
		if err := play.Err(); err != nil {
			return ScalingRun{}, err
		}
		if !slices.ContainsFunc(play.Stats(), func(s TableStat) bool { return s.Coups == 0 }) {
			break
		}
		select {
		case <-ctx.Done():
			return ScalingRun{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	cpu := func() (map[string]time.Duration, int64, error) {
		out := map[string]time.Duration{Driver: selfCPU()}
		for _, n := range cl.Names() {
			v, err := cl.CPU(n)
			if err != nil {
				return nil, 0, err
			}
			out[n] = v
		}
		return out, TotalCoups(play.Stats()), nil
	}
	cpu0, coups0, err := cpu()
	if err != nil {
		return ScalingRun{}, err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return ScalingRun{}, ctx.Err()
	case <-time.After(c.Duration):
	}
	cpu1, coups1, err := cpu()
	elapsed := time.Since(start)
	if err != nil {
		return ScalingRun{}, err
	}
	if err := play.Err(); err != nil {
		return ScalingRun{}, err
	}
	r := ScalingRun{Shards: shards, Tables: c.Tables, Elapsed: elapsed, Coups: coups1 - coups0, CPU: map[string]time.Duration{}}
	for n, v := range cpu1 {
		r.CPU[n] = v - cpu0[n]
	}
	return r, nil
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scalingGroups are the columns of the report: a label and the process
// name prefix it sums.
var scalingGroups = []struct{ label, prefix string }{
	{"nats (3)", "nats-"}, {"wallet", Wallet}, {"table-svc", "table-svc-"}, {"shoe-svc", "shoe-svc-"},
	{"gateways", "gateway-"}, {"driver", Driver},
}

// PrintScaling writes the runs as a table: per run the coups per second
// and the CPU per coup (ms) of each kind of process, summed over its
// processes, then each process's own; and what one core would sustain
// for each kind (1 s / its CPU per coup, from the last run), the reading
// for machines of their own.
func PrintScaling(w io.Writer, runs []ScalingRun) {
	fmt.Fprintf(w, "CPU per coup in ms (user+system, /proc), %d cores here\n", runtime.NumCPU())
	fmt.Fprintf(w, "%-7s %7s %8s", "shards", "coups/s", "cores")
	for _, g := range scalingGroups {
		fmt.Fprintf(w, " %10s", g.label)
	}
	fmt.Fprintf(w, " %8s\n", "all")
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, r := range runs {
		var all time.Duration
		for _, c := range r.CPU {
			all += c
		}
		fmt.Fprintf(w, "%-7d %7.1f %8.2f", r.Shards, r.CoupsPerSecond(), all.Seconds()/r.Elapsed.Seconds())
		for _, g := range scalingGroups {
			fmt.Fprintf(w, " %10.2f", ms(r.PerCoup(g.prefix)))
		}
		if r.Coups > 0 {
			all /= time.Duration(r.Coups)
		}
		fmt.Fprintf(w, " %8.2f\n", ms(all))
	}
	for _, r := range runs {
		names := make([]string, 0, len(r.CPU))
		for n := range r.CPU {
			names = append(names, n)
		}
		slices.Sort(names)
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %.2f", n, ms(r.PerCoup(n))))
		}
		fmt.Fprintf(w, "%d shard(s), per process: %s\n", r.Shards, strings.Join(parts, ", "))
	}
	// Each coup's table work is done by one shard and each call by one
	// gateway, so one of them on a core of its own sustains 1 s / the
	// kind's CPU per coup; every NATS node stores every event (three
	// replicas), so the cluster's ceiling is its busiest node's (the
	// stream's leader).
	rate := func(per time.Duration) float64 {
		if per <= 0 {
			return 0
		}
		return float64(time.Second) / float64(per)
	}
	fmt.Fprintln(w, "coups/s one core would sustain (1 s / CPU per coup):")
	fmt.Fprintf(w, "%-7s %12s %12s %12s %12s\n", "shards", "a shard", "wallet-svc", "NATS", "a gateway")
	for _, r := range runs {
		busiest := time.Duration(0)
		for n := range r.CPU {
			if strings.HasPrefix(n, "nats-") {
				busiest = max(busiest, r.PerCoup(n))
			}
		}
		fmt.Fprintf(w, "%-7d %12.0f %12.0f %12.0f %12.0f\n", r.Shards, rate(r.PerCoup("table-svc-")+r.PerCoup("shoe-svc-")),
			rate(r.PerCoup(Wallet)), rate(busiest), rate(r.PerCoup("gateway-")))
	}
}
