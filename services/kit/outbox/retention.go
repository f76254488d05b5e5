package outbox

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// RetentionGoal is how long the CHEMMY stream is meant to keep an event
// when its configuration has no age limit: 7 days (the default age limit,
// DefaultStreamMaxAge, is the same).
const RetentionGoal = 7 * 24 * time.Hour

// RetentionInterval is how often a relay reads the stream's state to
// judge its retention (Retention).
const RetentionInterval = time.Minute

// MinRetentionWindow is how old a stream's oldest event must be before
// its average write rate is projected (Retention.Keeps): a younger one
// has seen a start, not a day's play.
const MinRetentionWindow = time.Hour

// fullShare is how full (in hundredths of max_bytes) a stream counts as
// full: JetStream discards the oldest events to stay under max_bytes, so
// a full stream hovers just below it.
const fullShare = 98

// Retention is how long the CHEMMY stream keeps an event, judged from its
// configuration and state (EstimateRetention), against how long it is
// meant to (Target). Docs: docs/event-retention.md.
type Retention struct {
	// Keeps is how long an event stays in the stream at the rate events
	// are written: the age limit when only it binds; the age of the
	// oldest event when the stream is full (its size limit discards
	// older ones); otherwise the size limit projected at the stream's
	// average write rate since its oldest event (max_bytes × age of the
	// oldest event ÷ bytes stored), at most the age limit, once the
	// oldest event is MinRetentionWindow old (younger: the age limit).
	// +Inf when no limit binds (neither age nor size limit), and the age
	// limit (or +Inf) while the stream is empty.
	Keeps time.Duration
	// Target is the stream's age limit (max_age), or RetentionGoal when it
	// has none.
	Target time.Duration
}

// Short reports whether the stream drops events younger than its target:
// its size limit binds before its age limit does.
func (r Retention) Short() bool { return r.Keeps < r.Target }

// EstimateRetention judges the retention of a stream of configuration c
// and state s at now (see Retention).
func EstimateRetention(c jetstream.StreamConfig, s jetstream.StreamState, now time.Time) Retention {
	const forever = time.Duration(math.MaxInt64)
	r := Retention{Target: c.MaxAge, Keeps: c.MaxAge}
	if c.MaxAge <= 0 {
		r.Target, r.Keeps = RetentionGoal, forever
	}
	if c.MaxBytes <= 0 || s.Msgs == 0 || s.Bytes == 0 {
		return r
	}
	oldest := max(now.Sub(s.FirstTime), 0)
	if s.Bytes*100 >= uint64(c.MaxBytes)*fullShare {
		r.Keeps = min(r.Keeps, oldest)
		return r
	}
	if oldest < min(MinRetentionWindow, r.Target) {
		return r // too young to judge its write rate
	}
	projected := float64(oldest) * float64(c.MaxBytes) / float64(s.Bytes)
	if projected < float64(r.Keeps) {
		r.Keeps = time.Duration(projected)
	}
	return r
}

// retention holds the last judgement of a relay (in seconds; +Inf for no
// limit), for its gauges; known is false until the first.
type retention struct {
	keeps, target atomic.Uint64 // math.Float64bits of seconds
	known         atomic.Bool
	short         atomic.Bool
}

func (t *retention) set(r Retention) {
	secs := func(d time.Duration) float64 {
		if d == time.Duration(math.MaxInt64) {
			return math.Inf(1)
		}
		return d.Seconds()
	}
	t.keeps.Store(math.Float64bits(secs(r.Keeps)))
	t.target.Store(math.Float64bits(secs(r.Target)))
	t.known.Store(true)
}

func (t *retention) gauge(v *atomic.Uint64) func() float64 {
	return func() float64 {
		if !t.known.Load() {
			return math.NaN()
		}
		return math.Float64frombits(v.Load())
	}
}

// retentionCollectors are the gauges of Register: the stream's retention,
// its target and the warning.
func (r *Relay) retentionCollectors(l prometheus.Labels) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "chemmy_event_stream_retention_seconds", ConstLabels: l,
			Help: "How long the CHEMMY stream keeps an event at the rate events are written (outbox.Retention.Keeps), read every minute; +Inf when no limit binds, NaN before the first reading."},
			r.ret.gauge(&r.ret.keeps)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "chemmy_event_stream_retention_target_seconds", ConstLabels: l,
			Help: "How long the CHEMMY stream is meant to keep an event: its max_age, or 7 days when it has none."},
			r.ret.gauge(&r.ret.target)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "chemmy_event_stream_retention_short", ConstLabels: l,
			Help: "1 when the CHEMMY stream drops events younger than its target (its max_bytes binds before its max_age: raise -stream-max-bytes, see the size model in docs/event-retention.md), else 0."},
			func() float64 {
				if r.ret.short.Load() {
					return 1
				}
				return 0
			}),
	}
}

// checkRetention reads the stream's state, judges its retention, keeps it
// for the gauges and logs a warning when it becomes short (and when it no
// longer is).
func (r *Relay) checkRetention(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.ackTimeout)
	defer cancel()
	st, err := r.js.Stream(ctx, StreamName)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	ret := EstimateRetention(info.Config, info.State, r.now())
	r.ret.set(ret)
	short := ret.Short()
	if was := r.ret.short.Swap(short); short && !was {
		r.log.Warn("the event stream drops events younger than its target: its size limit binds first; raise -stream-max-bytes (docs/event-retention.md)",
			"stream", StreamName, "keeps", ret.Keeps.Round(time.Second), "target", ret.Target,
			"max_bytes", info.Config.MaxBytes, "bytes", info.State.Bytes)
	} else if was && !short {
		r.log.Info("the event stream keeps its target again", "stream", StreamName, "keeps", ret.Keeps.Round(time.Second), "target", ret.Target)
	}
	return nil
}

// watchRetention runs checkRetention every RetentionInterval until ctx is
// done (a failed reading is logged at debug level and tried again at the
// next tick: the relay's own health reports a stream it cannot reach).
func (r *Relay) watchRetention(ctx context.Context) {
	tick := time.NewTicker(RetentionInterval)
	defer tick.Stop()
	for {
		if err := r.checkRetention(ctx); err != nil && ctx.Err() == nil {
			r.log.Debug("event stream retention", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
