package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// Config configures one simulated run. Zero fields take the defaults.
type Config struct {
	// Seed decides everything the driver does and every fault.
	Seed uint64
	// Steps is the number of driver steps before the quiet phase; default
	// 300.
	Steps int
	// Tables is the number of chemin de fer tables played at once;
	// default 3.
	Tables int
	// PuntoBanco is the number of punto banco tables played beside them
	// (the house banks, against house:bank); default 1, negative: none.
	PuntoBanco int
	// Banque and Old are the numbers of baccarat banque and old baccarat
	// tables played beside them (games.go); default 1 each, negative:
	// none (also Avoid.Banque, Avoid.Old).
	Banque, Old int
	// Players is the pool of players of each table (seated or in the
	// gallery); default 6.
	Players int
	// FaultRate is the probability that a call of table-svc to shoe-svc
	// or wallet-svc is faulted in a normal phase (storms: three times
	// it, calm phases: none); default 0.08; negative: never.
	FaultRate float64
	// NoRestarts: no service restarts, outages or NATS outages.
	NoRestarts bool
	// InterruptAfter is table-svc's Config.InterruptAfter on the simulated
	// clock: a coup that cannot go on before its result for that long is
	// voided by the table, every bet returned; default 20 s (the service's
	// own default is 2 minutes), so that the long outages of shoe-svc and
	// wallet-svc outlast it.
	InterruptAfter time.Duration
	// ShortShoes: every table starts on a two-deck prepared shoe, so that
	// its cut card comes out within a few coups and it changes shoes. The
	// next shoes are shuffled by shoe-svc from crypto/rand: a run with
	// short shoes does not replay exactly (see README.md).
	ShortShoes bool
	// Avoid keeps the simulation away from scenarios of known bugs.
	Avoid Avoid
	// Dir holds the bbolt files and the NATS store; default a temporary
	// directory, removed at the end unless the run found a violation.
	Dir string
	// Logger receives the services' logs; default: discarded.
	Logger *slog.Logger
	// Trace receives every step as it happens; default: kept in memory
	// and written to <Dir>/trace.txt when the run finds a violation.
	Trace io.Writer
}

// Avoid switches scenarios off. Each one names the known bug it avoids;
// all false (the default) simulates everything.
type Avoid struct {
	// AmendedRetry: a client never sends a request again under the same
	// request_id with another amount (a PlaceBet retried with a new
	// amount left the first attempt's hold orphaned).
	AmendedRetry bool
	// TableDowntime: table-svc restarts at once and is never down while
	// the clock runs (turn timers ran on while the service was down).
	TableDowntime bool
	// LostRaise: no fault on the wallet call of RaiseBank (a lost reply
	// to the bank's resize left the table stuck in SETTLING).
	LostRaise bool
	// HourlyFee: no table charges an hourly fee.
	HourlyFee bool
	// BancoFreePlay: no table plays banco free play.
	BancoFreePlay bool
	// TurnLeave: the punter whose betting turn it is does not leave his
	// seat, move to the gallery or (from the gallery) take a seat (the
	// next punter inherited the rest of his time limit; a gallery punter
	// seated in his turn left the betting with nobody to wait for).
	TurnLeave bool
	// StaleRetry: a client does not send a request again once the coup it
	// was made in is over (a bet re-sent under its request_id in the next
	// coup was escrowed with another reference than its intent: the
	// rollback was refused REQUEST_ID_REUSED and the hold orphaned).
	StaleRetry bool
	// GameStop: no seated player leaves (or moves to the gallery) when
	// that would leave fewer than two seated while the coup has bets (the
	// game stops, the bets are returned, but no event ends the coup).
	GameStop bool
	// LongOutage: the event stream keeps its two-minute duplicate window,
	// longer than any NATS outage of the simulation. By default the
	// simulation creates the stream with a 100 ms window, so that every
	// outage is "long": an event published twice shows up twice.
	LongOutage bool
	// Late: no call of table-svc is held and applied late (a late call
	// becomes a lost reply: applied at once, DEADLINE_EXCEEDED).
	Late bool
	// SuiviTimeout: the order model takes the table's reading of a banco
	// suivi holder whose betting turn times out: he keeps banco suivi
	// (by the published contract he passes, bet_declined, and does not
	// bet this coup, as when he declines: it ends). A checker switch: the
	// driver does the same either way.
	SuiviTimeout bool
	// SeatInTurn: the order model takes the table's events and order when
	// a gallery punter takes a seat in his own betting turn (his seat ends
	// the round: betting_reopened, then player_seated, and the new round
	// leaves him out). A checker switch, as SuiviTimeout.
	SeatInTurn bool
	// LimitsCheck: no fault on table-svc's GetPlayerLimits calls (JoinTable
	// asks the wallet whether the player is self-excluded before it looks
	// up its request_id: a JoinTable sent again after its reply was lost
	// fails when that call does, though it was applied).
	LimitsCheck bool
	// Kill: no service is killed mid-request (each kill the fault stream
	// draws is a lost reply instead).
	Kill bool
	// RelayFaults: the outbox relays' calls to JetStream are not faulted
	// (relay.go).
	RelayFaults bool
	// LongNATS: every NATS outage is as short as the steps it spans, none
	// kept past the relays' ack timeout in real time.
	LongNATS bool
	// Banque, Old: no baccarat banque, no old baccarat table.
	Banque, Old bool
	// VoidAfterKill: the croupier does not void a coup that a table has
	// been dealing since table-svc was killed, and table-svc is not killed
	// at or after a settlement within a request or retry pass (a kill after
	// the wallet settled the coup and before the table stored it: a void,
	// the croupier's or the table's own of an interrupted coup, is taken
	// and the wallet's settlement stands; failure 10 of the README).
	VoidAfterKill bool
	// SplitOutcome: a checker switch (the run is the same): the old
	// game's hand that shares the pool in a three-way split (OLD-SETTLE)
	// may be written won by the punter (OUTCOME_BANK_LOSES, from his net)
	// where the oracle reads a stand-off (the hands tied; failure 11).
	SplitOutcome bool
}

func (c Config) withDefaults() Config {
	if c.Steps == 0 {
		c.Steps = 300
	}
	if c.Tables == 0 {
		c.Tables = 3
	}
	if c.PuntoBanco == 0 {
		c.PuntoBanco = 1
	}
	if c.Banque == 0 {
		c.Banque = 1
	}
	if c.Old == 0 {
		c.Old = 1
	}
	if c.Avoid.Banque {
		c.Banque = -1
	}
	if c.Avoid.Old {
		c.Old = -1
	}
	if c.Players == 0 {
		c.Players = 6
	}
	if c.FaultRate == 0 {
		c.FaultRate = 0.08
	}
	if c.FaultRate < 0 {
		c.FaultRate = 0
	}
	if c.InterruptAfter == 0 {
		c.InterruptAfter = 20 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// shortDupWindow is the event stream's duplicate window in the
// simulation (see Avoid.LongOutage).
const shortDupWindow = 100 * time.Millisecond

// Violation is an invariant found broken.
type Violation struct {
	Invariant string
	Step      int
	Detail    string
}

func (v Violation) String() string {
	return fmt.Sprintf("[%s] step %d: %s", v.Invariant, v.Step, v.Detail)
}

// Result is what one run did and found.
type Result struct {
	Seed                      uint64
	Steps                     int
	CoupsSettled, CoupsVoided int
	// CoupsInterrupted are the voided coups the table voided itself
	// (interrupted: a dependency unreachable past InterruptAfter).
	CoupsInterrupted           int
	Events                     int
	Faults                     int
	FaultKinds                 map[string]int
	Restarts, Outages, NATSOut int
	// LongOutages: shoe-svc or wallet-svc down past InterruptAfter;
	// LongNATS: NATS outages kept past the relays' ack timeout (real
	// time).
	LongOutages, LongNATS int
	// Kills: services killed mid-request (kill.go), by service.
	Kills map[string]int
	// RelayFaults: faults of the outbox relays' calls (relay.go), by kind
	// (not in the trace: the relays run on their own time).
	RelayFaults map[string]int
	// TablesClosed: tables seen closed (CloseTable, or abandoned).
	TablesClosed int
	ShoeChanges  int
	Violations   []Violation
	// Digest is a hash of the trace: two runs of a seed that did the same
	// things have the same digest (see the README on determinism).
	Digest string
	// TracePath is where the trace was written (runs with violations).
	TracePath string
	Elapsed   time.Duration
}

// Summary is the one-line summary of a run.
func (r *Result) Summary() string {
	return fmt.Sprintf("seed %d: %d steps, %d coups settled, %d voided (%d interrupted), %d events, %d faults injected %v, %d kills %v, %d relay faults %v, %d restarts, %d outages (%d long), %d NATS outages (%d long), %d tables closed, %d new shoes, %d violations, %s, digest %s",
		r.Seed, r.Steps, r.CoupsSettled, r.CoupsVoided, r.CoupsInterrupted, r.Events, r.Faults, kinds(r.FaultKinds), sum(r.Kills), kinds(r.Kills),
		sum(r.RelayFaults)-r.RelayFaults[relayDead], kinds(r.RelayFaults), r.Restarts, r.Outages, r.LongOutages, r.NATSOut, r.LongNATS, r.TablesClosed, r.ShoeChanges,
		len(r.Violations), r.Elapsed.Round(time.Millisecond), r.Digest)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func kinds(m map[string]int) string {
	var ks []string
	for k, v := range m {
		ks = append(ks, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(ks)
	return "{" + strings.Join(ks, " ") + "}"
}

// sim is one run.
type sim struct {
	cfg    Config
	rng    *rand.Rand
	clock  *clock
	faults *faults
	relay  *relayFaults
	cl     *cluster
	res    *Result
	// fatal: a failure of the simulation itself met mid-step (a killed
	// service that would not start again); the run stops with it.
	fatal error

	step    int
	reqSeq  int
	traceMu sync.Mutex
	trace   []string
	digest  []byte

	tables    []*simTable
	players   map[string]*simPlayer
	deposited int64
	withdrawn int64
	// houseBank is what the operator deposited to house:bank (the punto
	// banco tables' bank).
	houseBank  int64
	downUntil  map[string]int // service -> step at which it starts again
	phaseUntil int
	// slowUntil: until this step a long outage runs and each step takes
	// 5 to 11 s instead of up to 3 s.
	slowUntil int

	seen   map[string]bool  // violations reported once per key
	coupNo map[string]int64 // coup id -> its number at its table
	// ledgerWant are the transfers the oracle's settlement of each coup
	// the events settled or voided calls for, by coup id (ledger.go);
	// ledgerTable its table.
	ledgerWant  map[string]transfersM
	ledgerTable map[string]*simTable

	// Diagnosis only (real time, not in the trace): when each step began,
	// and when JetStream stored each event read at the end.
	stepTimes []time.Time
	stored    map[*eventsv1.TableEvent]stored
}

// simPlayer is the driver's book of a player's money movements outside
// the tables.
type simPlayer struct {
	id        string
	deposited int64
	withdrawn int64
}

// Run runs one seed: the suite is started, driven for cfg.Steps steps
// under faults, brought to rest, and checked. An error is a failure of
// the simulation itself (e.g. a service that would not start); broken
// invariants are in Result.Violations.
func Run(cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	start := time.Now()
	s := &sim{
		cfg:       cfg,
		rng:       rand.New(rand.NewPCG(cfg.Seed, 0x647269766572)),
		clock:     newClock(),
		res:       &Result{Seed: cfg.Seed},
		players:   map[string]*simPlayer{},
		downUntil: map[string]int{},
		seen:      map[string]bool{},
		stored:    map[*eventsv1.TableEvent]stored{},
	}
	s.faults = newFaults(cfg.Seed, s.tracef)
	s.faults.noLate, s.faults.noKill, s.faults.noKillAfterSettle = cfg.Avoid.Late, cfg.Avoid.Kill, cfg.Avoid.VoidAfterKill
	s.relay = newRelayFaults(cfg.Seed)
	s.relay.setOff(cfg.Avoid.RelayFaults)
	s.faults.exempt = func(req any) bool {
		switch r := req.(type) {
		case *walletv1.ResizeHoldRequest:
			return cfg.Avoid.LostRaise && strings.Contains(r.GetRequestId(), "/raise/")
		case *walletv1.GetPlayerLimitsRequest:
			return cfg.Avoid.LimitsCheck
		}
		return false
	}
	dir, cleanup := cfg.Dir, func() {}
	if dir == "" {
		d, err := os.MkdirTemp("", "chemmy-sim-")
		if err != nil {
			return nil, err
		}
		dir, cleanup = d, func() { _ = os.RemoveAll(d) }
	}
	dup := shortDupWindow
	if cfg.Avoid.LongOutage {
		dup = 0
	}
	cl, err := newCluster(dir, cfg.Logger, s.clock, s.faults, s.relay, dup, cfg.InterruptAfter)
	if err != nil {
		cleanup()
		return nil, err
	}
	s.cl = cl
	runErr := s.run()
	cl.close()
	s.res.Elapsed = time.Since(start)
	s.res.Steps = cfg.Steps
	s.res.Faults = s.faults.injected()
	s.res.FaultKinds = s.faults.snapshot()
	s.res.RelayFaults = relayKinds(s.relay.snapshot())
	s.res.Kills = map[string]int{}
	for _, svc := range []string{svcShoe, svcWallet, svcTable} {
		if n := cl.killCount(svc); n > 0 {
			s.res.Kills[svc] = n
		}
	}
	if d := hex.EncodeToString(s.digest); len(d) >= 16 {
		s.res.Digest = d[:16]
	}
	if len(s.res.Violations) > 0 || runErr != nil {
		s.res.TracePath = filepath.Join(dir, "trace.txt")
		_ = os.WriteFile(s.res.TracePath, []byte(strings.Join(s.trace, "\n")+"\n"), 0o644)
	} else {
		cleanup()
	}
	return s.res, runErr
}

func (s *sim) run() error {
	if err := s.setup(); err != nil {
		return err
	}
	s.stepTimes = append(s.stepTimes, time.Now())
	for s.step = 1; s.step <= s.cfg.Steps; s.step++ {
		s.stepTimes = append(s.stepTimes, time.Now())
		if err := s.environment(); err != nil {
			return err
		}
		s.observe()
		s.act()
		s.observe()
		mid := s.views()
		killed := s.tick()
		s.observe()
		if !killed {
			s.checkTimeouts(mid)
		}
		s.checkStep()
		if s.fatal != nil {
			return s.fatal
		}
	}
	s.step = s.cfg.Steps + 1
	s.stepTimes = append(s.stepTimes, time.Now())
	if err := s.quiesce(); err != nil {
		return err
	}
	return s.checkFinal()
}

// tracef records one line of the trace. Lines name tables by index,
// coups by number and errors by code and reason, never by an id or a
// time of the real world, so that equal runs have equal traces.
func (s *sim) tracef(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	// The fault interceptor traces from table-svc's goroutines.
	s.traceMu.Lock()
	defer s.traceMu.Unlock()
	h := sha256.New()
	h.Write(s.digest)
	h.Write([]byte(line))
	s.digest = h.Sum(nil)
	if s.cfg.Trace != nil {
		fmt.Fprintln(s.cfg.Trace, line)
	}
	s.trace = append(s.trace, line)
}

// violate records a broken invariant, once per key.
func (s *sim) violate(invariant, key, format string, args ...any) {
	if key != "" {
		if s.seen[invariant+"/"+key] {
			return
		}
		s.seen[invariant+"/"+key] = true
	}
	v := Violation{Invariant: invariant, Step: s.step, Detail: fmt.Sprintf(format, args...)}
	s.res.Violations = append(s.res.Violations, v)
	s.tracef("!!! VIOLATION %s", v)
}

func (s *sim) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// nextID is a fresh request id, the same in every run of the seed.
func (s *sim) nextID() string {
	s.reqSeq++
	return fmt.Sprintf("s%d", s.reqSeq)
}

// environment is what happens to the suite at the start of a step: time
// passes, services stop and start again, NATS goes away, the fault rate
// changes.
func (s *sim) environment() error {
	// Think time: every step takes a moment (before any restart, so that
	// a service starts at the time the step's observation sees); during a
	// long outage, longer.
	think := time.Duration(s.rng.IntN(3000)) * time.Millisecond
	if s.step < s.slowUntil {
		think = 5*time.Second + 2*think
	}
	s.pass(think)
	// Outages that end now.
	for _, name := range []string{svcNATS, svcShoe, svcWallet, svcTable} {
		if until, ok := s.downUntil[name]; ok && s.step >= until {
			delete(s.downUntil, name)
			if err := s.cl.start(name); err != nil {
				return err
			}
			s.tracef("step %d: %s up again", s.step, name)
		}
	}
	if s.step >= s.phaseUntil {
		s.phaseUntil = s.step + 20 + s.rng.IntN(40)
		rate, name := s.cfg.FaultRate, "normal"
		switch r := s.rng.Float64(); {
		case r < 0.3:
			rate, name = 0, "calm"
		case r < 0.5:
			rate, name = min(0.6, 3*s.cfg.FaultRate), "storm"
		}
		s.faults.setRate(rate)
		s.tracef("step %d: %s phase (fault rate %.2f) until step %d", s.step, name, rate, s.phaseUntil)
	}
	if s.cfg.NoRestarts {
		s.rng.Float64()
		s.rng.IntN(3)
		return nil
	}
	r, pick := s.rng.Float64(), s.rng.IntN(3)
	deps := []string{svcShoe, svcWallet, svcTable}
	switch {
	case r < 0.015:
		name := deps[pick]
		if s.down(name) {
			return nil
		}
		s.res.Restarts++
		s.tracef("step %d: restart %s", s.step, name)
		if err := s.cl.stop(name); err != nil {
			s.violate("clean-stop", "", "%s did not stop cleanly: %v", name, err)
		}
		return s.cl.start(name)
	case r < 0.025:
		name := deps[pick]
		if name == svcTable && s.cfg.Avoid.TableDowntime {
			name = svcWallet
		}
		if s.down(name) {
			return nil
		}
		n := 1 + s.rng.IntN(6)
		s.res.Outages++
		s.tracef("step %d: %s down for %d steps", s.step, name, n)
		s.downUntil[name] = s.step + n
		if err := s.cl.stop(name); err != nil {
			s.violate("clean-stop", "", "%s did not stop cleanly: %v", name, err)
		}
	case r < 0.035:
		if s.down(svcNATS) {
			return nil
		}
		n := 2 + s.rng.IntN(14)
		long := s.rng.IntN(2) == 0 && !s.cfg.Avoid.LongNATS
		s.res.NATSOut++
		if long {
			s.res.LongNATS++
			s.tracef("step %d: NATS down for %d steps, and at least %v of real time", s.step, n, longNATSOutage)
		} else {
			s.tracef("step %d: NATS down for %d steps", s.step, n)
		}
		s.downUntil[svcNATS] = s.step + n
		s.cl.stopNATSFor(long)
	case r < 0.040:
		// A long outage: shoe-svc or wallet-svc down for 6 to 12 steps of
		// 5 to 11 s, past InterruptAfter: a coup it stops before its
		// result is interrupted (voided by the table).
		name := []string{svcShoe, svcWallet}[pick%2]
		if s.down(name) {
			return nil
		}
		n := 6 + s.rng.IntN(7)
		s.res.Outages++
		s.res.LongOutages++
		s.tracef("step %d: %s down for %d long steps", s.step, name, n)
		s.downUntil[name] = s.step + n
		s.slowUntil = max(s.slowUntil, s.step+n)
		if err := s.cl.stop(name); err != nil {
			s.violate("clean-stop", "", "%s did not stop cleanly: %v", name, err)
		}
	}
	return nil
}

func (s *sim) down(name string) bool {
	_, ok := s.downUntil[name]
	return ok
}

// tick runs table-svc's retry pass once, as its loop would. killed:
// table-svc was killed during the pass (and started again): the turns
// it restarted are not timeouts (checkTimeouts does not judge the pass).
func (s *sim) tick() (killed bool) {
	if !s.cl.isUp(svcTable) {
		return false
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return s.killable(func() { s.cl.table.Tick(ctx) })
}

// killable runs f, a call of table-svc (a request or a retry pass), and
// then starts again what the call killed (kill.go). killed: table-svc
// was killed while it ran f (its answer, if any, is not one).
func (s *sim) killable(f func()) (killed bool) {
	before := s.cl.killCount(svcTable)
	s.faults.beginCall()
	f()
	killed = s.cl.killCount(svcTable) > before
	if killed {
		// What the pass carried out and did not store (cards dealt, a
		// settlement) it does again: until then the wallet may be ahead
		// of a table dealing (atStake).
		for _, t := range s.tables {
			t.afterKill = true
		}
	}
	if err := s.cl.reap(); err != nil && s.fatal == nil {
		s.fatal = err
	}
	for _, m := range s.faults.takeMismatches() {
		s.violate("dependency-same-answer", "", "%s", m)
	}
	return killed
}

// quiesce ends the faults: every service up, no fault, time enough for
// every grace period, and the retry pass run until the tables rest.
func (s *sim) quiesce() error {
	s.tracef("quiet: faults stop, every service up")
	s.faults.setRate(0)
	s.relay.setOff(true)
	for _, name := range []string{svcNATS, svcShoe, svcWallet, svcTable} {
		if s.down(name) {
			delete(s.downUntil, name)
			if err := s.cl.start(name); err != nil {
				return err
			}
		}
	}
	// The calls still held in the network arrive.
	s.faults.flush()
	for range 3 {
		s.observe()
		mid := s.views()
		if !s.tick() {
			s.observe()
			s.checkTimeouts(mid)
		}
	}
	for range 2 {
		// Past the escrow intents' grace period (30 s); turns time out.
		s.pass(31 * time.Second)
		for range 3 {
			s.observe()
			mid := s.views()
			if !s.tick() {
				s.observe()
				s.checkTimeouts(mid)
			}
		}
	}
	s.observe()
	return nil
}

// stateName is a table state without its prefix.
func stateName(st tablev1.TableState) string {
	return strings.TrimPrefix(st.String(), "TABLE_STATE_")
}
