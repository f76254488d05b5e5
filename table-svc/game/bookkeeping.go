package game

// Bookkeeping is the part of a core's state that the shell's shared
// effects report on: the shoe in play and the holds to release. A core
// embeds it, so its fields keep their JSON keys in the core's record.
type Bookkeeping struct {
	// ShoeID is the shoe in play; ShoeNumber its number at the table,
	// 1-based.
	ShoeID     string `json:"shoe_id"`
	ShoeNumber int32  `json:"shoe_number"`
	// CutCardOut: the cut card came out in the coup in play, the shoe's
	// last (SHOE-CUT-CARD); NewShoeDue: that coup is over and the next
	// shoe is to open.
	CutCardOut bool `json:"cut_card_out,omitempty"`
	NewShoeDue bool `json:"new_shoe_due,omitempty"`
	// ShoeToClose: the table closed; its shoe is still to close.
	ShoeToClose bool `json:"shoe_to_close,omitempty"`
	// PendingVoids are wallet holds to release (bets returned, a bid or a
	// bank given back).
	PendingVoids []string `json:"pending_voids,omitempty"`
}

// Due is the bookkeeping effect a core asks first: the holds to release
// (VoidHolds), then a closed table's shoe to close (CloseShoe); nil when
// none.
func (b Bookkeeping) Due() Effect {
	switch {
	case len(b.PendingVoids) > 0:
		return VoidHolds{HoldIDs: append([]string(nil), b.PendingVoids...)}
	case b.ShoeToClose:
		return CloseShoe{}
	}
	return nil
}

// Book applies the result of a bookkeeping effect (HoldsVoided,
// ShoeClosed) and reports whether cmd was one; one that reports an effect
// not due is refused FAILED_PRECONDITION WRONG_STATE.
func (b *Bookkeeping) Book(cmd Command) (bool, error) {
	switch cmd.(type) {
	case HoldsVoided:
		if len(b.PendingVoids) == 0 {
			return true, Refuse(FailedPrecondition, "WRONG_STATE", "no holds to release")
		}
		b.PendingVoids = nil
	case ShoeClosed:
		if !b.ShoeToClose {
			return true, Refuse(FailedPrecondition, "WRONG_STATE", "no shoe to close")
		}
		b.ShoeToClose = false
	default:
		return false, nil
	}
	return true, nil
}

// Clone is b with its own copy of PendingVoids.
func (b Bookkeeping) Clone() Bookkeeping {
	b.PendingVoids = append([]string(nil), b.PendingVoids...)
	return b
}
