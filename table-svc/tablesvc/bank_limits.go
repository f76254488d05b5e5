package tablesvc

import (
	"context"
	"fmt"

	"google.golang.org/grpc/status"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Banks carried from coup to coup. The limits are checked when money is
// held, and a bank a banker keeps is held once: after each settlement
// that leaves him the bank, every player-banked game asks the wallet
// again whether his limits allow it to stay at stake (CheckStake). When
// they do not (LIMIT_REACHED: self-exclusion, a loss limit, the maximum
// stake, the session's time) he gives it up the way his game's rules
// allow between coups, and a staff_action "limit_pass" by table-svc says
// why (detail "banker <id>: <limit>"):
//
//   - chemin de fer: he passes the bank (CF-PASS), offered in turn;
//   - baccarat banque: he passes it (BQ-BANK), auctioned again;
//   - the old game: the banker never has to give up the bank and gives it
//     up only by leaving his seat (OLD-BACCARAT), so he is stood up: his
//     bank returns to him and it is auctioned among the others.
//
// Without the wallet's answer the bank stays and the next settlement asks
// again.

// limitKeep asks whether banker's limits allow bank, already held, to
// stay at stake; when they do not, give (his game's way to give up the
// bank) is applied in c and the staff_action emitted.
func (s *Service) limitKeep(ctx context.Context, c *change, banker string, bank int64, give game.Command) error {
	limit, why, err := s.bankerLimit(ctx, c.t, banker, bank)
	if err != nil {
		s.log.Warn("the banker's limits could not be checked; the bank stays", "table", c.t.ID, "banker", banker, "err", err)
		return nil
	}
	if limit == "" {
		return nil
	}
	if err := s.applyCore(ctx, c, give); err != nil {
		return fmt.Errorf("%s of %s (limit): %w", give.CommandName(), banker, err)
	}
	c.emit("", &eventsv1.StaffAction{Action: "limit_pass", ActorId: trust.Table, ActorRole: string(auth.RoleService),
		Detail: "banker " + banker + ": " + limit, Reason: why})
	return nil
}

// bankerLimit is the limit reached (and why) that refuses banker his bank
// at stake, "" when none: the verdict the wallet gave with the settlement
// when it is on this bank, else the wallet's CheckStake.
func (s *Service) bankerLimit(ctx context.Context, t *table, banker string, bank int64) (limit, why string, err error) {
	v := t.stake
	t.stake = stakeVerdict{}
	if v.check != nil && v.amount == bank {
		return v.check.GetLimit(), v.check.GetMessage(), nil
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = s.wallet.CheckStake(cctx, &walletv1.CheckStakeRequest{AccountId: t.account(banker), Amount: bank, OperatorId: t.walletOperator()})
	if errs.Reason(err) == reasonLimitReached {
		return errs.Info(err).GetMetadata()["limit"], status.Convert(err).Message(), nil
	}
	return "", "", err
}
