package walletsvc

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"

	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// The operator outbox relay: credits, rollbacks and round ends queued in
// the "op-outbox" bucket by the transactions that decided them are sent
// to the operator's wallet, in order per player (an entry waits for the
// player's earlier ones), retried with exponential backoff for ever and
// across restarts, and removed only when the operator answered (a
// duplicate answer is success).

// Backoff of the relay (Config.operatorBackoff overrides the first).
const (
	defaultRelayFirst = 100 * time.Millisecond
	relayMax          = 30 * time.Second
	// relayRefusedFactor: a refused credit, rollback or round_end waits
	// this many first delays before it is sent again (5 minutes; an
	// operator must not refuse them: its refusal is logged as an error
	// and counted).
	relayRefusedFactor = 3000
	// relayBatch bounds the entries one pass reads.
	relayBatch = 10000
	// relayWorkers bounds the players whose entries are sent at once.
	relayWorkers = 16
)

// opMetrics are the metrics of seamless mode.
type opMetrics struct {
	depth    prometheus.Gauge
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	refusals *prometheus.CounterVec
	// The operator probe's (probe.go).
	up            prometheus.Gauge
	probeFailures *prometheus.CounterVec
}

func newOpMetrics() *opMetrics {
	return &opMetrics{
		depth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "chemmy_operator_outbox_depth",
			Help: "Seamless mode: credits, rollbacks and round ends waiting to be acknowledged by the operator's wallet."}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_operator_calls_total",
			Help: "Seamless mode: calls to the operator's wallet, by operation (debit, credit, rollback, round_end) and result (ok, duplicate, refused, error: outcome unknown)."},
			[]string{"op", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "chemmy_operator_call_seconds",
			Help: "Seamless mode: latency of the calls to the operator's wallet, by operation.", Buckets: prometheus.DefBuckets},
			[]string{"op"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_operator_outbox_refusals_total",
			Help: "Seamless mode: credits, rollbacks and round ends the operator's wallet refused (it must not: they are retried slowly), by operation."},
			[]string{"op"}),
		up: prometheus.NewGauge(prometheus.GaugeOpts{Name: "chemmy_operator_up",
			Help: "Seamless mode: 1 when the last probe of the operator's wallet (a balance call) got an answer signed with the shared secret, else 0 (0 until the first probe answers)."}),
		probeFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_operator_probe_failures_total",
			Help: "Seamless mode: failed probes of the operator's wallet, by kind (bad_signature, unsigned, clock_skew, signature_refused, timeout, unreachable, bad_answer)."},
			[]string{"kind"}),
	}
}

func (m *opMetrics) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.depth, m.calls, m.latency, m.refusals, m.up, m.probeFailures} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	for k := range probeCauses {
		m.probeFailures.WithLabelValues(k)
	}
	for _, op := range []string{kindDebit, kindCredit, kindRollback, kindRoundEnd} {
		for _, r := range []string{"ok", "duplicate", "refused", "error"} {
			m.calls.WithLabelValues(op, r)
		}
	}
	return nil
}

// callOperator sends operator transaction x, counting and timing it.
func (s *Service) callOperator(ctx context.Context, x *opTx) (opwallet.Result, error) {
	var call func(context.Context, opwallet.Transaction) (opwallet.Result, error)
	switch x.Kind {
	case kindDebit:
		call = s.op.Debit
	case kindCredit:
		call = s.op.Credit
	case kindRollback:
		call = s.op.Rollback
	default:
		call = s.op.RoundEnd
	}
	start := time.Now()
	res, err := call(ctx, x.wire())
	s.opMetrics.latency.WithLabelValues(x.Kind).Observe(time.Since(start).Seconds())
	result := "ok"
	if _, refused := opwallet.IsRefusal(err); refused {
		result = "refused"
	} else if err != nil {
		result = "error"
	} else if res.Duplicate {
		result = "duplicate"
	}
	s.opMetrics.calls.WithLabelValues(x.Kind, result).Inc()
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

// relayPass sends the due entries, each player's in order (one waits
// for his earlier ones), up to relayWorkers players at once, and returns
// how long to wait before the next pass.
func (s *Service) relayPass(ctx context.Context, retries map[uint64]*retryState) time.Duration {
	var entries []outboxEntry
	var depth int
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOpOutbox)
		depth = b.Stats().KeyN
		c := b.Cursor()
		for k, v := c.First(); k != nil && len(entries) < relayBatch; k, v = c.Next() {
			x, err := getTx(tx, string(v))
			if err != nil {
				return err
			}
			entries = append(entries, outboxEntry{seq: binary.BigEndian.Uint64(k), x: x})
		}
		return nil
	})
	s.opMetrics.depth.Set(float64(depth))
	if err != nil {
		s.log.Error("operator outbox: read failed", "err", err)
		return relayMax
	}
	// Each player's entries in order, the players in parallel.
	var order []string
	queues := map[string][]outboxEntry{}
	for _, e := range entries {
		if queues[e.x.Account] == nil {
			order = append(order, e.x.Account)
		}
		queues[e.x.Account] = append(queues[e.x.Account], e)
	}
	var mu sync.Mutex
	wait := time.Minute
	sem := make(chan struct{}, relayWorkers)
	var wg sync.WaitGroup
	for _, acct := range order {
		sem <- struct{}{}
		wg.Add(1)
		go func(q []outboxEntry) {
			defer func() { <-sem; wg.Done() }()
			w := s.relayPlayer(ctx, q, retries, &mu)
			mu.Lock()
			wait = min(wait, w)
			mu.Unlock()
		}(queues[acct])
	}
	wg.Wait()
	if ctx.Err() != nil {
		return 0
	}
	return wait
}

// relayPlayer sends one player's entries in order until one is not
// acknowledged (in backoff, or failing now), and returns how long until
// it is due. mu guards retries.
func (s *Service) relayPlayer(ctx context.Context, q []outboxEntry, retries map[uint64]*retryState, mu *sync.Mutex) time.Duration {
	for _, e := range q {
		if ctx.Err() != nil {
			return 0
		}
		mu.Lock()
		r := retries[e.seq]
		mu.Unlock()
		if now := time.Now(); r != nil && now.Before(r.next) {
			return r.next.Sub(now)
		}
		cctx, cancel := context.WithTimeout(ctx, operatorCallTimeout)
		res, callErr := s.callOperator(cctx, e.x)
		cancel()
		if callErr == nil {
			if err := s.acknowledge(e.seq, e.x, res); err != nil {
				s.log.Error("operator outbox: acknowledgement not recorded (it is sent again)", "transaction_id", e.x.ID, "err", err)
				return relayMax
			}
			mu.Lock()
			delete(retries, e.seq)
			mu.Unlock()
			continue
		}
		if ctx.Err() != nil {
			return 0
		}
		if r == nil {
			r = &retryState{}
		}
		r.tries++
		delay := s.backoff(r.tries)
		if ref, ok := opwallet.IsRefusal(callErr); ok {
			delay = s.opFirst * relayRefusedFactor
			s.opMetrics.refusals.WithLabelValues(e.x.Kind).Inc()
			s.log.Error("OPERATOR REFUSED A "+e.x.Kind+": the operator's wallet must accept it; retrying slowly",
				"transaction_id", e.x.ID, "player_id", e.x.Player, "round_id", e.x.Round, "amount", e.x.Amount,
				"code", ref.Code, "message", ref.Message, "tries", r.tries)
		} else {
			s.log.Warn("operator outbox: no answer, retrying", "transaction_id", e.x.ID, "kind", e.x.Kind,
				"tries", r.tries, "retry_in", delay, "err", callErr)
		}
		r.next = time.Now().Add(delay)
		mu.Lock()
		retries[e.seq] = r
		mu.Unlock()
		return delay
	}
	return time.Minute
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
		cur.Status, cur.Updated, cur.OperatorTxID = statusAcknowledged, now, res.OperatorTransactionID
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
