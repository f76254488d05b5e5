package tablesvc

import (
	"context"

	"github.com/chemmy/chemmy/services/kit/outbox"
)

// Hooks for the deterministic simulation (cmd/sim). A service started
// with a negative Config.RetryInterval runs no background loop: the
// caller calls Recover once after Start and then Tick whenever the loop
// would have run, one call at a time, so that every call table-svc makes
// to shoe-svc and wallet-svc happens in an order fixed by the caller.
// Nothing here changes what the service does; it only lets the caller say
// when.

// Recover does what the retry loop does first when the service starts:
// it queues the tables a previous run left mid-coup (and their pending
// turns) and rolls back every escrow intent that run left behind.
func (s *Service) Recover(ctx context.Context) error {
	if err := s.scanUnfinished(); err != nil {
		return err
	}
	return s.recoverIntents(ctx, 0)
}

// Tick runs one pass of the retry loop (retryPass): it advances the
// tables left mid-coup (interrupting those stuck too long), applies the
// turns whose time has run out and rolls back the escrow intents older
// than the grace period, tables in id order.
func (s *Service) Tick(ctx context.Context) { s.retryPass(ctx) }

// EventSeq is the sequence number of the last event of a table (0 for
// none): its events are numbered 1..EventSeq.
func (s *Service) EventSeq(tableID string) (uint64, error) {
	t, err := s.load(tableID)
	if err != nil {
		return 0, err
	}
	return t.EventSeq, nil
}

// OutboxLen is the number of events stored and not yet published (up to
// max).
func (s *Service) OutboxLen(max int) (int, error) {
	msgs, err := outbox.Pending(s.db, max)
	return len(msgs), err
}
