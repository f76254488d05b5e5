package sim

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// The ledger of each coup: every settled coup's transfers in the wallet
// (those whose reference is the coup's id) are exactly the ones the
// oracle's settlement calls for, account to account and by reason
// (bet_lost, bet_won, commission); a voided coup has none. Read at rest
// from the statements of every player's account and the house's.

// transfersM sums a coup's transfers by "debit -> credit reason".
type transfersM map[string]int64

// add notes amount moved from one account to another for reason (a zero
// amount is no transfer).
func (w transfersM) add(from, to, reason string, amount int64) {
	if amount != 0 {
		w[from+" -> "+to+" "+reason] += amount
	}
}

func (w transfersM) String() string {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, w[k])
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// wantTransfers is the transfers the ledger must hold for coup (none
// until the settlement adds them).
func (s *sim) wantTransfers(t *simTable, coup string) transfersM {
	if s.ledgerWant == nil {
		s.ledgerWant, s.ledgerTable = map[string]transfersM{}, map[string]*simTable{}
	}
	w := s.ledgerWant[coup]
	if w == nil {
		w = transfersM{}
		s.ledgerWant[coup], s.ledgerTable[coup] = w, t
	}
	return w
}

// checkLedger compares, for every coup the events settled or voided, the
// wallet's transfers that refer to it with what the oracle's settlement
// makes them (ledger-follows-settlement).
func (s *sim) checkLedger() error {
	if len(s.ledgerWant) == 0 {
		return nil
	}
	accounts := []string{"house:commission", "house:bank"}
	for _, p := range s.playerIDs() {
		accounts = append(accounts, "player:"+p)
	}
	got := map[string]transfersM{}
	seen := map[string]bool{} // a transfer is in both its accounts' statements
	for _, a := range accounts {
		trs, err := s.statement(a)
		if err != nil {
			return err
		}
		for _, tr := range trs {
			ref := tr.GetReference()
			if _, ok := s.ledgerWant[ref]; !ok || seen[tr.GetTransferId()] {
				continue
			}
			seen[tr.GetTransferId()] = true
			if got[ref] == nil {
				got[ref] = transfersM{}
			}
			got[ref].add(tr.GetDebitAccountId(), tr.GetCreditAccountId(), tr.GetReason(), tr.GetAmount())
		}
	}
	coups := make([]string, 0, len(s.ledgerWant))
	for id := range s.ledgerWant {
		coups = append(coups, id)
	}
	sort.Strings(coups)
	for _, id := range coups {
		want, have := s.ledgerWant[id], got[id]
		if have == nil {
			have = transfersM{}
		}
		if !maps.Equal(want, have) {
			t := s.ledgerTable[id]
			s.violate("ledger-follows-settlement", id, "t%d %s: the ledger's transfers are %s; the oracle's settlement makes %s",
				t.n, s.coupName(t, id), have, want)
		}
	}
	return nil
}
