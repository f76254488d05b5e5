package refwallet

import (
	"errors"
	"fmt"
	"time"
)

// Faults are the rates (0..1, per wallet call) of the faults the reference
// wallet injects; at most one fault hits a call, so the rates sum to at
// most 1. Each fault keeps the books right: the movement happens once or
// not at all, and a later call with the same transaction id gets its true
// outcome.
type Faults struct {
	// Timeout: the wallet hangs until the client gives up (or HangMS),
	// having applied the transaction first or not at all (half each).
	Timeout float64 `json:"timeout"`
	// Error: a 500 answer, sent before applying (nothing moved) or after
	// applying (half each).
	Error float64 `json:"error"`
	// Duplicate: a transaction applied for the first time is answered as
	// a duplicate (Result.Duplicate set); it moved once.
	Duplicate float64 `json:"duplicate"`
	// Late: the wallet waits until the client gives up (or HangMS), then
	// LateMS more, then applies the transaction, answering nobody. A
	// rollback of that debit arriving meanwhile wins: it is recorded as a
	// tombstone, the late debit is then refused and never applied.
	Late float64 `json:"late"`
	// HangMS caps how long a timeout or a late call waits for the client
	// to give up, ms; 0 means 10000.
	HangMS int64 `json:"hang_ms"`
	// LateMS is how long a late call waits after the client gave up
	// before applying, ms; 0 means 1000.
	LateMS int64 `json:"late_ms"`
}

// Validate checks the rates and delays.
func (f Faults) Validate() error {
	sum := 0.0
	for _, r := range []float64{f.Timeout, f.Error, f.Duplicate, f.Late} {
		if r < 0 || r > 1 || r != r {
			return fmt.Errorf("refwallet: fault rate %v outside 0..1", r)
		}
		sum += r
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("refwallet: fault rates sum to %v, more than 1", sum)
	}
	if f.HangMS < 0 || f.LateMS < 0 {
		return errors.New("refwallet: negative fault delay")
	}
	return nil
}

func (f Faults) hang() time.Duration {
	if f.HangMS == 0 {
		return 10 * time.Second
	}
	return time.Duration(f.HangMS) * time.Millisecond
}

func (f Faults) lateDelay() time.Duration {
	if f.LateMS == 0 {
		return time.Second
	}
	return time.Duration(f.LateMS) * time.Millisecond
}

// fault is what happens to one call.
type fault int

const (
	faultNone fault = iota
	faultTimeoutApplied
	faultTimeoutDropped
	faultErrorBefore
	faultErrorAfter
	faultDuplicate
	faultLate
)

var faultNames = [...]string{"none", "timeout_applied", "timeout_dropped", "error_before", "error_after", "duplicate", "late"}

func (f fault) String() string { return faultNames[f] }

// pick draws the fault of one call from u (uniform in [0,1)) and coin (the
// variant).
func (f Faults) pick(u float64, coin bool) fault {
	variant := func(a, b fault) fault {
		if coin {
			return a
		}
		return b
	}
	switch {
	case u < f.Timeout:
		return variant(faultTimeoutApplied, faultTimeoutDropped)
	case u < f.Timeout+f.Error:
		return variant(faultErrorAfter, faultErrorBefore)
	case u < f.Timeout+f.Error+f.Duplicate:
		return faultDuplicate
	case u < f.Timeout+f.Error+f.Duplicate+f.Late:
		return faultLate
	}
	return faultNone
}
