package outbox

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"
)

// RegisterStreamFlags adds -stream-max-age, -stream-max-bytes and
// -stream-replicas to fs, with the defaults of StreamLimits (168h, 1 GiB,
// 1), and returns the StreamLimits they fill when fs is parsed. A value
// StreamLimits.Validate refuses (an age below 1h, a size below 4 MiB,
// replicas outside 1..5) fails the parse with its reason. The limits
// apply only when the service creates the CHEMMY stream; an existing one
// is never changed.
func RegisterStreamFlags(fs *flag.FlagSet) *StreamLimits {
	l := &StreamLimits{MaxAge: DefaultStreamMaxAge, MaxBytes: DefaultStreamMaxBytes, Replicas: DefaultStreamReplicas}
	fs.Var(limitFlag[time.Duration]{&l.MaxAge, time.ParseDuration, func(d time.Duration) StreamLimits { return StreamLimits{MaxAge: d} }},
		"stream-max-age", "CHEMMY event stream: events older than this `duration` are discarded (when this service creates the stream; an existing one is never changed); at least 1h; negative: no age limit")
	fs.Var(limitFlag[int64]{&l.MaxBytes, func(s string) (int64, error) { return strconv.ParseInt(s, 0, 64) }, func(n int64) StreamLimits { return StreamLimits{MaxBytes: n} }},
		"stream-max-bytes", "CHEMMY event stream: its size in `bytes`, the oldest events discarded beyond it (must fit the NATS server's max_file_store); at least 4194304 (4 MiB); negative: no size limit")
	fs.Var(limitFlag[int]{&l.Replicas, strconv.Atoi, func(n int) StreamLimits { return StreamLimits{Replicas: n} }},
		"stream-replicas", "CHEMMY event stream: `replicas` in a JetStream cluster (1..5)")
	return l
}

// limitFlag is the flag.Value of one stream limit: it parses the value
// with parse and refuses what StreamLimits.Validate refuses of the
// limits alone sets.
type limitFlag[T any] struct {
	p      *T
	parse  func(string) (T, error)
	limits func(T) StreamLimits
}

func (f limitFlag[T]) String() string {
	if f.p == nil { // the flag package's zero value
		var zero T
		return fmt.Sprint(zero)
	}
	return fmt.Sprint(*f.p)
}

func (f limitFlag[T]) Set(s string) error {
	v, err := f.parse(s)
	if err != nil {
		return err
	}
	if err := f.limits(v).Validate(); err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return errors.New(le.Reason) // the flag package names the flag and the value
		}
		return err
	}
	*f.p = v
	return nil
}
