package outbox

import "flag"

// RegisterStreamFlags adds -stream-max-age, -stream-max-bytes and
// -stream-replicas to fs, with the defaults of StreamLimits (720h, 1 GiB,
// 1), and returns the StreamLimits they fill when fs is parsed. The limits
// apply only when the service creates the CHEMMY stream; an existing one
// is never changed.
func RegisterStreamFlags(fs *flag.FlagSet) *StreamLimits {
	l := new(StreamLimits)
	fs.DurationVar(&l.MaxAge, "stream-max-age", DefaultStreamMaxAge, "CHEMMY event stream: events older than this are discarded (when this service creates the stream; an existing one is never changed); negative: no age limit")
	fs.Int64Var(&l.MaxBytes, "stream-max-bytes", DefaultStreamMaxBytes, "CHEMMY event stream: its size in bytes, the oldest events discarded beyond it (must fit the NATS server's max_file_store); negative: no size limit")
	fs.IntVar(&l.Replicas, "stream-replicas", DefaultStreamReplicas, "CHEMMY event stream: replicas in a JetStream cluster (1..5)")
	return l
}
