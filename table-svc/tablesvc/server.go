package tablesvc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

// CreateTable opens a table with its first shoe. See the proto.
func (s *Service) CreateTable(ctx context.Context, req *tablev1.CreateTableRequest) (*tablev1.CreateTableResponse, error) {
	if err := checkID("request_id", req.GetRequestId()); err != nil {
		return nil, err
	}
	// Each game takes its own house rules, and only those.
	variant := canonical(req.GetVariant())
	g := gameOf(variant)
	if g == nil {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "unknown variant %d", variant)
	}
	for v, other := range games {
		if v != variant && given(other.rules(req)) {
			return nil, fail(codes.InvalidArgument, reasonWrongVariant, "the house rules given are for %s, the table is %s", v, variant)
		}
	}
	var (
		hr  shellRules
		err error
	)
	if hr.InactivityMS, err = inactivityLimit(req); err != nil { // every game's (sessions.go)
		return nil, err
	}
	create, err := g.open(req, &hr)
	if err != nil {
		return nil, err
	}
	caller, _ := auth.FromContext(ctx)
	if req.GetShoeId() != "" || hr.CertRealMoney {
		if !caller.Is(auth.RoleOperator, auth.RoleService) {
			return nil, fail(codes.PermissionDenied, reasonRoleNotAllowed, "only an operator may name a prepared shoe or set certification_real_money")
		}
	}
	// Request ids are the caller's: another's CreateTable with the same id
	// is another request. Its retries run one at a time (the claim of a
	// named shoe is keyed by it).
	key, hash := "CreateTable/"+requester(caller)+"/"+caller.Subject+"/"+req.GetRequestId(), store.Hash(req)
	unlock := s.lock(key)
	defer unlock()
	var prior []byte
	err = s.db.View(func(tx *bolt.Tx) error {
		var err error
		prior, _, err = store.Lookup(tx, key, hash)
		return err
	})
	if err == store.ErrRequestReused {
		return nil, fail(codes.AlreadyExists, reasonRequestIDReused, "request_id %q was used for another request", req.GetRequestId())
	} else if err != nil {
		return nil, err
	}
	if prior != nil {
		t, err := s.loadFor(ctx, string(prior))
		if err != nil {
			return nil, err
		}
		return &tablev1.CreateTableResponse{Table: toProto(t, viewerOf(ctx))}, nil
	}

	currency, suffix, exponent, err := s.tableCurrency(ctx, req.GetCurrencyCode(), operatorOf(caller))
	if err != nil {
		return nil, err
	}
	id := s.idPrefix + ulid.Make().String()
	shoeID := req.GetShoeId()
	cctx, cancel := setupContext(ctx)
	defer cancel()
	var (
		decks int32
		first *shoev1.Shoe
	)
	certification := false
	if shoeID != "" {
		// The shoe is the table's before the table exists: nobody deals
		// from it in the first betting, and no other table takes it.
		sh, err := s.claimShoe(cctx, key, shoeID, id, operatorOf(caller))
		if err != nil {
			return nil, err
		}
		// A claim retried after a crash of an earlier try answers with the
		// id it claimed the shoe for: that try stored no table (its
		// request would have been found above), so the id is free.
		id = sh.GetTableId()
		// Unless that table exists: the shoe was claimed by a request
		// whose record has expired (RequestRetention), and it is that
		// table's.
		var exists bool
		if err := s.db.View(func(tx *bolt.Tx) error {
			exists = tx.Bucket(bucketTables).Get([]byte(id)) != nil
			return nil
		}); err != nil {
			return nil, err
		}
		if exists {
			return nil, fail(codes.FailedPrecondition, reasonShoeUnusable, "shoe %q belongs to table %s already", shoeID, id)
		}
		// A prepared order (CreateShoeFromOrder) is a certification shoe;
		// a shoe a croupier had shuffled is not.
		decks, certification = sh.GetDecks(), sh.GetCertification()
		if sh.GetTestShoe() {
			decks = 0 // any composition: the odds do not know it
		}
		first = sh
	} else {
		// It waits for the players' seeds (seeds.go).
		resp, err := s.shoe.CreateShoe(cctx, &shoev1.CreateShoeRequest{
			RequestId: "table/" + id + "/shoe/1", Decks: hr.Decks, CutCardFromEnd: hr.CutCardFromEnd, Burn: hr.Burn, Owner: id,
			ClientSeed: "table/" + id + "/shoe/1", Variant: g.shoeVariant(), AwaitPlayerSeeds: true,
			OperatorId: walletOperator(operatorOf(caller)),
		})
		if err != nil {
			return nil, fromDependency("open shoe", err)
		}
		shoeID, decks, first = resp.GetShoe().GetShoeId(), resp.GetShoe().GetDecks(), resp.GetShoe()
	}
	t := &table{ID: id, ShoeID: shoeID, ShoeDecks: decks, Shoes: 1, Created: time.Now().UTC(), Certification: certification,
		Rules: hr, Variant: int32(variant), Operator: operatorOf(caller)}
	if err := create(t); err != nil {
		return nil, err
	}
	t.Entropy = openedEntropy(first)
	t.Currency, t.AccountSuffix, t.CurrencyExponent = currency, suffix, &exponent
	c := &change{t: t, now: s.now()}
	created, err := tableCreated(t, req, caller)
	if err != nil {
		return nil, err
	}
	c.emit("", created)
	if certification {
		c.emit("", &eventsv1.StaffAction{Action: "certification_shoe", ActorId: caller.Subject, ActorRole: string(caller.Role),
			Detail: fmt.Sprintf("shoe %s, certification_real_money %t", shoeID, hr.CertRealMoney)})
	}
	if err := s.save(c, key, hash, []byte(id)); err != nil {
		return nil, err
	}
	return &tablev1.CreateTableResponse{Table: toProto(t, viewerOf(ctx))}, nil
}

// claimShoe makes the shoe an operator named the table's (shoe-svc
// ClaimShoe, keyed by the CreateTable request's idempotency key) and
// returns it. A shoe of another table, closed, or with cards dealt is
// FAILED_PRECONDITION SHOE_UNUSABLE; an unknown one NOT_FOUND
// SHOE_NOT_FOUND, as is a shoe of another operator than op, the table's.
func (s *Service) claimShoe(ctx context.Context, key, shoeID, tableID, op string) (*shoev1.Shoe, error) {
	sum := sha256.Sum256([]byte(key))
	resp, err := s.shoe.ClaimShoe(ctx, &shoev1.ClaimShoeRequest{
		RequestId: "table/create/" + hex.EncodeToString(sum[:16]), ShoeId: shoeID, TableId: tableID, OperatorId: walletOperator(op)})
	switch r := errs.Reason(err); {
	case err == nil:
	case r == "SHOE_CLAIMED" || r == "SHOE_CLOSED" || r == "DEAL_STARTED" || r == "SHOE_OWNED_BY_TABLE":
		return nil, fail(codes.FailedPrecondition, reasonShoeUnusable, "shoe %q: %s", shoeID, status.Convert(err).Message())
	default:
		return nil, fromDependency("shoe "+shoeID, err)
	}
	if resp.GetShoe().GetTableId() == "" {
		return nil, status.Errorf(codes.Internal, "shoe %s claimed for no table", shoeID)
	}
	return resp.GetShoe(), nil
}

// tableCreated is the table_created event of a new table t: who opened
// it, and its house rules in force and as requested (fixed from now on).
func tableCreated(t *table, req *tablev1.CreateTableRequest, caller auth.Caller) (*eventsv1.TableCreated, error) {
	view := toProto(t, viewer{})
	ev := &eventsv1.TableCreated{ShoeId: t.ShoeID, Certification: t.Certification, CreatedBy: caller.Subject,
		CreatedByRole: string(caller.Role), Variant: canonical(view.GetVariant()).String(), CertificationRealMoney: t.Rules.CertRealMoney,
		CurrencyCode: t.Currency}
	g := t.adapter()
	inForce, asked := g.rules(view), g.rules(req)
	var err error
	if ev.HouseRules, err = anypb.New(inForce); err != nil {
		return nil, err
	}
	if given(asked) {
		if ev.RequestedRules, err = anypb.New(asked); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// GetTable returns a table.
func (s *Service) GetTable(ctx context.Context, req *tablev1.GetTableRequest) (*tablev1.GetTableResponse, error) {
	if err := checkID("table_id", req.GetTableId()); err != nil {
		return nil, err
	}
	t, err := s.loadFor(ctx, req.GetTableId())
	if err != nil {
		return nil, err
	}
	out := toProto(t, viewerOf(ctx))
	if req.GetIncludeRecentCoups() {
		if out.RecentCoups, err = s.recentCoups(t.ID); err != nil {
			return nil, err
		}
	}
	return &tablev1.GetTableResponse{Table: out}, nil
}

// maxLobbyScan is the most tables one ListTables call reads: with filters
// that match few tables, a page ends short (even empty) with a
// next_page_token after the last table read, so that no call reads a
// whole lobby of thousands of tables.
const maxLobbyScan = 1000

// ListTables lists tables in creation order.
func (s *Service) ListTables(ctx context.Context, req *tablev1.ListTablesRequest) (*tablev1.ListTablesResponse, error) {
	size := int(req.GetPageSize())
	if size < 0 || size > 100 {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "page_size must be 0..100, got %d", size)
	}
	if size == 0 {
		size = 50
	}
	if req.GetMaxMinimumBet() < 0 {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "max_minimum_bet must be >= 0, got %d", req.GetMaxMinimumBet())
	}
	if _, ok := tablev1.Variant_name[int32(req.GetVariant())]; !ok {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "unknown variant %d", req.GetVariant())
	}
	f := lobbyFilter{req: req}
	caller, _ := auth.FromContext(ctx)
	if req.GetCurrencyCode() != "" {
		// Tables stored before tables had a currency play in the wallet's
		// default: while the wallet cannot say which it is, they match no
		// currency.
		f.defaultCurrency, _ = s.defaultCurrency(ctx)
	}
	resp := &tablev1.ListTablesResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketTables).Cursor()
		k, v := c.First()
		if tok := req.GetPageToken(); tok != "" {
			k, v = c.Seek([]byte(tok))
			if k != nil && string(k) == tok {
				k, v = c.Next()
			}
		}
		scanned, last := 0, []byte(nil) // tables read, and the last one's key
		for ; k != nil; k, v = c.Next() {
			if len(resp.Tables) == size {
				resp.NextPageToken = resp.Tables[size-1].GetTableId()
				return nil
			}
			if scanned == s.lobbyScan {
				// Filters that skip many tables: the page ends short, and
				// the next one goes on after the last table read.
				resp.NextPageToken = string(last)
				return nil
			}
			scanned++
			last = k // valid for the transaction's life
			t := new(table)
			if err := decodeTable(v, t); err != nil {
				return err
			}
			if !sees(caller, t.operator()) {
				continue
			}
			if tb := toProto(t, viewerOf(ctx)); f.match(tb) {
				var err error
				if tb.RecentResults, err = recentResultsTx(tx, t.ID); err != nil {
					return err
				}
				resp.Tables = append(resp.Tables, tb)
			}
		}
		return nil
	})
	return resp, err
}

// lobbyFilter is ListTables' filters.
type lobbyFilter struct {
	req *tablev1.ListTablesRequest
	// defaultCurrency is the wallet's, for tables without a currency_code.
	defaultCurrency string
}

// match reports whether tb passes the filters.
func (f lobbyFilter) match(tb *tablev1.Table) bool {
	req := f.req
	variant := canonical(tb.GetVariant())
	seats, minimumBet := gameOf(variant).lobby(tb)
	currency := tb.GetCurrencyCode()
	if currency == "" {
		currency = f.defaultCurrency
	}
	closed := tb.GetState() == tablev1.TableState_TABLE_STATE_CLOSED
	switch {
	case req.GetVariant() != tablev1.Variant_VARIANT_UNSPECIFIED && req.GetVariant() != variant:
		return false
	case req.GetCurrencyCode() != "" && req.GetCurrencyCode() != currency:
		return false
	case req.GetMaxMinimumBet() > 0 && minimumBet > req.GetMaxMinimumBet():
		return false
	case closed && (req.GetExcludeClosed() || req.GetOpenSeats()):
		return false
	case req.GetOpenSeats():
		return int32(len(tb.GetSeats())) < seats
	}
	return true
}

// act runs a player's action on a table: checks ids and identity, then
// mutate.
func (s *Service) act(ctx context.Context, method string, req playerRequest) (*tablev1.Table, error) {
	for _, f := range []struct{ name, v string }{
		{"request_id", req.GetRequestId()}, {"table_id", req.GetTableId()}, {"player_id", req.GetPlayerId()},
	} {
		if err := checkID(f.name, f.v); err != nil {
			return nil, err
		}
	}
	if err := checkSeedFields(req); err != nil {
		return nil, err
	}
	if err := auth.RequireSelf(ctx, domain, req.GetPlayerId()); err != nil {
		return nil, err
	}
	return s.mutate(ctx, method, req.GetRequestId(), req.GetTableId(), req)
}

// mutate applies a request to a table under its lock: a retried request
// returns the table as it stands; otherwise the request is applied to the
// table's game core (mutateCore), saved with the idempotency record in one
// transaction, and the core's effects carried out (advance).
func (s *Service) mutate(ctx context.Context, method, requestID, tableID string, req proto.Message) (*tablev1.Table, error) {
	unlock := s.lock(tableID)
	defer unlock()
	// Request ids are the caller's: another caller's request with the same
	// id is another request.
	key, hash := requestKey(ctx, method, requestID), store.Hash(req)
	seen, err := s.seen(key, hash)
	if err != nil {
		return nil, err
	}
	t, err := s.loadFor(ctx, tableID)
	if err != nil {
		return nil, err
	}
	if !seen {
		if t.Phase == tablev1.TableState_TABLE_STATE_CLOSED {
			return nil, fail(codes.FailedPrecondition, reasonTableClosed, "table %q is closed", t.ID)
		}
		c := &change{t: t, key: key, hash: hash, now: s.now()}
		if err := s.mutateCore(ctx, c, method, req); err != nil {
			return nil, err
		}
		if err := s.save(c, key, hash, nil); err != nil {
			return nil, err
		}
		failpoint(method)
		// c.t is the table as saved: advanced without reading it again.
		after, err := s.advanceFrom(ctx, t.ID, c.t)
		if err != nil {
			// The action stands; the retry loop finishes the coup.
			s.logStuck(t.ID, err)
			if after, err = s.load(t.ID); err != nil {
				return nil, err
			}
		}
		t = after
	}
	return toProto(t, viewerOf(ctx)), nil
}

// JoinTable seats a player (at a chemin de fer table, the bank is offered
// when a second player sits at a table without a banker: CF-FIRST-BANKER).
//
// A self-excluded player (wallet SetPlayerLimits) cannot sit down:
// FAILED_PRECONDITION LIMIT_REACHED. The wallet is asked first; while it
// cannot answer, nobody sits down (UNAVAILABLE DEPENDENCY_UNAVAILABLE).
func (s *Service) JoinTable(ctx context.Context, req *tablev1.JoinTableRequest) (*tablev1.JoinTableResponse, error) {
	if err := checkID("player_id", req.GetPlayerId()); err != nil {
		return nil, err
	}
	if err := s.checkNewPlayer(ctx, "JoinTable", req); err != nil {
		return nil, err
	}
	t, err := s.act(ctx, "JoinTable", req)
	if err != nil {
		return nil, err
	}
	var number int32
	for _, st := range t.GetSeats() {
		if st.GetPlayerId() == req.GetPlayerId() {
			number = st.GetNumber()
		}
	}
	return &tablev1.JoinTableResponse{Table: t, SeatNumber: number}, nil
}

// AcceptBank puts up the bank offered to the player.
func (s *Service) AcceptBank(ctx context.Context, req *tablev1.AcceptBankRequest) (*tablev1.AcceptBankResponse, error) {
	t, err := s.act(ctx, "AcceptBank", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.AcceptBankResponse{Table: t}, nil
}

// DeclineBank lets the bank go on to the next seat in turn (or, in an
// auction, says the player will not bid).
func (s *Service) DeclineBank(ctx context.Context, req *tablev1.DeclineBankRequest) (*tablev1.DeclineBankResponse, error) {
	t, err := s.act(ctx, "DeclineBank", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.DeclineBankResponse{Table: t}, nil
}

// PlaceBet places a bet (chemin de fer: covers part or all of what is left
// of the bank).
func (s *Service) PlaceBet(ctx context.Context, req *tablev1.PlaceBetRequest) (*tablev1.PlaceBetResponse, error) {
	t, err := s.act(ctx, "PlaceBet", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.PlaceBetResponse{Table: t}, nil
}

// DeclineBet passes the punter's betting turn.
func (s *Service) DeclineBet(ctx context.Context, req *tablev1.DeclineBetRequest) (*tablev1.DeclineBetResponse, error) {
	t, err := s.act(ctx, "DeclineBet", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.DeclineBetResponse{Table: t}, nil
}

// CallBanco bets the whole bank and cancels every other bet (CF-BANCO).
func (s *Service) CallBanco(ctx context.Context, req *tablev1.CallBancoRequest) (*tablev1.CallBancoResponse, error) {
	t, err := s.act(ctx, "CallBanco", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.CallBancoResponse{Table: t}, nil
}

// DecideDraw records the pending draw/stand decision of a hand's holder.
func (s *Service) DecideDraw(ctx context.Context, req *tablev1.DecideDrawRequest) (*tablev1.DecideDrawResponse, error) {
	t, err := s.act(ctx, "DecideDraw", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.DecideDrawResponse{Table: t}, nil
}

// PassBank gives up the bank between coups (CF-PASS).
func (s *Service) PassBank(ctx context.Context, req *tablev1.PassBankRequest) (*tablev1.PassBankResponse, error) {
	t, err := s.act(ctx, "PassBank", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.PassBankResponse{Table: t}, nil
}

// RaiseBank answers over-bank bets: raise the bank, or let the excess
// bets be removed (CF-BANK-RAISE).
func (s *Service) RaiseBank(ctx context.Context, req *tablev1.RaiseBankRequest) (*tablev1.RaiseBankResponse, error) {
	t, err := s.act(ctx, "RaiseBank", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.RaiseBankResponse{Table: t}, nil
}

// BidBank bids for the bank in an auction (CF-FIRST-BANKER).
func (s *Service) BidBank(ctx context.Context, req *tablev1.BidBankRequest) (*tablev1.BidBankResponse, error) {
	t, err := s.act(ctx, "BidBank", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.BidBankResponse{Table: t}, nil
}

// LeaveTable frees a player's seat between coups.
func (s *Service) LeaveTable(ctx context.Context, req *tablev1.LeaveTableRequest) (*tablev1.LeaveTableResponse, error) {
	t, err := s.act(ctx, "LeaveTable", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.LeaveTableResponse{Table: t}, nil
}

// JoinGallery adds a spectator to the gallery (CF-GALLERY).
//
// A self-excluded player cannot join the gallery either (as JoinTable).
func (s *Service) JoinGallery(ctx context.Context, req *tablev1.JoinGalleryRequest) (*tablev1.JoinGalleryResponse, error) {
	if err := checkID("player_id", req.GetPlayerId()); err != nil {
		return nil, err
	}
	if err := s.checkNewPlayer(ctx, "JoinGallery", req); err != nil {
		return nil, err
	}
	t, err := s.act(ctx, "JoinGallery", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.JoinGalleryResponse{Table: t}, nil
}

// checkStaffRequest checks a staff action's ids and its reason (required,
// at most 500 bytes): INVALID_ARGUMENT INVALID_ARGUMENT otherwise.
func checkStaffRequest(requestID, tableID, reason string) error {
	for _, f := range []struct{ name, v string }{{"request_id", requestID}, {"table_id", tableID}} {
		if err := checkID(f.name, f.v); err != nil {
			return err
		}
	}
	if reason == "" || len(reason) > 500 {
		return fail(codes.InvalidArgument, reasonInvalidArgument, "reason is required (at most 500 bytes)")
	}
	return nil
}

// VoidCoup voids the coup in play before its settlement (CF-ERROR).
func (s *Service) VoidCoup(ctx context.Context, req *tablev1.VoidCoupRequest) (*tablev1.VoidCoupResponse, error) {
	if err := checkStaffRequest(req.GetRequestId(), req.GetTableId(), req.GetReason()); err != nil {
		return nil, err
	}
	if err := checkID("coup_id", req.GetCoupId()); err != nil {
		return nil, err
	}
	t, err := s.mutate(ctx, "VoidCoup", req.GetRequestId(), req.GetTableId(), req)
	if err != nil {
		return nil, err
	}
	return &tablev1.VoidCoupResponse{Table: t}, nil
}

// CloseTable closes a table between coups (staff; or by itself when
// abandoned, see tableAbandoned).
func (s *Service) CloseTable(ctx context.Context, req *tablev1.CloseTableRequest) (*tablev1.CloseTableResponse, error) {
	if err := checkStaffRequest(req.GetRequestId(), req.GetTableId(), req.GetReason()); err != nil {
		return nil, err
	}
	t, err := s.mutate(ctx, "CloseTable", req.GetRequestId(), req.GetTableId(), req)
	if err != nil {
		return nil, err
	}
	return &tablev1.CloseTableResponse{Table: t}, nil
}

// requestKey is the idempotency key of a caller's request: request ids
// are the caller's, so another caller's request with the same id is
// another request.
func requestKey(ctx context.Context, method, requestID string) string {
	caller, _ := auth.FromContext(ctx)
	return method + "/" + requester(caller) + "/" + caller.Subject + "/" + requestID
}

// checkNewPlayer refuses a self-excluded player's JoinTable or
// JoinGallery (checkNotExcluded). It asks only of a new request: a retry
// of a seat already taken (its reply lost) is answered from the record,
// even while the wallet is away.
func (s *Service) checkNewPlayer(ctx context.Context, method string, req playerRequest) error {
	seen, err := s.seen(requestKey(ctx, method, req.GetRequestId()), store.Hash(req))
	if err != nil || seen {
		return err
	}
	accounts := []string{"player:" + req.GetPlayerId()}
	if err := checkID("table_id", req.GetTableId()); err != nil {
		return err
	}
	t, err := s.loadFor(ctx, req.GetTableId())
	if err != nil {
		return err
	}
	if t.AccountSuffix != "" {
		accounts = append(accounts, t.account(req.GetPlayerId()))
	}
	return s.checkNotExcluded(ctx, t.walletOperator(), req.GetPlayerId(), accounts)
}

// checkNotExcluded refuses (FAILED_PRECONDITION LIMIT_REACHED, limit
// self_exclusion) a player whose self-exclusion is running on any of
// accounts (his default-currency account, and his account in the table's
// currency: limits are kept per wallet account).
func (s *Service) checkNotExcluded(ctx context.Context, operator, player string, accounts []string) error {
	for _, acct := range accounts {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		l, err := s.wallet.GetPlayerLimits(cctx, &walletv1.GetPlayerLimitsRequest{AccountId: acct, OperatorId: operator})
		cancel()
		if err != nil {
			return fromDependency("limits of "+player, err)
		}
		if until := l.GetLimits().GetSelfExcludedUntil(); until != nil && until.AsTime().After(s.now()) {
			return errs.WithMetadata(codes.FailedPrecondition, domain, reasonLimitReached, map[string]string{"limit": "self_exclusion"},
				"%s is self-excluded until %s", player, until.AsTime().UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// CommitSeed commits a player to his seed for the table's current shoe
// (seeds.go; "Player seeds" on the service).
func (s *Service) CommitSeed(ctx context.Context, req *tablev1.CommitSeedRequest) (*tablev1.CommitSeedResponse, error) {
	if len(req.GetCommitment()) != fair.CommitmentSize {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "commitment must be SHA-256 of the seed: %d bytes, got %d",
			fair.CommitmentSize, len(req.GetCommitment()))
	}
	t, err := s.act(ctx, "CommitSeed", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.CommitSeedResponse{Table: t}, nil
}

// RevealSeed reveals a committed player's seed; the last one seeds the
// shoe and the coup goes on (seeds.go).
func (s *Service) RevealSeed(ctx context.Context, req *tablev1.RevealSeedRequest) (*tablev1.RevealSeedResponse, error) {
	if err := checkRevealedSeed(req.GetSeed()); err != nil {
		return nil, err
	}
	t, err := s.act(ctx, "RevealSeed", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.RevealSeedResponse{Table: t}, nil
}

// MoveTopCards is an old baccarat banker's announced move of top cards to
// the bottom after the cut (OLD-CUT). See the proto.
func (s *Service) MoveTopCards(ctx context.Context, req *tablev1.MoveTopCardsRequest) (*tablev1.MoveTopCardsResponse, error) {
	t, err := s.act(ctx, "MoveTopCards", req)
	if err != nil {
		return nil, err
	}
	return &tablev1.MoveTopCardsResponse{Table: t}, nil
}

// AnswerRealityCheck implements chemmy.table.v1.TableService.AnswerRealityCheck.
func (s *Service) AnswerRealityCheck(ctx context.Context, req *tablev1.AnswerRealityCheckRequest) (*tablev1.AnswerRealityCheckResponse, error) {
	for _, f := range []struct{ name, v string }{
		{"request_id", req.GetRequestId()}, {"table_id", req.GetTableId()}, {"player_id", req.GetPlayerId()},
	} {
		if err := checkID(f.name, f.v); err != nil {
			return nil, err
		}
	}
	answer := req.GetAnswer()
	if answer != eventsv1.RealityCheckAnswer_REALITY_CHECK_ANSWER_CONTINUE && answer != eventsv1.RealityCheckAnswer_REALITY_CHECK_ANSWER_STOP {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "answer must be REALITY_CHECK_ANSWER_CONTINUE or _STOP")
	}
	if req.GetCheckNumber() < 1 {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "check_number must be a reality check's number, 1 or more")
	}
	if err := auth.RequireSelf(ctx, domain, req.GetPlayerId()); err != nil {
		return nil, err
	}
	unlock := s.lock(req.GetTableId())
	defer unlock()
	key, hash := requestKey(ctx, "AnswerRealityCheck", req.GetRequestId()), store.Hash(req)
	seen, err := s.seen(key, hash)
	if err != nil {
		return nil, err
	}
	t, err := s.loadFor(ctx, req.GetTableId())
	if err != nil {
		return nil, err
	}
	if !seen {
		p, n := req.GetPlayerId(), req.GetCheckNumber()
		ss := t.Sessions[p]
		switch {
		case t.Phase == tablev1.TableState_TABLE_STATE_CLOSED:
			return nil, fail(codes.FailedPrecondition, reasonTableClosed, "table %q is closed", t.ID)
		case ss == nil:
			return nil, fail(codes.FailedPrecondition, reasonNotSeated, "%s has no seat at table %q", p, t.ID)
		case n > ss.Checks:
			return nil, fail(codes.FailedPrecondition, reasonNoRealityCheck, "%s was sent %d reality checks in this session, not check %d", p, ss.Checks, n)
		case n <= ss.Answered:
			return nil, fail(codes.FailedPrecondition, reasonNoRealityCheck, "%s answered reality check %d of this session already", p, ss.Answered)
		}
		now := s.now()
		c := &change{t: t, key: key, hash: hash, now: now}
		ss.Answered = n
		if answer == eventsv1.RealityCheckAnswer_REALITY_CHECK_ANSWER_STOP {
			ss.Stop = now.UTC()
		}
		c.private = append(c.private, &eventsv1.TableEvent{EventId: ulid.Make().String(), TableId: t.ID,
			OccurTime: timestamppb.New(now), Certification: t.Certification, CurrencyCode: t.Currency, CurrencyExponent: t.tableExponent(),
			OperatorId: t.operator(), Payload: &eventsv1.TableEvent_RealityCheckAnswered{RealityCheckAnswered: &eventsv1.RealityCheckAnswered{
				PlayerId: p, SessionId: ss.ID, CheckNumber: n, Answer: answer}}})
		if err := s.save(c, key, hash, nil); err != nil {
			return nil, err
		}
		if due, ok := s.idleCandidates(t)[p]; ok && !due.After(now) {
			if err := s.standUpIdle(ctx, t, now); err != nil {
				// The answer stands; the table's deadline stands him up.
				s.log.Warn("a player who stopped at a reality check is stood up later", "table", t.ID, "player", p, "err", err)
			}
			if t, err = s.load(t.ID); err != nil {
				return nil, err
			}
		}
	}
	return &tablev1.AnswerRealityCheckResponse{Table: toProto(t, viewerOf(ctx))}, nil
}
