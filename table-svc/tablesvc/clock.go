package tablesvc

import "fmt"

// defaultTurnMS is the default time limit of every turn: a bet, a
// decision, a bank offer (house rules *_time_limit_ms).
const defaultTurnMS = 30000

// stampDeadline records when the table's core wants a Tick (its turns'
// time limits, a betting window, a pause): see coreDeadline.
func (s *Service) stampDeadline(t *table) { coreDeadline(t) }

// track keeps the in-memory index of deadlines in step with a saved table.
func (s *Service) track(t *table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.idleDue(t)
	if t.WaitKey != "" && (!ok || t.Deadline.Before(d)) {
		d, ok = t.Deadline, true
	}
	if sd, due := t.Entropy.due(); due && (!ok || sd.Before(d)) {
		d, ok = sd, true // the seed protocol's (seeds.go)
	}
	if !ok {
		delete(s.deadlines, t.ID)
		return
	}
	s.deadlines[t.ID] = d
}

// coreDeadline stamps the core's deadline on the record (deadline.go
// reads WaitKey and Deadline): a betting window, a pause, a turn, counted
// by the core from the time of the change.
func coreDeadline(t *table) {
	if tc, own := t.adapter().(turnClock); own {
		t.WaitKey, t.Deadline = tc.turnClock(t)
		return
	}
	d := t.adapter().deadline(t)
	t.WaitKey, t.Deadline = "", d
	if !d.IsZero() {
		t.WaitKey = fmt.Sprintf("core/%d/%d/%d", t.Phase, t.CoupSeq, d.UnixNano())
	}
}

// corePending reports whether a table has an effect due (the retry loop
// carries it out).
func corePending(t *table) bool { return t.adapter().pending(t) != nil }
