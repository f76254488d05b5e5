package tablesvc

import (
	"strings"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// The transfers of a round. A game's settlement call (SettleCoup,
// SettlePuntoBanco, SettleBanque, SettleOld) answers with the ledger
// entries it wrote, each with the balances it left; the core's adapter
// notes them on the table (noteSettlement) and the save that stores the
// coup_settled event keeps them in the round's record (recordRounds),
// with each player's net result. A settlement repeated after a crash is
// answered again from the wallet's idempotency record, so the transfers
// are those of the one settlement that happened.

// noteSettlement keeps the transfers of coup coupID's settlement until
// the change that records its coup_settled is saved.
func (t *table) noteSettlement(coupID string, trs []*walletv1.Transfer) {
	t.settled = &settlement{coupID: coupID, transfers: trs}
}

// takeSettlement is the noted settlement's transfers when they are coup
// coupID's (nil otherwise); they are taken once.
func (t *table) takeSettlement(coupID string) []*walletv1.Transfer {
	if t.settled == nil || t.settled.coupID != coupID {
		return nil
	}
	trs := t.settled.transfers
	t.settled = nil
	return trs
}

// roundTransfer is a wallet transfer as the round's record keeps it.
type roundTransfer struct {
	ID          string `json:"id"`
	Sequence    uint64 `json:"seq,omitempty"`
	Debit       string `json:"debit"`
	Credit      string `json:"credit"`
	Amount      int64  `json:"amount"`
	Reason      string `json:"reason"`
	Currency    string `json:"currency,omitempty"`
	DebitAfter  int64  `json:"debit_after"`
	CreditAfter int64  `json:"credit_after"`
}

// accountPlayer is the player whose wallet account acct is
// ("player:<id>" or "player:<id>@<CUR>"); "" for a house account.
func accountPlayer(acct string) string {
	id, ok := strings.CutPrefix(acct, "player:")
	if !ok {
		return ""
	}
	id, _, _ = strings.Cut(id, "@")
	return id
}

// addTransfers keeps a settlement's transfers in r and adds each to the
// net result of the players whose accounts it moved (fresh collects the
// players named for the first time, as apply does).
func (r *roundRecord) addTransfers(trs []*walletv1.Transfer, fresh *[]string) {
	for _, tr := range trs {
		r.Transfers = append(r.Transfers, roundTransfer{ID: tr.GetTransferId(), Sequence: tr.GetSequence(),
			Debit: tr.GetDebitAccountId(), Credit: tr.GetCreditAccountId(), Amount: tr.GetAmount(), Reason: tr.GetReason(),
			Currency: tr.GetCurrencyCode(), DebitAfter: tr.GetDebitBalanceAfter(), CreditAfter: tr.GetCreditBalanceAfter()})
		if p := accountPlayer(tr.GetDebitAccountId()); p != "" {
			r.player(p, fresh).Net -= tr.GetAmount()
		}
		if p := accountPlayer(tr.GetCreditAccountId()); p != "" {
			r.player(p, fresh).Net += tr.GetAmount()
		}
	}
}

// transfersFor is the round's transfers as c may read them: staff see
// every balance; a player only his own accounts' (another player's or a
// house account's balances are left at 0).
func (r *roundRecord) transfersFor(c auth.Caller) []*tablev1.RoundTransfer {
	var out []*tablev1.RoundTransfer
	for _, tr := range r.Transfers {
		rt := &tablev1.RoundTransfer{TransferId: tr.ID, Sequence: tr.Sequence, DebitAccountId: tr.Debit,
			CreditAccountId: tr.Credit, Amount: tr.Amount, Reason: tr.Reason, CurrencyCode: tr.Currency}
		if staffReader(c) || accountPlayer(tr.Debit) == c.Subject {
			rt.DebitBalanceAfter, rt.DebitBalanceBefore = tr.DebitAfter, tr.DebitAfter+tr.Amount
		}
		if staffReader(c) || accountPlayer(tr.Credit) == c.Subject {
			rt.CreditBalanceAfter, rt.CreditBalanceBefore = tr.CreditAfter, tr.CreditAfter-tr.Amount
		}
		out = append(out, rt)
	}
	return out
}
