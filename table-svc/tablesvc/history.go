package tablesvc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// Round history (game recall): every event that carries a coup id is
// kept in full (unredacted) in the same transaction that saves it (save
// calls recordRounds), with a summary of its coup (a round) and indexes by
// player, by table and by time. See ListRounds and GetRound in
// chemmy.table.v1 for who reads what. A round a hold names (its
// reference's coup, which the wallet, and in seamless mode the operator's
// wallet, is sent as the round id) is recorded with the hold's escrow
// intent, before the wallet is called (stakeRound), so every round id the
// wallet ever sees is one GetRound answers; a round whose coup the table
// will never open is cancelled (cancelStaked), and the close of a table
// ends every round of it still in play (finishRounds). A fee's round
// (fee_rounds.go) is recorded the same way before the fee is asked for.
//
// Layout:
//
//	round_events  coup id 0x00 be64(sequence)  -> TableEvent (protobuf)
//	rounds        coup id                      -> roundRecord (JSON)
//	round_index   "a" 0x00 be64(start) coup id -> coup id (every round)
//	              "t" 0x00 table 0x00 be64(start) coup id -> coup id
//	              "p" 0x00 player 0x00 be64(start) coup id -> coup id
//	round_tables  table id                     -> be64(rounds started)
//
// start is the unix time in nanoseconds of the coup's first event, so a
// prefix reads its rounds in order of start (newest first backwards).
var (
	bucketRoundEvents = []byte("round_events")
	bucketRounds      = []byte("rounds")
	bucketRoundIndex  = []byte("round_index")
	bucketRoundTables = []byte("round_tables")
)

// historyBuckets are created at start (app.Config.Buckets).
var historyBuckets = [][]byte{bucketRoundEvents, bucketRounds, bucketRoundIndex, bucketRoundTables}

// KeepRoundsPerPlayer is how many of each player's latest rounds are kept
// whatever their age (game recall).
const KeepRoundsPerPlayer = 10

// DefaultRoundRetention is Config.RoundRetention's default: 12 months
// (365 days), what game-recall rules commonly ask of a round's record.
const DefaultRoundRetention = 365 * 24 * time.Hour

// roundSweepEvery is how often expired rounds are deleted.
const roundSweepEvery = time.Hour

// roundRecord is a round's summary as stored.
type roundRecord struct {
	CoupID     string        `json:"coup_id"`
	TableID    string        `json:"table_id"`
	Variant    int32         `json:"variant,omitempty"`
	Number     int64         `json:"number"`
	Start      int64         `json:"start"` // unix ns
	End        int64         `json:"end"`   // unix ns
	State      int32         `json:"state"` // tablev1.RoundState
	Outcome    int32         `json:"outcome,omitempty"`
	Players    []roundPlayer `json:"players,omitempty"`
	BankNet    int64         `json:"bank_net,omitempty"`
	Commission int64         `json:"commission,omitempty"`
	// Transfers are the settlement's wallet transfers (round_transfers.go).
	Transfers []roundTransfer `json:"transfers,omitempty"`
	// Holders are the players who held the hands (by eventsv1.Hand) whose
	// card_dealt events name no holder (chemin de fer's), from the table's
	// state when the cards were dealt: a voided round shows each his own
	// cards (GetRound). Rounds recorded before it have none: their
	// face-down cards stay hidden from everyone but auditors.
	Holders map[int32]string `json:"holders,omitempty"`
	// Currency and Exponent are the table's when the round started (empty
	// and nil for rounds recorded before; Exponent nil too for a table in a
	// non-ISO code stored before exponents).
	Currency string `json:"currency,omitempty"`
	Exponent *int32 `json:"exponent,omitempty"`
	// Operator is the table's operator (operator.go); empty for a round
	// recorded before tables had operators: DefaultOperator's.
	Operator string `json:"operator_id,omitempty"`
	// Staked is set while the round is known only from the wallet calls
	// that named it (stakeRound): no event of its coup saved, and not the
	// table's coup yet. The save of the change that makes it either names
	// the banker as newRound does and clears it.
	Staked bool `json:"staked,omitempty"`
}

// operator is the round's operator.
func (r *roundRecord) operator() string {
	if r.Operator == "" {
		return DefaultOperator
	}
	return r.Operator
}

type roundPlayer struct {
	ID     string `json:"id"`
	Banker bool   `json:"banker,omitempty"`
	Stake  int64  `json:"stake,omitempty"`
	Net    int64  `json:"net,omitempty"`
	// Before and After are his wallet balance before the settlement's
	// first transfer that moved his account and after its last (nil: it
	// moved none of his money, or his account only mirrors an operator's
	// wallet, Transfer.seamless).
	Before *int64 `json:"balance_before,omitempty"`
	After  *int64 `json:"balance_after,omitempty"`
}

func be64(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func indexKey(kind, id string, start int64, coupID string) []byte {
	k := []byte(kind + "\x00")
	if id != "" {
		k = append(k, id+"\x00"...)
	}
	return append(append(k, be64(start)...), coupID...)
}

// player returns the round's entry for id, added when new.
func (r *roundRecord) player(id string, fresh *[]string) *roundPlayer {
	for i := range r.Players {
		if r.Players[i].ID == id {
			return &r.Players[i]
		}
	}
	r.Players = append(r.Players, roundPlayer{ID: id})
	*fresh = append(*fresh, id)
	return &r.Players[len(r.Players)-1]
}

// named reports whether the round's events name player id.
func (r *roundRecord) named(id string) bool {
	for _, p := range r.Players {
		if p.ID == id {
			return true
		}
	}
	return false
}

// apply folds one event of the round into its summary; fresh collects the
// players it names for the first time.
func (r *roundRecord) apply(ev *eventsv1.TableEvent, fresh *[]string) {
	name := func(id string) *roundPlayer {
		if id == "" {
			return &roundPlayer{}
		}
		return r.player(id, fresh)
	}
	switch p := ev.GetPayload().(type) {
	case *eventsv1.TableEvent_BetPlaced:
		name(p.BetPlaced.GetPlayerId()).Stake += p.BetPlaced.GetAmount()
	case *eventsv1.TableEvent_BetReduced:
		name(p.BetReduced.GetPlayerId()).Stake = p.BetReduced.GetAmount()
	case *eventsv1.TableEvent_BancoCalled:
		name(p.BancoCalled.GetPlayerId()).Stake += p.BancoCalled.GetAmount()
	case *eventsv1.TableEvent_BetDeclined:
		name(p.BetDeclined.GetPlayerId())
	case *eventsv1.TableEvent_BankChanged:
		// The banker who keeps the bank (or raises it) played this
		// coup's bank; a new banker named after the coup did not.
		switch b := p.BankChanged.GetBankerPlayerId(); p.BankChanged.GetReason() {
		case eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, eventsv1.BankChangeReason_BANK_CHANGE_REASON_RAISED:
			if b != "" {
				name(b).Banker = true
			}
		}
		if b := p.BankChanged.GetPreviousBankerPlayerId(); b != "" {
			name(b).Banker = true
		}
	case *eventsv1.TableEvent_BankOffered:
		name(p.BankOffered.GetPlayerId())
	case *eventsv1.TableEvent_BankBid:
		name(p.BankBid.GetPlayerId())
	case *eventsv1.TableEvent_CardDealt:
		name(p.CardDealt.GetHolderPlayerId())
	case *eventsv1.TableEvent_DrawDecided:
		name(p.DrawDecided.GetPlayerId())
	case *eventsv1.TableEvent_TurnTimedOut:
		name(p.TurnTimedOut.GetPlayerId())
	case *eventsv1.TableEvent_PlayerSeated:
		name(p.PlayerSeated.GetPlayerId())
	case *eventsv1.TableEvent_PlayerLeft:
		name(p.PlayerLeft.GetPlayerId())
	case *eventsv1.TableEvent_SeatFeeCharged:
		name(p.SeatFeeCharged.GetPlayerId())
	case *eventsv1.TableEvent_TopCardsMoved:
		name(p.TopCardsMoved.GetBankerPlayerId()).Banker = true
	case *eventsv1.TableEvent_CoupResulted:
		r.Outcome = int32(p.CoupResulted.GetOutcome())
		for _, h := range p.CoupResulted.GetHands() {
			name(h.GetHolderPlayerId())
		}
	case *eventsv1.TableEvent_CoupSettled:
		s := p.CoupSettled
		r.State, r.Outcome, r.Commission = int32(tablev1.RoundState_ROUND_STATE_SETTLED), int32(s.GetOutcome()), s.GetCommission()
		r.BankNet = s.GetBankerNet()
		if g := gameOf(tablev1.Variant(r.Variant)); g != nil && g.houseBanks() {
			r.BankNet = s.GetHouseNet()
		}
	case *eventsv1.TableEvent_CoupVoided:
		r.State, r.Outcome = int32(tablev1.RoundState_ROUND_STATE_VOIDED), 0
	}
	r.End = ev.GetOccurTime().AsTime().UnixNano()
}

// recordRounds keeps c's events that carry a coup id in the round
// history, in the transaction tx that saves them.
func recordRounds(tx *bolt.Tx, c *change) error {
	evs, rounds, index := tx.Bucket(bucketRoundEvents), tx.Bucket(bucketRounds), tx.Bucket(bucketRoundIndex)
	open := map[string]*roundRecord{}
	var order []string
	var fresh = map[string][]string{}
	for _, ev := range c.events {
		id := ev.GetCoupId()
		if id == "" {
			continue
		}
		b, err := proto.Marshal(ev)
		if err != nil {
			return err
		}
		if err := evs.Put(append([]byte(id+"\x00"), be64(int64(ev.GetSequence()))...), b); err != nil {
			return err
		}
		r := open[id]
		if r == nil {
			r = new(roundRecord)
			if v := rounds.Get([]byte(id)); v != nil {
				if err := decodeRound(v, r); err != nil {
					return err
				}
				if r.Staked {
					// Known from a stake so far: its first event.
					r.Staked = false
					r.nameBanker(c, &fresh)
				}
			} else {
				if r, err = newRound(tx, c, ev, &fresh); err != nil {
					return err
				}
			}
			open[id] = r
			order = append(order, id)
		}
		f := fresh[id]
		r.apply(ev, &f)
		if cd := ev.GetCardDealt(); cd != nil && cd.GetHolderPlayerId() == "" {
			if h := c.t.adapter().holderOf(c.t, ev); h != "" {
				if r.Holders == nil {
					r.Holders = map[int32]string{}
				}
				r.Holders[int32(cd.GetHand())] = h
			}
		}
		if ev.GetCoupSettled() != nil {
			r.addTransfers(c.t.takeSettlement(id), &f)
		}
		fresh[id] = f
	}
	if id := c.t.adapter().coupID(c.t); id != "" && open[id] == nil {
		// The table's coup, known so far only from its stakes
		// (stakeRound): its bank went up in this change or before, with
		// no event of the coup yet.
		if v := rounds.Get([]byte(id)); v != nil {
			r := new(roundRecord)
			if err := decodeRound(v, r); err != nil {
				return err
			}
			if r.Staked {
				r.Staked = false
				r.nameBanker(c, &fresh)
				open[id] = r
				order = append(order, id)
			}
		}
	}
	for _, id := range order {
		r := open[id]
		for _, p := range fresh[id] {
			if err := index.Put(indexKey("p", p, r.Start, id), []byte(id)); err != nil {
				return err
			}
		}
		v, err := encodeRound(r)
		if err != nil {
			return err
		}
		if err := rounds.Put([]byte(id), v); err != nil {
			return err
		}
	}
	for _, ev := range c.events {
		if ev.GetTableClosed() != nil {
			return finishRounds(tx, c.t.ID, ev.GetOccurTime().AsTime().UnixNano())
		}
	}
	return nil
}

// finishRounds ends, in tx, every round of table tableID still in play
// when the table closes: ROUND_STATE_CANCELLED at end (unix ns). A table
// closes between coups only, so no stake of such a round stands: the
// betting of a coup no one bet in (a bank just put up, turns timed out),
// or a round known only from a stake the wallet refused or that was
// rolled back.
func finishRounds(tx *bolt.Tx, tableID string, end int64) error {
	rounds := tx.Bucket(bucketRounds)
	prefix := []byte("t\x00" + tableID + "\x00")
	c := tx.Bucket(bucketRoundIndex).Cursor()
	var done []*roundRecord
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		rv := rounds.Get(v)
		if rv == nil {
			continue
		}
		r := new(roundRecord)
		if err := decodeRound(rv, r); err != nil {
			return err
		}
		if !r.over() {
			r.State, r.Staked, r.End = int32(tablev1.RoundState_ROUND_STATE_CANCELLED), false, max(end, r.Start)
			done = append(done, r)
		}
	}
	for _, r := range done { // not while the cursor reads the index
		if err := putRound(rounds, r); err != nil {
			return err
		}
	}
	return nil
}

func putRound(rounds *bolt.Bucket, r *roundRecord) error {
	v, err := encodeRound(r)
	if err != nil {
		return err
	}
	return rounds.Put([]byte(r.CoupID), v)
}

// stakeRound records in tx that a call to the wallet is about to name
// round coupID of table t for player's stake (a bank or a bid for it when
// bank), before the call: every round id the wallet (and, in seamless
// mode, the operator's wallet) is ever sent is a round GetRound answers.
// A round not recorded yet starts here, in play, naming the player
// (Staked until its first event is saved); one recorded names him from
// now on. Time: now.
func stakeRound(tx *bolt.Tx, t *table, coupID, player string, bank bool, now time.Time) error {
	rounds := tx.Bucket(bucketRounds)
	r := new(roundRecord)
	if v := rounds.Get([]byte(coupID)); v != nil {
		if err := decodeRound(v, r); err != nil {
			return err
		}
		if r.named(player) {
			return nil
		}
	} else {
		var err error
		if r, err = startRound(tx, t, coupID, now.UnixNano()); err != nil {
			return err
		}
		r.Staked, r.End = true, r.Start
	}
	var fresh []string
	p := r.player(player, &fresh)
	p.Banker = p.Banker || bank
	if err := tx.Bucket(bucketRoundIndex).Put(indexKey("p", player, r.Start, coupID), []byte(coupID)); err != nil {
		return err
	}
	return putRound(rounds, r)
}

// stakedOnly reports whether round id is known only from stakes
// (stakeRound): no coup of the table has taken it, and it is not over.
func (s *Service) stakedOnly(id string) bool {
	staked := false
	_ = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketRounds).Get([]byte(id)); v != nil {
			var r roundRecord
			staked = decodeRound(v, &r) == nil && r.Staked && !r.over()
		}
		return nil
	})
	return staked
}

// cancelStaked ends round coupID as ROUND_STATE_CANCELLED at now when it
// is known only from stakes (no event of its coup saved) and the table
// will not open a coup under its id: a bank or first bet the wallet
// refused, or one rolled back, before the table opened its coup. Any
// other round is left as it is. Its end is in the time of the events
// (the wall clock, as their occur_time).
func (s *Service) cancelStaked(coupID string) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		rounds := tx.Bucket(bucketRounds)
		v := rounds.Get([]byte(coupID))
		if v == nil {
			return nil
		}
		r := new(roundRecord)
		if err := decodeRound(v, r); err != nil {
			return err
		}
		if !r.Staked || r.over() {
			return nil
		}
		r.State, r.Staked, r.End = int32(tablev1.RoundState_ROUND_STATE_CANCELLED), false, max(time.Now().UnixNano(), r.Start)
		return putRound(rounds, r)
	})
	if err != nil {
		// It stays in play until its table closes (finishRounds).
		s.log.Warn("round not cancelled", "coup", coupID, "err", err)
	}
}

// newRound starts the record of the round whose first event is ev: its
// number at the table, its table and time indexes, and the banker holding
// the bank as it starts (whose acceptance of the bank came before the
// coup had an id).
func newRound(tx *bolt.Tx, c *change, ev *eventsv1.TableEvent, fresh *map[string][]string) (*roundRecord, error) {
	r, err := startRound(tx, c.t, ev.GetCoupId(), ev.GetOccurTime().AsTime().UnixNano())
	if err != nil {
		return nil, err
	}
	r.nameBanker(c, fresh)
	return r, nil
}

// startRound starts the record of round id of table t, in play since
// start (unix ns): its number at the table, its table and time indexes.
func startRound(tx *bolt.Tx, t *table, id string, start int64) (*roundRecord, error) {
	counts := tx.Bucket(bucketRoundTables)
	var n int64
	if v := counts.Get([]byte(t.ID)); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n++
	if err := counts.Put([]byte(t.ID), be64(n)); err != nil {
		return nil, err
	}
	r := &roundRecord{CoupID: id, TableID: t.ID, Variant: t.Variant, Number: n,
		Start: start, State: int32(tablev1.RoundState_ROUND_STATE_IN_PLAY),
		Currency: t.Currency, Exponent: t.tableExponent(), Operator: t.operator()}
	index := tx.Bucket(bucketRoundIndex)
	if err := index.Put(indexKey("a", "", r.Start, id), []byte(id)); err != nil {
		return nil, err
	}
	if err := index.Put(indexKey("t", t.ID, r.Start, id), []byte(id)); err != nil {
		return nil, err
	}
	return r, nil
}

// nameBanker names in r the banker holding the bank as its coup's first
// event is saved in c (his acceptance of the bank came before the coup
// had an id), with the bank as his stake; fresh collects him if new.
func (r *roundRecord) nameBanker(c *change, fresh *map[string][]string) {
	if view := toProto(c.t, viewer{}); view.GetBankerPlayerId() != "" {
		f := (*fresh)[r.CoupID]
		p := r.player(view.GetBankerPlayerId(), &f)
		p.Banker, p.Stake = true, view.GetBank()
		(*fresh)[r.CoupID] = f
	}
}

// toRound is r as the API gives it to c: a player sees only his own
// wallet balances (as in transfersFor).
func (r *roundRecord) toRound(c auth.Caller) *tablev1.Round {
	out := &tablev1.Round{CoupId: r.CoupID, TableId: r.TableID, Variant: canonical(tablev1.Variant(r.Variant)), Number: r.Number,
		StartTime: timestamppb.New(time.Unix(0, r.Start)), EndTime: timestamppb.New(time.Unix(0, r.End)),
		State: tablev1.RoundState(r.State), Outcome: tablev1.Outcome(r.Outcome), BankNet: r.BankNet, Commission: r.Commission,
		CurrencyCode: r.Currency, CurrencyExponent: r.Exponent, OperatorId: r.operator()}
	for _, p := range r.Players {
		rp := &tablev1.RoundPlayer{PlayerId: p.ID, Banker: p.Banker, Stake: p.Stake, Net: p.Net}
		if staffReader(c) || p.ID == c.Subject {
			rp.BalanceBefore, rp.BalanceAfter = p.Before, p.After
		}
		out.Players = append(out.Players, rp)
	}
	return out
}

// holds reports whether c, a player, held the hand of card_dealt ev: as
// the event names it, or as the round recorded it (Holders).
func (r *roundRecord) holds(c auth.Caller, ev *eventsv1.TableEvent) bool {
	cd := ev.GetCardDealt()
	if cd == nil || c.Role != auth.RolePlayer || c.Subject == "" {
		return false
	}
	h := cd.GetHolderPlayerId()
	if h == "" {
		h = r.Holders[int32(cd.GetHand())]
	}
	return h == c.Subject
}

func (r *roundRecord) over() bool { return r.State != int32(tablev1.RoundState_ROUND_STATE_IN_PLAY) }

// staffReader reports whether c reads every round.
func staffReader(c auth.Caller) bool { return c.Role != auth.RolePlayer }

// maxRoundScan is the most rounds one ListRounds call reads: the rounds
// of other operators are skipped as they are read (there is no index by
// operator yet), so a page may end short, even empty, with a
// next_page_token after the last round read, rather than read a whole
// history of another operator's rounds.
const maxRoundScan = 1000

// ListRounds implements chemmy.table.v1.TableService.ListRounds.
func (s *Service) ListRounds(ctx context.Context, req *tablev1.ListRoundsRequest) (*tablev1.ListRoundsResponse, error) {
	caller, _ := auth.FromContext(ctx)
	size := int(req.GetPageSize())
	switch {
	case size < 0 || size > 100:
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "page_size must be 0..100, got %d", size)
	case req.GetPlayerId() != "" && req.GetTableId() != "":
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "give player_id or table_id, not both")
	case req.GetStartTime() != nil && req.GetEndTime() != nil && req.GetEndTime().AsTime().Before(req.GetStartTime().AsTime()):
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "end_time is before start_time")
	case !staffReader(caller) && req.GetPlayerId() != caller.Subject:
		return nil, auth.RequireSelf(ctx, domain, req.GetPlayerId())
	}
	if size == 0 {
		size = 50
	}
	if req.GetTableId() != "" {
		// A table of another operator is one that does not exist.
		if _, err := s.loadFor(ctx, req.GetTableId()); err != nil {
			return nil, err
		}
	}
	var prefix []byte
	switch {
	case req.GetPlayerId() != "":
		prefix = []byte("p\x00" + req.GetPlayerId() + "\x00")
	case req.GetTableId() != "":
		prefix = []byte("t\x00" + req.GetTableId() + "\x00")
	default:
		prefix = []byte("a\x00")
	}
	// The newest key of the range: before end_time (or the prefix's end).
	hi := append(append([]byte(nil), prefix...), 0xff)
	if et := req.GetEndTime(); et != nil {
		hi = append(append([]byte(nil), prefix...), be64(et.AsTime().UnixNano())...)
	}
	var lo []byte
	if st := req.GetStartTime(); st != nil {
		lo = append(append([]byte(nil), prefix...), be64(st.AsTime().UnixNano())...)
	}
	if tok := req.GetPageToken(); tok != "" {
		k, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || !bytes.HasPrefix(k, prefix) {
			return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "malformed page_token")
		}
		hi = k
	}
	resp := &tablev1.ListRoundsResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		rounds := tx.Bucket(bucketRounds)
		c := tx.Bucket(bucketRoundIndex).Cursor()
		k, v := c.Seek(hi)
		if k == nil {
			k, v = c.Last()
		}
		// Seek lands at or after hi: the range is strictly before it.
		for k != nil && bytes.Compare(k, hi) >= 0 {
			k, v = c.Prev()
		}
		scanned := 0
		for ; k != nil && bytes.HasPrefix(k, prefix) && (lo == nil || bytes.Compare(k, lo) >= 0); k, v = c.Prev() {
			if len(resp.Rounds) == size || scanned == s.roundScan {
				// The next page reads the keys strictly before the
				// token: k itself and older.
				resp.NextPageToken = base64.RawURLEncoding.EncodeToString(append(append([]byte(nil), k...), 0))
				return nil
			}
			scanned++
			rv := rounds.Get(v)
			if rv == nil {
				continue
			}
			r := new(roundRecord)
			if err := decodeRound(rv, r); err != nil {
				return err
			}
			if !sees(caller, r.operator()) {
				continue // another operator's
			}
			resp.Rounds = append(resp.Rounds, r.toRound(caller))
		}
		return nil
	})
	return resp, err
}

// GetRound implements chemmy.table.v1.TableService.GetRound.
func (s *Service) GetRound(ctx context.Context, req *tablev1.GetRoundRequest) (*tablev1.GetRoundResponse, error) {
	caller, _ := auth.FromContext(ctx)
	if req.GetTableId() == "" || req.GetCoupId() == "" {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "table_id and coup_id are required")
	}
	r := new(roundRecord)
	var events []*eventsv1.TableEvent
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRounds).Get([]byte(req.GetCoupId()))
		if base, ok := walletRoundCoup(req.GetCoupId()); v == nil && ok {
			v = tx.Bucket(bucketRounds).Get([]byte(base))
		}
		if v == nil {
			return fail(codes.NotFound, reasonRoundNotFound, "no round %q at table %q", req.GetCoupId(), req.GetTableId())
		}
		if err := decodeRound(v, r); err != nil {
			return err
		}
		if r.TableID != req.GetTableId() || !sees(caller, r.operator()) {
			return fail(codes.NotFound, reasonRoundNotFound, "no round %q at table %q", req.GetCoupId(), req.GetTableId())
		}
		if !staffReader(caller) {
			if !r.named(caller.Subject) {
				return fail(codes.PermissionDenied, reasonNotYourRound, "round %q does not name you", r.CoupID)
			}
			if !r.over() {
				return fail(codes.FailedPrecondition, reasonRoundInPlay, "round %q is in play: it can be read once settled or voided", r.CoupID)
			}
		}
		prefix := []byte(r.CoupID + "\x00")
		c := tx.Bucket(bucketRoundEvents).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			ev := new(eventsv1.TableEvent)
			if err := proto.Unmarshal(v, ev); err != nil {
				return err
			}
			events = append(events, ev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !r.over() || (r.State != int32(tablev1.RoundState_ROUND_STATE_SETTLED) && caller.Role != auth.RoleAuditor) {
		// Staff see a round in play as the table publishes it: no hole
		// card before the showdown. A voided round's hole cards were
		// never turned (unless its result was shown, which coup_resulted
		// carries): they stay face down for all but auditors and, each
		// his own, the players who held them, as in the table's view of
		// a voided coup. A cancelled round is given the same way (its
		// table dealt it no card).
		t, err := s.load(r.TableID)
		if err != nil {
			return nil, err
		}
		for i, ev := range events {
			pub := t.publicEvent(ev)
			if r.over() && r.holds(caller, ev) && pub.GetCardDealt().GetCard().GetFaceDown() {
				continue // his own card, as dealt to him
			}
			events[i] = pub
		}
	}
	round := r.toRound(caller)
	s.operatorBalances(ctx, r, caller, round)
	return &tablev1.GetRoundResponse{Round: round, Events: events, Transfers: r.transfersFor(caller)}, nil
}

// walletRoundCoup reads a wallet round id "<coup id>.<n>" (n >= 2: the
// wallet's round of a stake a player made in a coup after his round of it
// had ended, seamless mode) as its coup id. A coup id holds no ".".
func walletRoundCoup(id string) (string, bool) {
	i := strings.LastIndexByte(id, '.')
	if i <= 0 {
		return "", false
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 2 || strconv.Itoa(n) != id[i+1:] || strings.Contains(id[:i], ".") {
		return "", false
	}
	return id[:i], true
}

// operatorBalances gives round's players their balances in the
// operator's wallet (seamless mode: the wallet's GetOperatorRound, as
// the operator answered them) where the round's own transfers say
// nothing of them: no player of r has a balance from a transfer-mode
// settlement. A player reads only his own, as in toRound. Without the
// wallet's answer the balances stay unset (the round is still given).
func (s *Service) operatorBalances(ctx context.Context, r *roundRecord, c auth.Caller, round *tablev1.Round) {
	for _, p := range r.Players {
		if p.Before != nil || p.After != nil {
			return
		}
	}
	if len(r.Players) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	op, err := s.wallet.GetOperatorRound(cctx, &walletv1.GetOperatorRoundRequest{RoundId: r.CoupID, OperatorId: walletOperator(r.operator())})
	if err != nil {
		s.log.Debug("round without the operator's balances", "coup", r.CoupID, "err", err)
		return
	}
	by := map[string]*walletv1.OperatorRoundPlayer{}
	for _, p := range op.GetPlayers() {
		by[p.GetPlayerId()] = p
	}
	for _, rp := range round.GetPlayers() {
		if p := by[rp.GetPlayerId()]; p != nil && (staffReader(c) || rp.GetPlayerId() == c.Subject) {
			rp.BalanceBefore, rp.BalanceAfter = p.BalanceBefore, p.BalanceAfter
		}
	}
}

// expireRounds deletes up to batch rounds that started before now-keep,
// are over, and are not among the last KeepRoundsPerPlayer rounds of any
// player they name; it reports how many it deleted and whether more may
// be due.
func (s *Service) expireRounds(now time.Time, keep time.Duration, batch int) (deleted int, more bool, err error) {
	cutoff := be64(now.Add(-keep).UnixNano())
	err = s.commit.Update(func(tx *bolt.Tx) error {
		deleted, more = 0, false
		rounds, index, evs := tx.Bucket(bucketRounds), tx.Bucket(bucketRoundIndex), tx.Bucket(bucketRoundEvents)
		var doomed []*roundRecord
		c := index.Cursor()
		prefix := []byte("a\x00")
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if bytes.Compare(k[len(prefix):len(prefix)+8], cutoff) >= 0 {
				break
			}
			if len(doomed) == batch {
				more = true
				break
			}
			r := new(roundRecord)
			rv := rounds.Get(v)
			if rv == nil {
				continue
			}
			if err := decodeRound(rv, r); err != nil {
				return err
			}
			if r.over() && !recentForAnyone(index, r) {
				doomed = append(doomed, r)
			}
		}
		for _, r := range doomed {
			keys := [][]byte{indexKey("a", "", r.Start, r.CoupID), indexKey("t", r.TableID, r.Start, r.CoupID)}
			for _, p := range r.Players {
				keys = append(keys, indexKey("p", p.ID, r.Start, r.CoupID))
			}
			for _, k := range keys {
				if err := index.Delete(k); err != nil {
					return err
				}
			}
			if err := rounds.Delete([]byte(r.CoupID)); err != nil {
				return err
			}
			ep := []byte(r.CoupID + "\x00")
			var ks [][]byte
			ec := evs.Cursor()
			for k, _ := ec.Seek(ep); k != nil && bytes.HasPrefix(k, ep); k, _ = ec.Next() {
				ks = append(ks, append([]byte(nil), k...))
			}
			for _, k := range ks {
				if err := evs.Delete(k); err != nil {
					return err
				}
			}
		}
		deleted = len(doomed)
		return nil
	})
	return deleted, more, err
}

// recentForAnyone reports whether r is among the last
// KeepRoundsPerPlayer rounds of one of its players.
func recentForAnyone(index *bolt.Bucket, r *roundRecord) bool {
	for _, p := range r.Players {
		prefix := []byte("p\x00" + p.ID + "\x00")
		c := index.Cursor()
		newer := 0
		k, _ := c.Seek(append(indexKey("p", p.ID, r.Start, r.CoupID), 0))
		for ; k != nil && bytes.HasPrefix(k, prefix) && newer < KeepRoundsPerPlayer; k, _ = c.Next() {
			newer++
		}
		if newer < KeepRoundsPerPlayer {
			return true
		}
	}
	return false
}

// sweepRounds deletes expired rounds every roundSweepEvery until ctx is
// done; keep < 0 keeps every round.
func (s *Service) sweepRounds(ctx context.Context, keep time.Duration) {
	if keep < 0 {
		return
	}
	tick := time.NewTicker(roundSweepEvery)
	defer tick.Stop()
	for {
		for {
			n, more, err := s.expireRounds(s.now(), keep, 1000)
			if err != nil {
				s.log.Warn("round history sweep", "err", err)
				break
			}
			if n > 0 {
				s.log.Info("round history expired", "rounds", n)
			}
			if !more || ctx.Err() != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

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
			rp := r.player(p, fresh)
			rp.Net -= tr.GetAmount()
			rp.balances(tr, tr.GetDebitBalanceAfter()+tr.GetAmount(), tr.GetDebitBalanceAfter())
		}
		if p := accountPlayer(tr.GetCreditAccountId()); p != "" {
			rp := r.player(p, fresh)
			rp.Net += tr.GetAmount()
			rp.balances(tr, tr.GetCreditBalanceAfter()-tr.GetAmount(), tr.GetCreditBalanceAfter())
		}
	}
}

// balances notes the balances of p's account before and after tr, one
// of the round's transfers in ledger order: the first one's before, the
// last one's after. A transfer of a mirror account (seamless mode) says
// nothing of his wallet.
func (p *roundPlayer) balances(tr *walletv1.Transfer, before, after int64) {
	if tr.GetSeamless() {
		return
	}
	if p.Before == nil {
		p.Before = &before
	}
	p.After = &after
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

// Round records (bucket "rounds") are stored as table records are
// (codec.go): recordBinary then the CBOR map of the record's JSON fields; one stored
// before is JSON and still reads (and is written in CBOR when the round
// is next written).

// encodeRound is r in the binary encoding.
func encodeRound(r *roundRecord) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(512)
	buf.WriteByte(recordBinary)
	if err := recordEnc.MarshalToBuffer(r, &buf); err != nil {
		return nil, fmt.Errorf("round %s: encode the record: %w", r.CoupID, err)
	}
	return buf.Bytes(), nil
}

// decodeRound reads a stored round record into r, in either encoding.
func decodeRound(b []byte, r *roundRecord) error {
	if len(b) == 0 || b[0] != recordBinary {
		return json.Unmarshal(b, r)
	}
	return recordDec.Unmarshal(b[1:], r)
}
