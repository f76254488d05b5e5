// Command mutate is the suite's mutation tester (make mutate). It makes
// small changes to the code the suite's money and cards depend on (a
// comparison's boundary moved, a condition negated, + made -, && made ||,
// a ! dropped, ...), one at a time, and runs the tests against each: a
// mutant the tests fail on is killed, one they pass survives. First the
// short tests of the mutated package run (go test -short -failfast);
// a game core's mutant they let through is judged next by table-svc's
// short tests, which play the core through the service (Target.Shell);
// only a mutant they let through goes on to the simulation (cmd/sim,
// SIM_SEEDS seeds, 4 by default). The last line is the score,
// "mutation score: killed/total", the survivors are listed above it.
//
// The source tree is never written to: each mutant is handed to the go
// command as an overlay (go build -overlay), a copy of the file in a
// temporary directory, so an interrupted run leaves the tree as it was.
//
// A mutant whose tests run past the timeout counts as killed (the
// mutation made the code loop or block); one that does not compile is
// not counted (it is no test of the tests) and is listed as such.
//
// Environment: MUTATE_PKGS=a,b only the targets of those names;
// MUTATE_FILE=substr only files whose path contains it; MUTATE_LIMIT=n
// only every k-th mutant so that n are run (a sample); MUTATE_SIM=0 no
// simulation phase; MUTATE_SHELL=0 no shell phase; SIM_SEEDS the simulation's seeds; MUTATE_LIST=1
// list the mutants and stop; MUTATE_FROM=n start at the n-th mutant (to
// resume a run); MUTATE_TIMEOUT the short tests' timeout (default 2m; the
// simulation's is 10m); MUTATE_MEM the address space each test binary may
// use (prlimit --as, default 6 GiB: a mutant that loops appending must
// not take the machine's memory);
// MUTATE_ONLY=file only the mutants of the file's "survived: ..." lines
// (a previous run's output: judge its survivors again).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// shell: table-svc's short tests, which play every game core through the
// service (a core's own tests judge first; these only what they let
// through).
var shell = &TestSet{Pkg: "./table-svc/tablesvc"}

// targets: what issue 25 asks to be measured.
var targets = []Target{
	{Name: "rules", Dir: "services/rules"},
	{Name: "game", Dir: "table-svc/game"},
	{Name: "chemindefer", Dir: "table-svc/game/chemindefer", Shell: shell},
	{Name: "puntobanco", Dir: "table-svc/game/puntobanco", Shell: shell},
	{Name: "banque", Dir: "table-svc/game/banque", Shell: shell},
	{Name: "oldbaccarat", Dir: "table-svc/game/oldbaccarat", Shell: shell},
	// The wallet's holds and settlements.
	{Name: "wallet", Dir: "wallet-svc/walletsvc",
		Files: []string{"holds.go", "games.go", "old.go", "payout.go", "ledger.go", "handlers.go"},
		Funcs: []string{
			"PostHold", "ResizeHold", "expireDue", "ExpireHolds", // holds.go
			"checkBetHolds", "checkBP", "betHold", "applyResult", "checkPays", "puntoBancoRules", "SettlePuntoBanco", "SettleBanque", "ChargeFee", // games.go
			"oldResults", "checkDeprecatedNets", "SettleOld", // old.go
			"payout",                                                                         // payout.go
			"newHold", "close", "resize", "transfer", "needFunds", "add", "hold", "openHold", // ledger.go
			"PlaceHold", "VoidHold", "SettleCoup", // handlers.go
		}},
	// The shoe's shuffle, cut and burn.
	{Name: "shoe", Dir: "shoe-svc/fair", Files: []string{"fair.go"},
		Funcs: []string{"nextByte", "Bits", "Intn", "Permute", "FreshOrder", "Shuffle", "RandomCut", "Cut", "MoveToBottom", "BurnValue", "Cards"}},
	// The outbox and its relay.
	{Name: "outbox", Dir: "services/kit/outbox", Files: []string{"outbox.go"},
		Funcs: []string{"Put", "decode", "Pending", "pending", "Notify", "Run", "ready", "flush", "drain", "natsMsg",
			"publish", "publishOne", "publishEach", "publishBatch", "publishPipelined", "sendPipelined", "call",
			"madeProgress", "failed", "succeeded"}},
}

// The outcome of one mutant.
type Outcome int

const (
	Survived Outcome = iota
	Killed
	TimedOut // counted as killed
	BuildFailed
)

// A Runner runs the tests of dir (a package list for go test) with the
// overlay file given; it reports whether they passed, timed out, or
// failed to build.
type Runner func(ctx context.Context, overlay string, phase Phase, t Target) Outcome

// A Phase is one stage of the judging of a mutant.
type Phase int

const (
	ShortTests Phase = iota
	ShellTests       // the target's Shell, for a mutant ShortTests let through
	Simulation
)

func main() {
	root, err := os.Getwd()
	if err != nil {
		fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	timeout := 2 * time.Minute
	if v := os.Getenv("MUTATE_TIMEOUT"); v != "" {
		if timeout, err = time.ParseDuration(v); err != nil {
			fatal(err)
		}
	}
	cfg := Config{
		Root:    root,
		Targets: selectTargets(targets, os.Getenv("MUTATE_PKGS")),
		File:    os.Getenv("MUTATE_FILE"),
		Sim:     os.Getenv("MUTATE_SIM") != "0",
		Shell:   os.Getenv("MUTATE_SHELL") != "0",
		List:    os.Getenv("MUTATE_LIST") == "1",
		Out:     os.Stdout,
		Log:     os.Stderr,
		Run:     goTest(timeout, os.Getenv("MUTATE_MEM")),
	}
	if v := os.Getenv("MUTATE_ONLY"); v != "" {
		b, err := os.ReadFile(v)
		if err != nil {
			fatal(err)
		}
		cfg.Only = map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "survived: "); ok {
				// With or without the function in parentheses at the end
				// (a dropped ! shows as "(removed)").
				cfg.Only[rest] = true
				if i := strings.LastIndex(rest, " ("); i >= 0 {
					cfg.Only[rest[:i]] = true
				}
			}
		}
	}
	if v := os.Getenv("MUTATE_FROM"); v != "" {
		if cfg.From, err = strconv.Atoi(v); err != nil {
			fatal(err)
		}
	}
	if v := os.Getenv("MUTATE_LIMIT"); v != "" {
		if cfg.Limit, err = strconv.Atoi(v); err != nil {
			fatal(err)
		}
	}
	if _, err := Run(ctx, cfg); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(1)
}

func selectTargets(all []Target, names string) []Target {
	if names == "" {
		return all
	}
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []Target
	for _, t := range all {
		if want[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// Config is one run.
type Config struct {
	Root    string
	Targets []Target
	File    string          // only files whose path contains it
	Only    map[string]bool // if not nil: only these mutants (by their String)
	Limit   int             // a sample of about this many mutants (0: all)
	From    int             // start at the From-th mutant (1-based; 0: the first)
	Sim     bool            // judge the short tests' survivors with the simulation
	Shell   bool            // judge the short tests' survivors with the target's Shell tests first
	List    bool            // list the mutants only
	Out     io.Writer
	Log     io.Writer
	Run     Runner
}

// Result is the tally of a run.
type Result struct {
	Killed, TimedOut, Survived, BuildFailed int
	Survivors                               []Mutant
}

// Total is the number of mutants that count: the killed, timed out and
// survived (a mutant that did not compile does not count).
func (r Result) Total() int { return r.Killed + r.TimedOut + r.Survived }

// Run enumerates the mutants of the configured targets, judges each, and
// prints the survivors and the score.
func Run(ctx context.Context, cfg Config) (Result, error) {
	type job struct {
		t Target
		m Mutant
	}
	var jobs []job
	for _, t := range cfg.Targets {
		ms, err := t.Sites(cfg.Root)
		if err != nil {
			return Result{}, err
		}
		for _, m := range ms {
			if (cfg.File == "" || strings.Contains(m.File, cfg.File)) && (cfg.Only == nil || cfg.Only[m.String()]) {
				jobs = append(jobs, job{t, m})
			}
		}
	}
	if cfg.Limit > 0 && cfg.Limit < len(jobs) {
		step := float64(len(jobs)) / float64(cfg.Limit)
		var sample []job
		for i := 0; i < cfg.Limit; i++ {
			sample = append(sample, jobs[int(float64(i)*step)])
		}
		jobs = sample
	}
	if cfg.List {
		for _, j := range jobs {
			fmt.Fprintf(cfg.Out, "%s\t%s\t%s\n", j.t.Name, j.m.Func, j.m)
		}
		fmt.Fprintf(cfg.Out, "%d mutants\n", len(jobs))
		return Result{}, nil
	}
	tmp, err := os.MkdirTemp("", "chemmy-mutate-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(tmp)
	var res Result
	start := time.Now()
	for i, j := range jobs {
		if i+1 < cfg.From {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		o, err := judge(ctx, cfg, tmp, j.t, j.m)
		if err != nil {
			return res, err
		}
		if ctx.Err() != nil {
			return res, ctx.Err() // interrupted: this mutant is not judged
		}
		word := ""
		switch o {
		case Killed:
			res.Killed++
			word = "killed"
		case TimedOut:
			res.TimedOut++
			word = "timed out (killed)"
		case BuildFailed:
			res.BuildFailed++
			word = "does not build (not counted)"
		case Survived:
			res.Survived++
			res.Survivors = append(res.Survivors, j.m)
			word = "SURVIVED"
		}
		fmt.Fprintf(cfg.Log, "[%d/%d %s] %s %s\n", i+1, len(jobs), time.Since(start).Round(time.Second), j.m, word)
	}
	for _, m := range res.Survivors {
		fmt.Fprintf(cfg.Out, "survived: %s (%s)\n", m, m.Func)
	}
	if res.BuildFailed > 0 {
		fmt.Fprintf(cfg.Out, "%d mutants did not build (not counted); %d timed out (counted as killed)\n", res.BuildFailed, res.TimedOut)
	}
	k, t := res.Killed+res.TimedOut, res.Total()
	score := 0.0
	if t > 0 {
		score = float64(k) / float64(t)
	}
	fmt.Fprintf(cfg.Out, "mutation score: %d/%d (%.2f)\n", k, t, score)
	return res, nil
}

// judge writes the mutant to a copy under tmp, points an overlay at it
// and runs the phases.
func judge(ctx context.Context, cfg Config, tmp string, t Target, m Mutant) (Outcome, error) {
	path := filepath.Join(cfg.Root, filepath.FromSlash(m.File))
	src, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	mutated := filepath.Join(tmp, "mutant.go")
	if err := os.WriteFile(mutated, m.Apply(src), 0o600); err != nil {
		return 0, err
	}
	overlay := filepath.Join(tmp, "overlay.json")
	b, _ := json.Marshal(map[string]map[string]string{"Replace": {path: mutated}})
	if err := os.WriteFile(overlay, b, 0o600); err != nil {
		return 0, err
	}
	o := cfg.Run(ctx, overlay, ShortTests, t)
	if o == Survived && t.Shell != nil && cfg.Shell {
		o = cfg.Run(ctx, overlay, ShellTests, t)
	}
	if o != Survived || !cfg.Sim {
		return o, nil
	}
	return cfg.Run(ctx, overlay, Simulation, t), nil
}

// goTest is the Runner of make mutate: go test with the overlay.
func goTest(timeout time.Duration, mem string) Runner {
	if mem == "" {
		mem = strconv.FormatInt(6<<30, 10)
	}
	return func(ctx context.Context, overlay string, phase Phase, t Target) Outcome {
		timeout := timeout
		if phase == Simulation {
			timeout = 10 * time.Minute
		}
		// The test binary stops itself at the timeout (go test -timeout);
		// the context is the backstop, a minute later.
		ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
		defer cancel()
		args := []string{"test", "-overlay", overlay, "-count=1", "-failfast", "-timeout", timeout.String(),
			"-exec", "prlimit --as=" + mem}
		env := os.Environ()
		switch phase {
		case ShortTests:
			args = append(args, "-short")
			if len(t.Tests) == 0 {
				args = append(args, "./"+t.Dir)
			} else {
				args = append(args, t.Tests...)
			}
		case ShellTests:
			args = append(args, "-short")
			if t.Shell.Run != "" {
				args = append(args, "-run", t.Shell.Run)
			}
			args = append(args, t.Shell.Pkg)
		case Simulation:
			seeds := os.Getenv("SIM_SEEDS")
			if seeds == "" {
				seeds = "4"
			}
			env = append(env, "SIM_SEEDS="+seeds)
			args = append(args, "-run", "^TestSim$", "./cmd/sim")
		}
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		out, err := cmd.CombinedOutput()
		if err == nil {
			return Survived
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || strings.Contains(string(out), "panic: test timed out") {
			return TimedOut
		}
		if strings.Contains(string(out), "[build failed]") || strings.Contains(string(out), "[setup failed]") {
			return BuildFailed
		}
		return Killed
	}
}
