package walletsvc

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"

	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// The operator outbox relay: credits, rollbacks and round ends queued in
// the "op-outbox" bucket by the transactions that decided them are sent
// to the operator's wallet, retried with exponential backoff, across
// restarts, and removed when the operator answered (a duplicate answer
// is success) or refused them for good (then they are exceptions:
// opexceptions.go).
//
// Order. Entries wait for one another only where the operator's books
// need it, within one player's round (account and round id); nothing
// else orders them, so an entry that fails (refused, in backoff, or
// parked as an exception) never delays another round's, the same
// player's included:
//
//   - a rollback is sent only once its debit's call is over (its outcome
//     known, or given up on: the debit is not in "op-inflight");
//   - a credit is not sent while a debit of its round is in flight (the
//     roundGate: the debit waits for a credit being sent, the credit for
//     the debit), nor before the round's rollbacks queued so far are
//     acknowledged (or, parked, settled), so that no rollback follows a
//     credit of the round;
//   - a round_end goes last: once nothing else of its round is queued,
//     in flight or open in the exception list (a retry is queued after
//     it, and still goes before it).
//
// Credits of one round, and rollbacks of one round, go in queue order
// but do not wait for one another.

// Backoff of the relay (Config.operatorBackoff overrides the first).
const (
	defaultRelayFirst = 100 * time.Millisecond
	relayMax          = 30 * time.Second
	// relayBatch bounds the entries one pass reads.
	relayBatch = 10000
	// relayWorkers bounds the rounds whose entries are sent at once.
	relayWorkers = 16
)

// opMetrics are the metrics of seamless mode. Their operator label is
// an operator of the configuration (the default operator and the
// operators file's entries with a wallet): few, never from a request.
type opMetrics struct {
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	refusals *prometheus.CounterVec
	// queues: chemmy_operator_outbox_depth{operator} and
	// chemmy_operator_exceptions_open{operator,kind}, read from the
	// ledger when scraped (queueCounts; opexceptions.go), so never stale.
	queues *queueCollector
	// defaultOperator is the wallet's default operator, whose call series
	// exist from the start (another operator's from his first call).
	defaultOperator string
	// The operator probe's (probe.go), by operator.
	up            *prometheus.GaugeVec
	probeFailures *prometheus.CounterVec
}

func newOpMetrics() *opMetrics {
	return &opMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_operator_calls_total",
			Help: "Seamless mode: calls to the operators' wallets, by operator (tenant: whose wallet), operation (debit, credit, rollback, round_end) and result (ok, duplicate, refused, error: outcome unknown)."},
			[]string{"operator", "op", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "chemmy_operator_call_seconds",
			Help: "Seamless mode: latency of the calls to the operators' wallets, by operator and operation.", Buckets: prometheus.DefBuckets},
			[]string{"operator", "op"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_operator_outbox_refusals_total",
			Help: "Seamless mode: refusals of credits, rollbacks and round ends by the operators' wallets (they must not refuse them: retried, then listed as exceptions), by operator and operation."},
			[]string{"operator", "op"}),
		queues: &queueCollector{
			depth: prometheus.NewDesc("chemmy_operator_outbox_depth",
				"Seamless mode: credits, rollbacks and round ends waiting to be acknowledged by the operator's wallet, by operator (whose wallet).",
				[]string{"operator"}, nil),
			open: prometheus.NewDesc("chemmy_operator_exceptions_open",
				"Seamless mode: credits, rollbacks and round ends the operator's wallet refused for good, not yet retried or settled outside chemmy (ListOperatorExceptions), by operator and kind.",
				[]string{"operator", "kind"}, nil),
		},
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chemmy_operator_up",
			Help: "Seamless mode: 1 when the last probe of the operator's wallet (a balance call) got an answer signed with the shared secret, else 0 (0 until the first probe answers), by operator (whose wallet)."},
			[]string{"operator"}),
		probeFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_operator_probe_failures_total",
			Help: "Seamless mode: failed probes of the operators' wallets, by operator and kind (bad_signature, unsigned, clock_skew, signature_refused, timeout, unreachable, bad_answer)."},
			[]string{"operator", "kind"}),
	}
}

func (m *opMetrics) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.calls, m.latency, m.refusals, m.queues, m.up, m.probeFailures} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	for k := range probeCauses {
		m.probeFailures.WithLabelValues(m.defaultOperator, k)
	}
	for _, op := range []string{kindDebit, kindCredit, kindRollback, kindRoundEnd} {
		for _, r := range []string{"ok", "duplicate", "refused", "error"} {
			m.calls.WithLabelValues(m.defaultOperator, op, r)
		}
	}
	return nil
}

// queueCollector exports each operator's outbox depth and open
// exceptions by kind, counted in the ledger when scraped: every operator
// with a seamless wallet (Service.walletOperators) has his series, at 0
// when he has none; an operator no longer configured keeps his while he
// still has entries.
type queueCollector struct {
	depth, open *prometheus.Desc
	// count reads the ledger: the outbox's entries and the open
	// exceptions' (by kind) of each operator, and the operators to show.
	count func() (depth map[string]int, open map[string]map[string]int, ops []string, err error)
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.depth; ch <- c.open }

// Collect sends the counts; nothing when the ledger cannot be read (e.g.
// once closed).
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	if c.count == nil {
		return
	}
	depth, open, ops, err := c.count()
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, op := range ops {
		seen[op] = true
	}
	for op := range depth {
		if !seen[op] {
			seen[op], ops = true, append(ops, op)
		}
	}
	for op := range open {
		if !seen[op] {
			seen[op], ops = true, append(ops, op)
		}
	}
	for _, op := range ops {
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(depth[op]), op)
		for _, k := range []string{kindCredit, kindRollback, kindRoundEnd} {
			ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(open[op][k]), op, k)
		}
	}
}

// callOperator sends operator transaction x, counting and timing it.
func (s *Service) callOperator(ctx context.Context, x *opTx) (opwallet.Result, error) {
	// The wallet of the account's operator (opwallets.go).
	w := s.walletOf(operatorOfKey(x.Account, s.opID))
	if w == nil {
		return opwallet.Result{}, fmt.Errorf("%w: operator %q has no seamless wallet (operators file)", opwallet.ErrUnknownOutcome, operatorOfKey(x.Account, s.opID))
	}
	var call func(context.Context, opwallet.Transaction) (opwallet.Result, error)
	switch x.Kind {
	case kindDebit:
		call = w.Debit
	case kindCredit:
		call = w.Credit
	case kindRollback:
		call = w.Rollback
	default:
		call = w.RoundEnd
	}
	start := time.Now()
	res, err := call(ctx, x.wire())
	operator := operatorOfKey(x.Account, s.opID)
	s.opMetrics.latency.WithLabelValues(operator, x.Kind).Observe(time.Since(start).Seconds())
	result := "ok"
	if _, refused := opwallet.IsRefusal(err); refused {
		result = "refused"
	} else if err != nil {
		result = "error"
	} else if res.Duplicate {
		result = "duplicate"
	}
	s.opMetrics.calls.WithLabelValues(operator, x.Kind, result).Inc()
	return res, err
}

// notifyOperator wakes the relay (something was queued).
func (s *Service) notifyOperator() {
	if s.opWake == nil {
		return
	}
	select {
	case s.opWake <- struct{}{}:
	default:
	}
}

// retryState is an entry's backoff (in memory: a restart retries at once).
type retryState struct {
	tries int
	next  time.Time
}

// relayLoop sends the outbox until ctx is done.
func (s *Service) relayLoop(ctx context.Context) {
	retries := map[uint64]*retryState{}
	for {
		wait := s.relayPass(ctx, retries)
		if idle, err := s.endIdleRounds(); err != nil {
			s.log.Error("operator rounds: ending idle rounds failed", "err", err)
		} else if idle > 0 {
			wait = min(wait, idle)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.opWake:
		case <-t.C:
		}
		t.Stop()
	}
}

// outboxEntry is one queued transaction.
type outboxEntry struct {
	seq uint64
	x   *opTx
}

// roundQueue is what one player's round has queued, and what its
// entries wait for (the order at the top of this file).
type roundQueue struct {
	key                      string
	rollbacks, credits, ends []outboxEntry
	// busy: a debit of the round is in flight ("op-inflight").
	busy bool
	// excRollbacks, excAll: the round's open exceptions (rollbacks, all).
	excRollbacks, excAll int
}

// relayPass sends the due entries, round by round in the order at the
// top of this file, up to relayWorkers rounds at once, and returns how
// long to wait before the next pass.
func (s *Service) relayPass(ctx context.Context, retries map[uint64]*retryState) time.Duration {
	defer s.relayPasses.Add(1)
	// Before the snapshot: a debit that ends after this is not in it.
	mark := s.gate.mark()
	var entries []outboxEntry
	inflight := map[string]bool{} // debit ids in flight
	queues := map[string]*roundQueue{}
	var order []string
	queue := func(acct, round string) *roundQueue {
		k := roundKey(acct, round)
		q := queues[k]
		if q == nil {
			q = &roundQueue{key: k}
			queues[k] = q
			order = append(order, k)
		}
		return q
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOpOutbox)
		c := b.Cursor()
		for k, v := c.First(); k != nil && len(entries) < relayBatch; k, v = c.Next() {
			x, err := getTx(tx, string(v))
			if err != nil {
				return err
			}
			entries = append(entries, outboxEntry{seq: binary.BigEndian.Uint64(k), x: x})
		}
		err := tx.Bucket(bucketOpInflight).ForEach(func(k, _ []byte) error {
			d, err := getTx(tx, string(k))
			if err != nil {
				return err
			}
			inflight[d.ID] = true
			queue(d.Account, d.Round).busy = true
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketOpExcOpen).ForEach(func(_, v []byte) error {
			x, err := getTx(tx, string(v))
			if err != nil {
				return err
			}
			q := queue(x.Account, x.Round)
			q.excAll++
			if x.Kind == kindRollback {
				q.excRollbacks++
			}
			return nil
		})
	})
	if err != nil {
		s.log.Error("operator outbox: read failed", "err", err)
		return relayMax
	}
	for _, e := range entries {
		q := queue(e.x.Account, e.x.Round)
		switch e.x.Kind {
		case kindRollback:
			q.rollbacks = append(q.rollbacks, e)
		case kindRoundEnd:
			q.ends = append(q.ends, e)
		default:
			q.credits = append(q.credits, e)
		}
	}
	var mu sync.Mutex
	wait := time.Minute
	sem := make(chan struct{}, relayWorkers)
	var wg sync.WaitGroup
	for _, k := range order {
		q := queues[k]
		if len(q.rollbacks)+len(q.credits)+len(q.ends) == 0 {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			w := s.relayRound(ctx, q, inflight, mark, retries, &mu)
			mu.Lock()
			wait = min(wait, w)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return 0
	}
	return wait
}

// relayRound sends what one round may send now (the order at the top of
// this file) and returns how long until something of it is due. mu
// guards retries.
func (s *Service) relayRound(ctx context.Context, q *roundQueue, inflight map[string]bool, mark uint64,
	retries map[uint64]*retryState, mu *sync.Mutex) time.Duration {
	wait := time.Minute
	// Rollbacks: each once its debit's call is over.
	rollbacksLeft := q.excRollbacks
	for _, e := range q.rollbacks {
		if inflight[e.x.RolledBack] {
			rollbacksLeft++ // the debit's end wakes the relay
			continue
		}
		if ok, w := s.relaySend(ctx, e, retries, mu); !ok {
			rollbacksLeft++
			wait = min(wait, w)
		}
	}
	// Credits: after the round's rollbacks, not while a debit of the
	// round is in flight.
	left := rollbacksLeft + q.excAll - q.excRollbacks
	if rollbacksLeft > 0 || q.busy {
		left += len(q.credits)
	} else {
		for _, e := range q.credits {
			ok, w := s.relayGated(ctx, q.key, mark, e, retries, mu)
			if !ok {
				left++
				wait = min(wait, w)
			}
		}
	}
	// The round_end: last.
	if left > 0 || q.busy {
		return wait
	}
	for _, e := range q.ends {
		if ok, w := s.relayGated(ctx, q.key, mark, e, retries, mu); !ok {
			wait = min(wait, w)
		}
	}
	return wait
}

// relayGated sends a credit or round_end of round key unless a debit of
// the round is in flight or ended since mark (the next pass sees what it
// queued).
func (s *Service) relayGated(ctx context.Context, key string, mark uint64, e outboxEntry,
	retries map[uint64]*retryState, mu *sync.Mutex) (bool, time.Duration) {
	done, ok := s.gate.trySend(key, mark)
	if !ok {
		return false, s.opFirst
	}
	defer done()
	return s.relaySend(ctx, e, retries, mu)
}

// relaySend sends entry e if it is due and reports whether the operator
// acknowledged it, else how long until it is due again. A refusal is
// counted and logged; one for good, or the relayRefusalLimit-th, makes it
// an exception (noteRefusal). mu guards retries.
func (s *Service) relaySend(ctx context.Context, e outboxEntry, retries map[uint64]*retryState, mu *sync.Mutex) (bool, time.Duration) {
	if ctx.Err() != nil {
		return false, 0
	}
	mu.Lock()
	r := retries[e.seq]
	mu.Unlock()
	if now := time.Now(); r != nil && now.Before(r.next) {
		return false, r.next.Sub(now)
	}
	cctx, cancel := context.WithTimeout(ctx, operatorCallTimeout)
	res, callErr := s.callOperator(cctx, e.x)
	cancel()
	if callErr == nil {
		if err := s.acknowledge(e.seq, e.x, res); err != nil {
			s.log.Error("operator outbox: acknowledgement not recorded (it is sent again)", "transaction_id", e.x.ID, "err", err)
			return false, relayMax
		}
		mu.Lock()
		delete(retries, e.seq)
		mu.Unlock()
		return true, 0
	}
	if ctx.Err() != nil {
		return false, 0
	}
	if r == nil {
		r = &retryState{}
	}
	r.tries++
	delay := s.backoff(r.tries)
	if ref, ok := opwallet.IsRefusal(callErr); ok && ref.Code != opwallet.CodeInvalidSignature {
		s.opMetrics.refusals.WithLabelValues(operatorOfKey(e.x.Account, s.opID), e.x.Kind).Inc()
		exc, refusals, err := s.noteRefusal(e, ref)
		switch {
		case err != nil:
			s.log.Error("operator outbox: refusal not recorded", "transaction_id", e.x.ID, "err", err)
		case exc != nil:
			mu.Lock()
			delete(retries, e.seq)
			mu.Unlock()
			s.log.Error("OPERATOR REFUSED A "+e.x.Kind+" FOR GOOD: it is an exception now (ListOperatorExceptions: "+
				"retry it or settle it outside chemmy); the rest of the queue goes on",
				"transaction_id", e.x.ID, "player_id", e.x.Player, "round_id", e.x.Round, "amount", e.x.Amount,
				"currency", e.x.Currency, "code", ref.Code, "message", ref.Message, "refusals", refusals, "cause", exc.Cause)
			return false, time.Minute
		default:
			s.log.Error("OPERATOR REFUSED A "+e.x.Kind+": the operator's wallet must accept it; retrying",
				"transaction_id", e.x.ID, "player_id", e.x.Player, "round_id", e.x.Round, "amount", e.x.Amount,
				"code", ref.Code, "message", ref.Message, "refusals", refusals, "limit", relayRefusalLimit, "retry_in", delay)
		}
	} else {
		s.log.Warn("operator outbox: no answer, retrying", "transaction_id", e.x.ID, "kind", e.x.Kind,
			"tries", r.tries, "retry_in", delay, "err", callErr)
	}
	r.next = time.Now().Add(delay)
	mu.Lock()
	retries[e.seq] = r
	mu.Unlock()
	return false, delay
}

// roundGate orders a round's debits and the relay's credits and
// round_ends (the order at the top of this file): a debit call waits
// while a credit or round_end of its round is being sent, and the relay
// sends none while a debit of the round is out, nor in a pass that
// started before such a debit ended (its rollback, queued before it
// ended, may not be in the pass's snapshot).
type roundGate struct {
	mu   sync.Mutex
	cond *sync.Cond
	// debits and sending count the calls out per round key.
	debits, sending map[string]int
	// ended: the round keys whose debit ended since the last mark, at
	// which count of ends (seq).
	ended map[string]uint64
	seq   uint64
}

func newRoundGate() *roundGate {
	g := &roundGate{debits: map[string]int{}, sending: map[string]int{}, ended: map[string]uint64{}}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// debit registers a debit call of round key, once no credit or round_end
// of the round is being sent; done ends it, once its outcome is recorded
// (applied, refused, or its rollback queued).
func (g *roundGate) debit(key string) (done func()) {
	g.mu.Lock()
	for g.sending[key] > 0 {
		g.cond.Wait()
	}
	g.debits[key]++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.debits[key]--; g.debits[key] == 0 {
			delete(g.debits, key)
		}
		g.seq++
		g.ended[key] = g.seq
	}
}

// mark is taken by a relay pass before it reads the outbox.
func (g *roundGate) mark() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.ended) // ends up to now are in the snapshot about to be read
	return g.seq
}

// trySend registers the sending of a credit or round_end of round key,
// unless a debit of the round is out or ended after mark.
func (g *roundGate) trySend(key string, mark uint64) (done func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.debits[key] > 0 || g.ended[key] > mark {
		return nil, false
	}
	g.sending[key]++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.sending[key]--; g.sending[key] == 0 {
			delete(g.sending, key)
		}
		g.cond.Broadcast()
	}, true
}

// backoff is the wait after the n-th failed try: first, doubling up to
// relayMax, jittered to between half and all of it.
func (s *Service) backoff(n int) time.Duration {
	d := s.opFirst
	for i := 1; i < n && d < relayMax; i++ {
		d *= 2
	}
	d = min(d, relayMax)
	return d/2 + rand.N(d/2+1)
}

// acknowledge removes an answered entry and records the answer: the
// transaction acknowledged, and a rolled back debit rolled_back.
func (s *Service) acknowledge(seq uint64, x *opTx, res opwallet.Result) error {
	return s.commit.Update(func(tx *bolt.Tx) error {
		k := binary.BigEndian.AppendUint64(nil, seq)
		if tx.Bucket(bucketOpOutbox).Get(k) == nil {
			return nil
		}
		if err := tx.Bucket(bucketOpOutbox).Delete(k); err != nil {
			return err
		}
		now := s.now().UTC()
		cur, err := getTx(tx, x.ID)
		if err != nil {
			return err
		}
		cur.Status, cur.Updated, cur.OperatorTxID, cur.OperatorBalance = statusAcknowledged, now, res.OperatorTransactionID, &res.Balance
		if err := putTx(tx, cur); err != nil {
			return err
		}
		if x.Kind != kindRollback {
			return nil
		}
		d, err := getTx(tx, x.RolledBack)
		if err != nil {
			return err
		}
		d.Status, d.Updated = statusRolledBack, now
		return putTx(tx, d)
	})
}
