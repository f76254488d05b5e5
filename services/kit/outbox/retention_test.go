package outbox

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// TestEstimateRetention: each case's expected figure is worked out by hand
// from the stream's limits and state.
func TestEstimateRetention(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	const GiB = 1 << 30
	day := 24 * time.Hour
	forever := time.Duration(math.MaxInt64)
	cases := map[string]struct {
		c     jetstream.StreamConfig
		s     jetstream.StreamState
		keeps time.Duration
		tgt   time.Duration
		short bool
	}{
		// 100 MiB written in the 2 days since the oldest event: 1 GiB lasts
		// 2 d x 1024/100 = 20.48 days, more than the 7-day age limit.
		"age binds": {jetstream.StreamConfig{MaxAge: 7 * day, MaxBytes: GiB},
			jetstream.StreamState{Msgs: 10, Bytes: 100 << 20, FirstTime: now.Add(-2 * day)}, 7 * day, 7 * day, false},
		// 512 MiB in 1 day: 1 GiB lasts 2 days, under the 7-day limit.
		"size binds": {jetstream.StreamConfig{MaxAge: 7 * day, MaxBytes: GiB},
			jetstream.StreamState{Msgs: 10, Bytes: 512 << 20, FirstTime: now.Add(-day)}, 2 * day, 7 * day, true},
		// Full (99% of max_bytes): the oldest event is 30 minutes old.
		"full": {jetstream.StreamConfig{MaxAge: 7 * day, MaxBytes: GiB},
			jetstream.StreamState{Msgs: 10, Bytes: GiB / 100 * 99, FirstTime: now.Add(-30 * time.Minute)}, 30 * time.Minute, 7 * day, true},
		// No age limit: the goal is 7 days; 1 GiB at 1 GiB/4 days (256 MiB a
		// day, 64 MiB in 6 hours) lasts 4 days.
		"no age limit": {jetstream.StreamConfig{MaxBytes: GiB},
			jetstream.StreamState{Msgs: 1, Bytes: 64 << 20, FirstTime: now.Add(-6 * time.Hour)}, 4 * day, RetentionGoal, true},
		"no size limit": {jetstream.StreamConfig{MaxAge: day, MaxBytes: -1},
			jetstream.StreamState{Msgs: 1, Bytes: 1 << 40, FirstTime: now.Add(-time.Hour)}, day, day, false},
		// 512 MiB in 10 minutes: too young to project, and not full.
		"young": {jetstream.StreamConfig{MaxAge: 7 * day, MaxBytes: GiB},
			jetstream.StreamState{Msgs: 10, Bytes: 512 << 20, FirstTime: now.Add(-10 * time.Minute)}, 7 * day, 7 * day, false},
		"no limit":     {jetstream.StreamConfig{MaxBytes: -1}, jetstream.StreamState{Msgs: 1, Bytes: 1}, forever, RetentionGoal, false},
		"empty stream": {jetstream.StreamConfig{MaxAge: day, MaxBytes: 4 << 20}, jetstream.StreamState{}, day, day, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := EstimateRetention(tc.c, tc.s, now)
			if r.Keeps != tc.keeps || r.Target != tc.tgt || r.Short() != tc.short {
				t.Errorf("got keeps %v target %v short %v, want %v %v %v", r.Keeps, r.Target, r.Short(), tc.keeps, tc.tgt, tc.short)
			}
		})
	}
}

// TestRetentionWarning: a stream whose size limit is reached within the
// hour while its age limit is a day is reported short by the relay's
// gauges (and a warning in the log), its retention the age of its oldest
// event; a roomy one is not.
func TestRetentionWarning(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		fill  int // bytes published
		short float64
	}{{"full", 6 << 20, 1}, {"roomy", 64 << 10, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			js := startNATS(t)
			if err := CreateStream(ctx, js, StreamLimits{MaxAge: 24 * time.Hour, MaxBytes: MinStreamMaxBytes}, nil); err != nil {
				t.Fatal(err)
			}
			payload := make([]byte, 32<<10)
			for n := 0; n < tc.fill; n += len(payload) {
				if _, err := js.Publish(ctx, "chemmy.test", payload); err != nil {
					t.Fatal(err)
				}
			}
			var logs strings.Builder
			r := NewRelay(openDB(t), js, slog.New(slog.NewTextHandler(&logs, nil)))
			reg := prometheus.NewRegistry()
			if err := r.Register(reg); err != nil {
				t.Fatal(err)
			}
			if v, _ := metricValue(t, reg, "chemmy_event_stream_retention_seconds"); !math.IsNaN(v) {
				t.Errorf("retention before the first reading: %v, want NaN", v)
			}
			if err := r.checkRetention(ctx); err != nil {
				t.Fatal(err)
			}
			short, _ := metricValue(t, reg, "chemmy_event_stream_retention_short")
			keeps, _ := metricValue(t, reg, "chemmy_event_stream_retention_seconds")
			target, _ := metricValue(t, reg, "chemmy_event_stream_retention_target_seconds")
			if short != tc.short || target != 86400 {
				t.Errorf("short %v target %v, want %v and 86400", short, target, tc.short)
			}
			if tc.short == 1 && (keeps >= 3600 || keeps < 0) {
				t.Errorf("a full stream keeps %vs, want the age of its oldest event (seconds)", keeps)
			}
			if got := strings.Contains(logs.String(), "drops events younger than its target"); got != (tc.short == 1) {
				t.Errorf("warning logged: %v, want %v:\n%s", got, tc.short == 1, logs.String())
			}
		})
	}
}
