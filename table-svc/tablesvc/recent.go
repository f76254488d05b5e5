package tablesvc

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// A table's recent coups (Table.recent_coups): its history for whoever
// opens it, a gallery viewer's included, at every game. When a coup ends
// (coup_settled or coup_voided), the change that ends it also stores the
// coup as the public saw it then: the game's own view of the table for a
// viewer who holds no hand (viewer{}: game.Viewer{}, see view.go), so its
// redaction is exactly the gallery's at the coup's end: a settled coup's
// cards all turned, a voided coup's face-down cards never. The view holds
// only the cards dealt, never one still in the shoe. The last
// RecentCoups of each table are kept.
//
// Layout:
//
//	recent_coups  table id 0x00 be64(sequence of the ending event) -> Coup (protobuf)
var bucketRecentCoups = []byte("recent_coups")

// RecentCoups is how many finished coups each table keeps and gives
// (Table.recent_coups).
const RecentCoups = 20

// recordRecentCoups stores, in tx, each coup c ends as the public saw it
// at its end, and drops the table's coups beyond the last RecentCoups.
func recordRecentCoups(tx *bolt.Tx, c *change) error {
	var public *tablev1.Table
	b := tx.Bucket(bucketRecentCoups)
	ended := false
	for _, ev := range c.events {
		if ev.GetCoupId() == "" || ev.GetCoupSettled() == nil && ev.GetCoupVoided() == nil {
			continue
		}
		if public == nil {
			public = c.t.adapter().view(c.t, viewer{})
		}
		var cp *tablev1.Coup
		for _, x := range []*tablev1.Coup{public.GetLastCoup(), public.GetCoup()} {
			if x.GetCoupId() == ev.GetCoupId() {
				cp = x
				break
			}
		}
		if cp == nil {
			continue // the state keeps no coup of that id: nothing to show
		}
		v, err := proto.Marshal(endedCoup(cp))
		if err != nil {
			return err
		}
		if err := b.Put(append(recentPrefix(c.t.ID), be64(int64(ev.GetSequence()))...), v); err != nil {
			return err
		}
		ended = true
	}
	if !ended {
		return nil
	}
	// Keep the last RecentCoups: delete from the oldest while more.
	prefix := recentPrefix(c.t.ID)
	var keys [][]byte
	cur := b.Cursor()
	for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = cur.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for len(keys) > RecentCoups {
		if err := b.Delete(keys[0]); err != nil {
			return err
		}
		keys = keys[1:]
	}
	return nil
}

// endedCoup is cp, a finished coup's public view, without what only a
// coup in play has (whose turn, who decides, what is uncovered).
func endedCoup(cp *tablev1.Coup) *tablev1.Coup {
	out := proto.Clone(cp).(*tablev1.Coup)
	out.TurnPlayerId, out.DecisionHand, out.DecisionPlayerId, out.Uncovered = "", tablev1.Hand_HAND_UNSPECIFIED, "", 0
	return out
}

func recentPrefix(tableID string) []byte { return []byte(tableID + "\x00") }

// recentCoups reads table id's last finished coups, newest first (at most
// RecentCoups).
func (s *Service) recentCoups(id string) ([]*tablev1.Coup, error) {
	var out []*tablev1.Coup
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = recentCoupsTx(tx, id, RecentCoups)
		return err
	})
	return out, err
}

// recentCoupsTx reads, in tx, table id's last finished coups, newest
// first, at most n.
func recentCoupsTx(tx *bolt.Tx, id string, n int) ([]*tablev1.Coup, error) {
	var out []*tablev1.Coup
	b := tx.Bucket(bucketRecentCoups)
	if b == nil {
		return nil, nil
	}
	prefix := recentPrefix(id)
	cur := b.Cursor()
	// The last key of the prefix: seek past it and step back.
	k, v := cur.Seek(append(bytes.Clone(prefix), 0xff))
	if k == nil {
		k, v = cur.Last()
	} else {
		k, v = cur.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < n; k, v = cur.Prev() {
		cp := new(tablev1.Coup)
		if err := proto.Unmarshal(v, cp); err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, nil
}

// LobbyResults is how many last results a lobby row gives
// (Table.recent_results).
const LobbyResults = 6

// recentResultsTx reads, in tx, table id's last LobbyResults finished
// coups as lobby results (Table.recent_results): oldest first, each its
// number and winner from the bank's side, or voided.
func recentResultsTx(tx *bolt.Tx, id string) ([]*tablev1.RecentResult, error) {
	coups, err := recentCoupsTx(tx, id, LobbyResults)
	if err != nil {
		return nil, err
	}
	out := make([]*tablev1.RecentResult, 0, len(coups))
	for i := len(coups) - 1; i >= 0; i-- {
		cp := coups[i]
		r := &tablev1.RecentResult{Number: cp.GetNumber(), Voided: cp.GetVoided()}
		if !r.Voided {
			r.Winner = coupWinner(cp)
		}
		out = append(out, r)
	}
	return out, nil
}

// coupWinner is a settled coup's winner from the bank's side: its
// outcome, or at a game of several hands (no outcome of the coup's own)
// BANK when the bank won every decided hand, PLAYER when it lost every
// one, TIE otherwise (stand-offs, or won some and lost some).
func coupWinner(cp *tablev1.Coup) tablev1.RoadWinner {
	o := cp.GetOutcome()
	if o == tablev1.Outcome_OUTCOME_UNSPECIFIED {
		for _, h := range cp.GetHands() {
			switch ho := h.GetOutcome(); {
			case ho == tablev1.Outcome_OUTCOME_UNSPECIFIED:
			case o == tablev1.Outcome_OUTCOME_UNSPECIFIED:
				o = ho
			case o != ho:
				o = tablev1.Outcome_OUTCOME_STAND_OFF
			}
		}
	}
	switch o {
	case tablev1.Outcome_OUTCOME_BANK_WINS:
		return tablev1.RoadWinner_ROAD_WINNER_BANK
	case tablev1.Outcome_OUTCOME_BANK_LOSES:
		return tablev1.RoadWinner_ROAD_WINNER_PLAYER
	case tablev1.Outcome_OUTCOME_STAND_OFF:
		return tablev1.RoadWinner_ROAD_WINNER_TIE
	}
	return tablev1.RoadWinner_ROAD_WINNER_UNSPECIFIED
}
