package sim

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestSim runs the simulation for a list of seeds, each with its own
// suite. The environment says which (see README.md):
//
//	SIM_SEED=n        one seed (a replay)
//	SIM_SEEDS=N       N seeds, SIM_SEED_BASE, SIM_SEED_BASE+1, ... (base 1)
//	SIM_STEPS=n       steps per seed (default 300)
//	SIM_AVOID=a,b     scenario switches (see Avoid): amended-retry,
//	                  table-downtime, lost-raise, hourly-fee,
//	                  banco-free-play, turn-leave, long-outage,
//	                  stale-retry, game-stop, late, limits-check,
//	                  suivi-timeout, seat-in-turn, kill,
//	                  relay-faults, long-nats, banque, old-game,
//	                  void-after-kill, split-outcome;
//	                  default: openBugs; none: simulate everything
//	SIM_TRACE=1       print every step
//	SIM_LOG=1         print the services' logs
//	SIM_SHORT_SHOES=1 two-deck first shoes: tables change shoes (the next
//	                  shoes are crypto-random: no exact replay)
//
// With none of them, two seeds (make test runs this, with -race).
func TestSim(t *testing.T) {
	if testing.Short() {
		t.Skip("the simulation runs the whole suite for a while")
	}
	seeds := seedsFromEnv(t)
	cfg := Config{Steps: envInt(t, "SIM_STEPS", 0), Avoid: avoidFromEnv(t), ShortShoes: os.Getenv("SIM_SHORT_SHOES") != ""}
	if os.Getenv("SIM_TRACE") != "" {
		cfg.Trace = os.Stdout
	}
	if os.Getenv("SIM_LOG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var total Result
	failed := 0
	for _, seed := range seeds {
		c := cfg
		c.Seed = seed
		res, err := Run(c)
		if err != nil {
			t.Fatalf("seed %d: the simulation failed: %v", seed, err)
		}
		t.Log(res.Summary())
		total.CoupsSettled += res.CoupsSettled
		total.CoupsVoided += res.CoupsVoided
		total.CoupsInterrupted += res.CoupsInterrupted
		total.LongOutages += res.LongOutages
		total.Faults += res.Faults
		total.Restarts += res.Restarts
		total.Outages += res.Outages
		total.NATSOut += res.NATSOut
		if len(res.Violations) > 0 {
			failed++
			var b strings.Builder
			for _, v := range res.Violations {
				b.WriteString("\n  " + v.String())
			}
			t.Errorf("seed %d: %d invariant(s) broken (trace: %s; replay: %s):%s",
				seed, len(res.Violations), res.TracePath, replay(seed), b.String())
		}
	}
	t.Logf("sim: %d seeds (%d failed), %d coups settled, %d voided (%d interrupted), %d faults injected, %d restarts, %d outages (%d long), %d NATS outages",
		len(seeds), failed, total.CoupsSettled, total.CoupsVoided, total.CoupsInterrupted, total.Faults, total.Restarts, total.Outages, total.LongOutages, total.NATSOut)
}

// replay is the command that runs seed again as this run did.
func replay(seed uint64) string {
	cmd := fmt.Sprintf("make sim SEED=%d", seed)
	if v := os.Getenv("SIM_STEPS"); v != "" {
		cmd += " STEPS=" + v
	}
	if v := os.Getenv("SIM_AVOID"); v != "" {
		cmd += " AVOID=" + v
	}
	if os.Getenv("SIM_SHORT_SHOES") != "" {
		cmd = "SIM_SHORT_SHOES=1 " + cmd
	}
	return cmd
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func seedsFromEnv(t *testing.T) []uint64 {
	if v := os.Getenv("SIM_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SIM_SEED=%q: %v", v, err)
		}
		return []uint64{n}
	}
	n, base := envInt(t, "SIM_SEEDS", 2), envInt(t, "SIM_SEED_BASE", 1)
	var out []uint64
	for i := range n {
		out = append(out, uint64(base+i))
	}
	return out
}

// openBugs are the scenarios of the bugs the simulation found that are
// not fixed yet (README.md, "Failures found"): avoided unless SIM_AVOID
// says otherwise, so that CI stays green on what is known. Remove a name
// when its bug is fixed; SIM_AVOID=none simulates everything.
// None is open: failures 8, 9, 10 and 11 (suivi-timeout, seat-in-turn,
// void-after-kill, split-outcome) are fixed.
const openBugs = ""

func avoidFromEnv(t *testing.T) Avoid {
	var a Avoid
	list := os.Getenv("SIM_AVOID")
	if list == "" {
		list = openBugs
	}
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "", "none":
		case "amended-retry":
			a.AmendedRetry = true
		case "table-downtime":
			a.TableDowntime = true
		case "lost-raise":
			a.LostRaise = true
		case "hourly-fee":
			a.HourlyFee = true
		case "banco-free-play":
			a.BancoFreePlay = true
		case "turn-leave":
			a.TurnLeave = true
		case "long-outage":
			a.LongOutage = true
		case "stale-retry":
			a.StaleRetry = true
		case "game-stop":
			a.GameStop = true
		case "late":
			a.Late = true
		case "limits-check":
			a.LimitsCheck = true
		case "suivi-timeout":
			a.SuiviTimeout = true
		case "seat-in-turn":
			a.SeatInTurn = true
		case "kill":
			a.Kill = true
		case "relay-faults":
			a.RelayFaults = true
		case "long-nats":
			a.LongNATS = true
		case "banque":
			a.Banque = true
		case "old-game":
			a.Old = true
		case "void-after-kill":
			a.VoidAfterKill = true
		case "split-outcome":
			a.SplitOutcome = true
		default:
			t.Fatalf("SIM_AVOID: unknown switch %q", name)
		}
	}
	return a
}
