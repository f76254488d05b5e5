package sim

import (
	"sync"
	"time"
)

// clock is table-svc's clock (tablesvc.Config.Clock): time moves only
// when the driver advances it. upTime counts the simulated time during
// which table-svc was running, for the fairness of turn time limits.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	upTime time.Duration
}

// simEpoch is when every simulation starts.
var simEpoch = time.Date(2026, 1, 1, 20, 0, 0, 0, time.UTC)

func newClock() *clock { return &clock{now: simEpoch} }

// Now is the simulated time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// advance moves the time on by d; up says whether table-svc ran meanwhile.
func (c *clock) advance(d time.Duration, up bool) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	if up {
		c.upTime += d
	}
	c.mu.Unlock()
}

// up is the simulated time table-svc has been running so far.
func (c *clock) up() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.upTime
}
