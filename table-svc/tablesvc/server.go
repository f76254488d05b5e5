package tablesvc

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/table-svc/game/banque"
	"github.com/chemmy/chemmy/table-svc/game/oldbaccarat"
	"github.com/chemmy/chemmy/table-svc/game/puntobanco"
)

// idPattern is what request, table and player ids may look like.
// At most 64 characters, so that the ids derived from a request id for
// the wallet and the shoe stay within their limits.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.:/-]{1,64}$`)

func checkID(field, v string) error {
	if !idPattern.MatchString(v) {
		return fail(codes.InvalidArgument, reasonInvalidArgument, "%s must be 1-64 characters of [A-Za-z0-9_.:/-], got %q", field, clip(v))
	}
	return nil
}

// clip shortens what an error message echoes of a client's input.
func clip(v string) string {
	if len(v) > 80 {
		return v[:80] + "..."
	}
	return v
}

// CreateTable opens a table with its first shoe. See the proto.
func (s *Service) CreateTable(ctx context.Context, req *tablev1.CreateTableRequest) (*tablev1.CreateTableResponse, error) {
	if err := checkID("request_id", req.GetRequestId()); err != nil {
		return nil, err
	}
	// Each game takes its own house rules, and only those.
	variant := req.GetVariant()
	if variant == tablev1.Variant_VARIANT_UNSPECIFIED {
		variant = tablev1.Variant_VARIANT_CHEMIN_DE_FER
	}
	for v, given := range map[tablev1.Variant]bool{
		tablev1.Variant_VARIANT_CHEMIN_DE_FER:   req.GetHouseRules() != nil,
		tablev1.Variant_VARIANT_PUNTO_BANCO:     req.GetPuntoBancoRules() != nil,
		tablev1.Variant_VARIANT_OLD_BACCARAT:    req.GetOldBaccaratRules() != nil,
		tablev1.Variant_VARIANT_BACCARAT_BANQUE: req.GetBanqueRules() != nil,
	} {
		if given && v != variant {
			return nil, fail(codes.InvalidArgument, reasonWrongVariant, "the house rules given are for %s, the table is %s", v, variant)
		}
	}
	var (
		pbRules     puntobanco.Rules
		oldRules    oldbaccarat.Rules
		banqueRules banque.Rules
	)
	hr, err := resolveRules(req.GetHouseRules())
	if err != nil {
		return nil, err
	}
	switch variant {
	case tablev1.Variant_VARIANT_CHEMIN_DE_FER:
	case tablev1.Variant_VARIANT_PUNTO_BANCO:
		if pbRules, err = resolvePuntoBanco(req.GetPuntoBancoRules()); err != nil {
			return nil, err
		}
		hr.Decks, hr.CutCardFromEnd, hr.Burn = pbRules.Decks, pbRules.CutCardFromEnd, pbRules.Burn
		hr.CertRealMoney = req.GetPuntoBancoRules().GetCertificationRealMoney()
	case tablev1.Variant_VARIANT_OLD_BACCARAT:
		if oldRules, err = resolveOld(req.GetOldBaccaratRules()); err != nil {
			return nil, err
		}
		// Source: RULES.md OLD-DECKS (two full decks)
		hr.Decks, hr.CutCardFromEnd, hr.Burn = 2, oldCutCard(oldRules.MaxSeats), 3
		hr.CertRealMoney = req.GetOldBaccaratRules().GetCertificationRealMoney()
	case tablev1.Variant_VARIANT_BACCARAT_BANQUE:
		if banqueRules, err = resolveBanque(req.GetBanqueRules()); err != nil {
			return nil, err
		}
		// Source: RULES.md BQ-DECKS (three decks)
		hr.Decks, hr.CutCardFromEnd, hr.Burn = banqueRules.Decks, banqueRules.CutCardFromEnd, banqueRules.Burn
		hr.CertRealMoney = req.GetBanqueRules().GetCertificationRealMoney()
	default:
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "unknown variant %d", variant)
	}
	caller, _ := auth.FromContext(ctx)
	if req.GetShoeId() != "" || hr.CertRealMoney {
		if !caller.Is(auth.RoleOperator, auth.RoleService) {
			return nil, fail(codes.PermissionDenied, reasonRoleNotAllowed, "only an operator may name a prepared shoe or set certification_real_money")
		}
	}
	// Request ids are the caller's: another's CreateTable with the same id
	// is another request.
	key, hash := "CreateTable/"+string(caller.Role)+"/"+caller.Subject+"/"+req.GetRequestId(), store.Hash(req)
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
		t, err := s.load(string(prior))
		if err != nil {
			return nil, err
		}
		return &tablev1.CreateTableResponse{Table: toProto(t, viewerOf(ctx))}, nil
	}

	id := ulid.Make().String()
	shoeID := req.GetShoeId()
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var decks int32
	certification := false
	if shoeID != "" {
		sh, err := s.shoe.GetShoe(cctx, &shoev1.GetShoeRequest{ShoeId: shoeID})
		if err != nil {
			return nil, fromDependency("shoe "+shoeID, err)
		}
		switch got := sh.GetShoe(); {
		case got.GetOwnedByTable():
			return nil, fail(codes.FailedPrecondition, reasonShoeUnusable, "shoe %q belongs to a table already", shoeID)
		case got.GetState() == shoev1.ShoeState_SHOE_STATE_CLOSED:
			return nil, fail(codes.FailedPrecondition, reasonShoeUnusable, "shoe %q is closed", shoeID)
		case got.GetCardsDealt() > 0:
			return nil, fail(codes.FailedPrecondition, reasonShoeUnusable, "shoe %q has dealt %d cards already", shoeID, got.GetCardsDealt())
		}
		// A prepared order (CreateShoeFromOrder) is a certification shoe;
		// a shoe a croupier had shuffled is not.
		decks, certification = sh.GetShoe().GetDecks(), sh.GetShoe().GetCertification()
		if sh.GetShoe().GetTestShoe() {
			decks = 0 // any composition: the odds do not know it
		}
	} else {
		resp, err := s.shoe.CreateShoe(cctx, &shoev1.CreateShoeRequest{
			RequestId: "table/" + id + "/shoe/1", Decks: hr.Decks, CutCardFromEnd: hr.CutCardFromEnd, Burn: hr.Burn, Owner: id,
			ClientSeed: "table/" + id + "/shoe/1", Variant: shoeVariant(int32(variant)),
		})
		if err != nil {
			return nil, fromDependency("open shoe", err)
		}
		shoeID, decks = resp.GetShoe().GetShoeId(), resp.GetShoe().GetDecks()
	}
	t := &table{ID: id, Rules: hr, State: stateWaiting, ShoeID: shoeID, ShoeDecks: decks, Shoes: 1, Created: time.Now().UTC(),
		Certification: certification}
	switch variant {
	case tablev1.Variant_VARIANT_PUNTO_BANCO:
		if t, err = createPuntoBanco(id, pbRules, shoeID, decks, certification, hr.CertRealMoney, time.Now()); err != nil {
			return nil, err
		}
	case tablev1.Variant_VARIANT_OLD_BACCARAT:
		if t, err = createOld(t, oldRules); err != nil {
			return nil, err
		}
	case tablev1.Variant_VARIANT_BACCARAT_BANQUE:
		if t, err = createBanque(t, banqueRules); err != nil {
			return nil, err
		}
	}
	c := &change{t: t, now: s.now()}
	c.emit("", &eventsv1.TableCreated{ShoeId: shoeID, Certification: certification, CreatedBy: caller.Subject, CreatedByRole: string(caller.Role)})
	if certification {
		c.emit("", &eventsv1.StaffAction{Action: "certification_shoe", ActorId: caller.Subject, ActorRole: string(caller.Role),
			Detail: fmt.Sprintf("shoe %s, certification_real_money %t", shoeID, hr.CertRealMoney)})
	}
	if err := s.save(c, key, hash, []byte(id)); err != nil {
		return nil, err
	}
	return &tablev1.CreateTableResponse{Table: toProto(t, viewerOf(ctx))}, nil
}

// GetTable returns a table.
func (s *Service) GetTable(ctx context.Context, req *tablev1.GetTableRequest) (*tablev1.GetTableResponse, error) {
	if err := checkID("table_id", req.GetTableId()); err != nil {
		return nil, err
	}
	t, err := s.load(req.GetTableId())
	if err != nil {
		return nil, err
	}
	return &tablev1.GetTableResponse{Table: toProto(t, viewerOf(ctx))}, nil
}

// ListTables lists tables in creation order.
func (s *Service) ListTables(ctx context.Context, req *tablev1.ListTablesRequest) (*tablev1.ListTablesResponse, error) {
	size := int(req.GetPageSize())
	if size < 0 || size > 100 {
		return nil, fail(codes.InvalidArgument, reasonInvalidArgument, "page_size must be 0..100, got %d", size)
	}
	if size == 0 {
		size = 50
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
		for ; k != nil; k, v = c.Next() {
			if len(resp.Tables) == size {
				resp.NextPageToken = resp.Tables[size-1].GetTableId()
				return nil
			}
			t := new(table)
			if err := json.Unmarshal(v, t); err != nil {
				return err
			}
			resp.Tables = append(resp.Tables, toProto(t, viewerOf(ctx)))
		}
		return nil
	})
	return resp, err
}

// playerRequest is what every player action has.
type playerRequest interface {
	proto.Message
	GetRequestId() string
	GetTableId() string
	GetPlayerId() string
}

// act runs a player's action on a table: checks ids and identity, returns
// the current table for a retried request, applies fn, saves the change
// with the idempotency record in one transaction, and advances the coup
// as far as it goes.
func (s *Service) act(ctx context.Context, method string, req playerRequest, fn func(c *change) error) (*tablev1.Table, error) {
	for _, f := range []struct{ name, v string }{
		{"request_id", req.GetRequestId()}, {"table_id", req.GetTableId()}, {"player_id", req.GetPlayerId()},
	} {
		if err := checkID(f.name, f.v); err != nil {
			return nil, err
		}
	}
	if err := auth.RequireSelf(ctx, domain, req.GetPlayerId()); err != nil {
		return nil, err
	}
	return s.mutate(ctx, method, req.GetRequestId(), req.GetTableId(), req, fn)
}

// mutate applies fn to a table under its lock: a retried request returns
// the table as it stands; otherwise fn's change is saved with the
// idempotency record in one transaction and the coup advanced.
func (s *Service) mutate(ctx context.Context, method, requestID, tableID string, req proto.Message, fn func(c *change) error) (*tablev1.Table, error) {
	unlock := s.lock(tableID)
	defer unlock()
	// Request ids are the caller's: another caller's request with the same
	// id is another request.
	caller, _ := auth.FromContext(ctx)
	key, hash := method+"/"+string(caller.Role)+"/"+caller.Subject+"/"+requestID, store.Hash(req)
	seen, err := s.seen(key, hash)
	if err != nil {
		return nil, err
	}
	t, err := s.load(tableID)
	if err != nil {
		return nil, err
	}
	if !seen {
		if t.State == stateClosed {
			return nil, fail(codes.FailedPrecondition, reasonTableClosed, "table %q is closed", t.ID)
		}
		c := &change{t: t, key: key, hash: hash, now: s.now()}
		if t.coreTable() {
			err = s.mutateCore(ctx, c, method, req)
		} else if sp, ok := req.(interface{ GetSpot() tablev1.BetSpot }); ok && sp.GetSpot() != tablev1.BetSpot_BET_SPOT_UNSPECIFIED {
			err = fail(codes.InvalidArgument, reasonWrongVariant, "spot is a punto banco bet; this table plays chemin de fer")
		} else {
			err = fn(c)
		}
		if err != nil {
			return nil, err
		}
		if err := s.save(c, key, hash, nil); err != nil {
			return nil, err
		}
		failpoint(method)
		if err := s.advance(ctx, t.ID); err != nil {
			// The action stands; the retry loop finishes the coup.
			s.logStuck(t.ID, err)
		}
		if t, err = s.load(t.ID); err != nil {
			return nil, err
		}
	}
	return toProto(t, viewerOf(ctx)), nil
}

// JoinTable seats a player (and offers the bank when a second player sits
// at a table without a banker: CF-FIRST-BANKER by acceptance).
func (s *Service) JoinTable(ctx context.Context, req *tablev1.JoinTableRequest) (*tablev1.JoinTableResponse, error) {
	var number int32
	t, err := s.act(ctx, "JoinTable", req, func(c *change) error {
		t := c.t
		if t.seatOf(req.GetPlayerId()) != nil {
			return fail(codes.AlreadyExists, reasonAlreadySeated, "player %q already has a seat", req.GetPlayerId())
		}
		if int32(len(t.Seats)) >= t.Rules.MaxSeats {
			return fail(codes.ResourceExhausted, reasonTableFull, "all %d seats are taken", t.Rules.MaxSeats)
		}
		if t.inGallery(req.GetPlayerId()) {
			if t.hasBet(req.GetPlayerId()) {
				return fail(codes.FailedPrecondition, reasonWrongState, "player %q has a bet in the coup in play", req.GetPlayerId())
			}
			leaveOrder(t, req.GetPlayerId())
			t.Gallery = removeString(t.Gallery, req.GetPlayerId())
			if t.State == stateBetting {
				closeBetting(c) // he may have been the last to bet
			}
		}
		t.NextSeat++
		t.Seats = append(t.Seats, seat{Number: t.NextSeat, PlayerID: req.GetPlayerId(), Since: s.now().UTC()})
		c.emit("", &eventsv1.PlayerSeated{PlayerId: req.GetPlayerId(), SeatNumber: t.NextSeat})
		if t.State == stateWaiting && len(t.Seats) >= 2 {
			offerBank(c, "")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, st := range t.GetSeats() {
		if st.GetPlayerId() == req.GetPlayerId() {
			number = st.GetNumber()
		}
	}
	return &tablev1.JoinTableResponse{Table: t, SeatNumber: number}, nil
}

// AcceptBank puts up the bank offered to the player.
func (s *Service) AcceptBank(ctx context.Context, req *tablev1.AcceptBankRequest) (*tablev1.AcceptBankResponse, error) {
	t, err := s.act(ctx, "AcceptBank", req, func(c *change) error {
		t, p := c.t, req.GetPlayerId()
		if err := realMoney(c.t); err != nil {
			return err
		}
		if err := wantState(t, stateOffering); err != nil {
			return err
		}
		if req.GetAmount() <= 0 {
			return fail(codes.InvalidArgument, reasonInvalidAmount, "amount must be > 0")
		}
		if t.OpenOffer > 0 {
			// Source: RULES.md CF-PASS: auctioned to whoever puts up a bank equal to the one just held.
			if t.seatOf(p) == nil || p == t.OpenOfferFrom {
				return fail(codes.FailedPrecondition, reasonNotYourTurn, "the passed bank is open to the other seated players")
			}
			if req.GetAmount() != t.OpenOffer {
				return fail(codes.InvalidArgument, reasonInvalidAmount, "put up exactly the bank just held, %d", t.OpenOffer)
			}
		} else if t.OfferedID != p {
			return fail(codes.FailedPrecondition, reasonNotYourTurn, "the bank is offered to %q", t.OfferedID)
		}
		if req.GetAmount() < t.Rules.MinimumBank {
			// Source: RULES.md CF-BANK-SIZE (casinos set a minimum bank)
			return fail(codes.FailedPrecondition, reasonBankBelowMinimum, "bank %d is below the minimum %d", req.GetAmount(), t.Rules.MinimumBank)
		}
		hold, err := s.hold(ctx, c, "table/"+t.ID+"/bank/"+req.GetRequestId(), p, req.GetAmount(), "tables/"+t.ID+"/bank")
		if err != nil {
			return err
		}
		takeBank(c, p, req.GetAmount(), hold)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.AcceptBankResponse{Table: t}, nil
}

// DeclineBank lets the bank go on to the next seat in turn. An offer that
// goes all round the table without a taker goes round again.
func (s *Service) DeclineBank(ctx context.Context, req *tablev1.DeclineBankRequest) (*tablev1.DeclineBankResponse, error) {
	t, err := s.act(ctx, "DeclineBank", req, func(c *change) error {
		t := c.t
		if t.State == stateAuction {
			return passAuction(c, req.GetPlayerId())
		}
		if err := wantState(t, stateOffering); err != nil {
			return err
		}
		if t.OpenOffer > 0 {
			return fail(codes.FailedPrecondition, reasonWrongState, "the passed bank is open to every seated player; there is no turn to decline")
		}
		if t.OfferedID != req.GetPlayerId() {
			return fail(codes.FailedPrecondition, reasonNotYourTurn, "the bank is offered to %q", t.OfferedID)
		}
		offerBank(c, req.GetPlayerId())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.DeclineBankResponse{Table: t}, nil
}

// punterTurn checks that player may act in the betting now.
func punterTurn(t *table, player string) error {
	if err := wantState(t, stateBetting); err != nil {
		return err
	}
	if player == t.BankerID {
		return fail(codes.FailedPrecondition, reasonBankerCannotBet, "the banker does not bet against his own bank")
	}
	if t.seatOf(player) == nil && !t.inGallery(player) {
		return fail(codes.FailedPrecondition, reasonNotSeated, "player %q has no seat and is not in the gallery", player)
	}
	if turn := t.Coup.turnPlayer(); turn != player {
		// Source: RULES.md CF-BET-ORDER
		return fail(codes.FailedPrecondition, reasonNotYourTurn, "it is %q's turn to bet", turn)
	}
	return nil
}

// declineSuivi: the banco suivi holder, asked whether he takes over
// another's banco, lets it stand; the betting closes on that banco. It
// reports whether the table was asking him.
func declineSuivi(c *change) bool {
	cp := c.t.Coup
	if cp.SuiviAsked == "" {
		return false
	}
	c.emit(cp.ID, &eventsv1.BetDeclined{PlayerId: cp.SuiviAsked})
	cp.SuiviAsked, c.t.BancoSuivi = "", ""
	closeBetting(c)
	return true
}

// PlaceBet covers part or all of what is left of the bank.
func (s *Service) PlaceBet(ctx context.Context, req *tablev1.PlaceBetRequest) (*tablev1.PlaceBetResponse, error) {
	t, err := s.act(ctx, "PlaceBet", req, func(c *change) error {
		t := c.t
		if err := realMoney(c.t); err != nil {
			return err
		}
		if err := punterTurn(t, req.GetPlayerId()); err != nil {
			return err
		}
		if t.Coup.SuiviAsked != "" {
			return fail(codes.FailedPrecondition, reasonWrongState, "a banco stands: %q may take it over (CallBanco) or let it stand (DeclineBet)", t.Coup.SuiviAsked)
		}
		cp := t.Coup
		if req.GetAmount() <= 0 {
			return fail(codes.InvalidArgument, reasonInvalidAmount, "amount must be > 0")
		}
		uncovered := cp.Bank - cp.covered()
		if req.GetAmount() > uncovered && !req.GetOverBank() {
			// Source: RULES.md CF-BET-LIMIT
			return fail(codes.FailedPrecondition, reasonBetExceedsBank, "bet %d exceeds the uncovered bank %d", req.GetAmount(), uncovered)
		}
		hold, err := s.hold(ctx, c, "table/"+t.ID+"/bet/"+req.GetRequestId(), req.GetPlayerId(), req.GetAmount(), "tables/"+t.ID+"/coups/"+cp.ID)
		if err != nil {
			return err
		}
		failpoint("bet-held")
		cp.Bets = append(cp.Bets, bet{PlayerID: req.GetPlayerId(), Amount: req.GetAmount(), HoldID: hold})
		cp.Turn++
		t.BancoSuivi = "" // the first bet ends banco suivi
		c.emit(cp.ID, &eventsv1.BetPlaced{PlayerId: req.GetPlayerId(), Amount: req.GetAmount(), Uncovered: max(0, uncovered-req.GetAmount())})
		closeBetting(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.PlaceBetResponse{Table: t}, nil
}

// DeclineBet passes the punter's betting turn.
func (s *Service) DeclineBet(ctx context.Context, req *tablev1.DeclineBetRequest) (*tablev1.DeclineBetResponse, error) {
	t, err := s.act(ctx, "DeclineBet", req, func(c *change) error {
		if err := punterTurn(c.t, req.GetPlayerId()); err != nil {
			return err
		}
		if declineSuivi(c) {
			return nil
		}
		c.t.Coup.Turn++
		if c.t.BancoSuivi == req.GetPlayerId() {
			c.t.BancoSuivi = ""
		}
		c.emit(c.t.Coup.ID, &eventsv1.BetDeclined{PlayerId: req.GetPlayerId()})
		closeBetting(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.DeclineBetResponse{Table: t}, nil
}

// CallBanco bets the whole bank and cancels every other bet (CF-BANCO).
func (s *Service) CallBanco(ctx context.Context, req *tablev1.CallBancoRequest) (*tablev1.CallBancoResponse, error) {
	t, err := s.act(ctx, "CallBanco", req, func(c *change) error {
		t, player := c.t, req.GetPlayerId()
		if err := realMoney(c.t); err != nil {
			return err
		}
		if player == t.BankerID {
			return fail(codes.FailedPrecondition, reasonBankerCannotBet, "the banker does not bet against his own bank")
		}
		// Source: RULES.md CF-BANCO-PRIORITY: the previous banco caller
		// first (banco suivi: out of turn until the first bet, or by taking
		// over another's banco when asked), then in betting order.
		suivi := t.State == stateBetting && player == t.BancoSuivi && len(t.Coup.Bets) == 0 &&
			(t.seatOf(player) != nil || t.inGallery(player))
		takeOver := t.State == stateBetting && t.Coup.SuiviAsked != "" && player == t.Coup.SuiviAsked
		if !suivi && !takeOver {
			if err := punterTurn(t, player); err != nil {
				return err
			}
		}
		cp := t.Coup
		hold, err := s.hold(ctx, c, "table/"+t.ID+"/banco/"+req.GetRequestId(), player, cp.Bank, "tables/"+t.ID+"/coups/"+cp.ID)
		if err != nil {
			return err
		}
		// Source: RULES.md CF-BANCO: a banco cancels all other bets.
		for _, b := range cp.Bets {
			t.PendingVoids = append(t.PendingVoids, b.HoldID)
		}
		cp.Bets = []bet{{PlayerID: player, Amount: cp.Bank, HoldID: hold, Banco: true}}
		cp.Banco = true
		c.emit(cp.ID, &eventsv1.BancoCalled{PlayerId: player, Amount: cp.Bank})
		if s := t.BancoSuivi; s != "" && s != player && !takeOver && (t.seatOf(s) != nil || t.inGallery(s)) {
			// The banco suivi holder is asked before the deal whether he
			// takes this banco over (CallBanco) or lets it stand
			// (DeclineBet, or his time runs out).
			cp.SuiviAsked = s
			return nil
		}
		cp.SuiviAsked = ""
		t.BancoSuivi = ""
		closeBetting(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.CallBancoResponse{Table: t}, nil
}

// DecideDraw records the pending draw/stand decision of a hand's holder.
func (s *Service) DecideDraw(ctx context.Context, req *tablev1.DecideDrawRequest) (*tablev1.DecideDrawResponse, error) {
	t, err := s.act(ctx, "DecideDraw", req, func(c *change) error {
		t := c.t
		if err := wantState(t, stateDecision); err != nil {
			return err
		}
		cp := t.Coup
		if cp.DecisionBy != req.GetPlayerId() {
			return fail(codes.FailedPrecondition, reasonNotYourTurn, "the decision is %q's", cp.DecisionBy)
		}
		ch := choiceDraw
		switch req.GetChoice() {
		case tablev1.DrawChoice_DRAW_CHOICE_DRAW:
		case tablev1.DrawChoice_DRAW_CHOICE_STAND:
			ch = choiceStand
		default:
			return fail(codes.InvalidArgument, reasonInvalidArgument, "choice must be DRAW_CHOICE_DRAW or DRAW_CHOICE_STAND")
		}
		recordChoice(c, ch, req.GetPlayerId(), true)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.DecideDrawResponse{Table: t}, nil
}

// recordChoice records the pending decision of the coup in play (by the
// holder's choice, or the default when his time ran out) and lets the coup
// go on (CF-PLAYER-DRAW, CF-BANKER-DRAW, CF-BANCO-FREEDOM).
func recordChoice(c *change, ch choice, player string, byChoice bool) {
	t, cp := c.t, c.t.Coup
	hand, rule := eventsv1.Hand_HAND_PLAYER, "CF-PLAYER-DRAW"
	if cp.DecisionHand == int32(tablev1.Hand_HAND_BANKER) {
		hand, rule = eventsv1.Hand_HAND_BANKER, "CF-BANKER-DRAW"
		cp.BankerChoice = ch
	} else {
		cp.PlayerChoice = ch
	}
	if cp.Banco && t.Rules.BancoFreePlay {
		rule = "CF-BANCO-FREEDOM"
	}
	c.emit(cp.ID, &eventsv1.DrawDecided{Hand: hand, Draw: ch == choiceDraw, ByChoice: byChoice, PlayerId: player, Rule: rule})
	cp.DecisionHand, cp.DecisionBy = 0, ""
	t.State = stateDealing
}

// PassBank gives up the bank between coups (CF-PASS); it is offered in
// turn from the next seat.
func (s *Service) PassBank(ctx context.Context, req *tablev1.PassBankRequest) (*tablev1.PassBankResponse, error) {
	t, err := s.act(ctx, "PassBank", req, func(c *change) error {
		t := c.t
		if t.BankerID != req.GetPlayerId() {
			return fail(codes.FailedPrecondition, reasonNotBanker, "only the banker may pass the bank")
		}
		if t.State != stateBetting || len(t.Coup.Bets) > 0 {
			return fail(codes.FailedPrecondition, reasonWrongState, "the bank may be passed only between coups, before any bet")
		}
		passBank(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.PassBankResponse{Table: t}, nil
}

// passBank releases the banker's bank and offers it in turn from the next
// seat (CF-PASS). The caller has checked that no bet is placed.
func passBank(c *change) {
	t := c.t
	prev, bank := t.BankerID, t.Bank
	t.PendingVoids = append(t.PendingVoids, t.BankHoldID)
	c.emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED, PreviousBankerPlayerId: prev})
	t.BankerID, t.Bank, t.BankHoldID, t.Coup = "", 0, "", nil
	if t.Rules.PassMode == int32(tablev1.PassMode_PASS_MODE_AUCTION) && len(t.Seats) > 1 {
		offerOpen(c, prev, bank)
		return
	}
	offerBank(c, prev)
}

// RaiseBank answers over-bank bets: raise the bank, or let the excess
// bets be removed (CF-BANK-RAISE).
func (s *Service) RaiseBank(ctx context.Context, req *tablev1.RaiseBankRequest) (*tablev1.RaiseBankResponse, error) {
	t, err := s.act(ctx, "RaiseBank", req, func(c *change) error {
		t := c.t
		if err := wantState(t, stateRaise); err != nil {
			return err
		}
		if t.BankerID != req.GetPlayerId() {
			return fail(codes.FailedPrecondition, reasonNotBanker, "only the banker may raise the bank")
		}
		if !req.GetRaise() {
			s.trimExcess(c)
			return nil
		}
		cp := t.Coup
		excess := cp.covered() - cp.Bank
		if t.Rules.HouseLimit > 0 && cp.Bank+excess > t.Rules.HouseLimit {
			return fail(codes.FailedPrecondition, reasonHouseLimitReached, "a bank of %d would exceed the house limit %d", cp.Bank+excess, t.Rules.HouseLimit)
		}
		// Per request: a raise refused for want of funds may be tried
		// again; the amount is absolute, so a repeat changes nothing. Its
		// intent is stored first: should the wallet's answer be lost, the
		// bank hold is brought back to the table's bank before the deal
		// (trimExcess) or by recoverIntents.
		rid := cp.ID + "/raise/" + req.GetRequestId()
		if err := s.raiseIntent(c, rid, t.BankHoldID, t.Bank+excess); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		if _, err := s.wallet.ResizeHold(cctx, &walletv1.ResizeHoldRequest{RequestId: rid, HoldId: t.BankHoldID, Amount: t.Bank + excess}); err != nil {
			if definite(err) {
				s.dropIntent(rid) // refused: the hold is as it was
			}
			return fromDependency("raise the bank", err)
		}
		c.intents = append(c.intents, rid)
		// Source: RULES.md CF-BANK-RAISE: the banker agrees to raise the bank.
		t.Bank += excess
		cp.Bank += excess
		c.emit(cp.ID, &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_RAISED, BankerPlayerId: t.BankerID, PreviousBankerPlayerId: t.BankerID, Bank: t.Bank})
		startDeal(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.RaiseBankResponse{Table: t}, nil
}

// BidBank bids for the bank in an auction (CF-FIRST-BANKER).
func (s *Service) BidBank(ctx context.Context, req *tablev1.BidBankRequest) (*tablev1.BidBankResponse, error) {
	t, err := s.act(ctx, "BidBank", req, func(c *change) error {
		t, p := c.t, req.GetPlayerId()
		if err := realMoney(c.t); err != nil {
			return err
		}
		if err := wantState(t, stateAuction); err != nil {
			return err
		}
		if t.seatOf(p) == nil {
			return fail(codes.FailedPrecondition, reasonNotSeated, "player %q has no seat", p)
		}
		if req.GetAmount() <= 0 {
			return fail(codes.InvalidArgument, reasonInvalidAmount, "amount must be > 0")
		}
		if req.GetAmount() < t.Rules.MinimumBank {
			return fail(codes.FailedPrecondition, reasonBankBelowMinimum, "bid %d is below the minimum bank %d", req.GetAmount(), t.Rules.MinimumBank)
		}
		if n := len(t.Bids); n > 0 && req.GetAmount() <= t.Bids[n-1].Amount {
			// Source: RULES.md CF-FIRST-BANKER: the highest bank offered wins.
			return fail(codes.FailedPrecondition, reasonBidTooLow, "bid %d is not above the highest bid %d", req.GetAmount(), t.Bids[n-1].Amount)
		}
		hold, err := s.hold(ctx, c, "table/"+t.ID+"/bid/"+req.GetRequestId(), p, req.GetAmount(), "tables/"+t.ID+"/auction")
		if err != nil {
			return err
		}
		if n := len(t.Bids); n > 0 {
			t.PendingVoids = append(t.PendingVoids, t.Bids[n-1].HoldID) // the outbid bid is released
		}
		t.Bids = append(t.Bids, bet{PlayerID: p, Amount: req.GetAmount(), HoldID: hold})
		t.AuctionPassed = removeString(t.AuctionPassed, p)
		c.emit("", &eventsv1.BankBid{PlayerId: p, Amount: req.GetAmount()})
		auctionDone(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.BidBankResponse{Table: t}, nil
}

// passAuction records that player will not bid.
func passAuction(c *change, player string) error {
	t := c.t
	if t.seatOf(player) == nil {
		return fail(codes.FailedPrecondition, reasonNotSeated, "player %q has no seat", player)
	}
	if n := len(t.Bids); n > 0 && t.Bids[n-1].PlayerID == player {
		return fail(codes.FailedPrecondition, reasonWrongState, "the highest bidder may not withdraw")
	}
	t.AuctionPassed = append(removeString(t.AuctionPassed, player), player)
	c.emit("", &eventsv1.BankBid{PlayerId: player})
	auctionDone(c)
	return nil
}

// auctionDone closes the auction once every seated player but the highest
// bidder has said he will not bid; with nobody bidding, a new auction.
func auctionDone(c *change) {
	t := c.t
	high := ""
	if n := len(t.Bids); n > 0 {
		high = t.Bids[n-1].PlayerID
	}
	for _, st := range t.Seats {
		if st.PlayerID != high && !contains(t.AuctionPassed, st.PlayerID) {
			return
		}
	}
	closeAuction(c)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// LeaveTable frees a player's seat between coups.
func (s *Service) LeaveTable(ctx context.Context, req *tablev1.LeaveTableRequest) (*tablev1.LeaveTableResponse, error) {
	t, err := s.act(ctx, "LeaveTable", req, func(c *change) error {
		t, p := c.t, req.GetPlayerId()
		if t.hasBet(p) {
			return fail(codes.FailedPrecondition, reasonWrongState, "player %q has a bet in the coup in play; leave after its settlement", p)
		}
		if t.inGallery(p) {
			leaveOrder(t, p)
			t.Gallery = removeString(t.Gallery, p)
			c.emit("", &eventsv1.PlayerLeft{PlayerId: p})
		} else if err := s.leaveSeat(c, p); err != nil {
			return err
		}
		if t.BancoSuivi == p {
			t.BancoSuivi = "" // banco suivi is for a punter at the table
		}
		if caller, _ := auth.FromContext(ctx); caller.Is(auth.RoleCroupier, auth.RoleOperator) {
			c.emit("", &eventsv1.StaffAction{Action: "stand_up", ActorId: caller.Subject, ActorRole: string(caller.Role), Detail: "player " + p})
		}
		if t.State == stateBetting {
			closeBetting(c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.LeaveTableResponse{Table: t}, nil
}

// leaveSeat takes player out of his seat (LeaveTable, and a seated player
// joining the gallery). The banker may leave only before any bet (he
// passes the bank, CF-PASS), the highest bidder not during the auction,
// nobody when the coup in play would be left without two seated players.
// When fewer than two stay seated the game stops: the bank, the bids and
// every bet are released.
func (s *Service) leaveSeat(c *change, p string) error {
	t := c.t
	st := t.seatOf(p)
	if st == nil {
		return fail(codes.FailedPrecondition, reasonNotSeated, "player %q has no seat", p)
	}
	if t.hasBet(p) {
		return fail(codes.FailedPrecondition, reasonWrongState, "player %q has a bet in the coup in play; leave after its settlement", p)
	}
	if n := len(t.Bids); t.State == stateAuction && n > 0 && t.Bids[n-1].PlayerID == p {
		return fail(codes.FailedPrecondition, reasonWrongState, "the highest bidder may not leave the auction")
	}
	inPlay := t.State == stateDealing || t.State == stateDecision || t.State == stateSettling || t.State == stateRaise
	if inPlay && len(t.Seats) <= 2 {
		return fail(codes.FailedPrecondition, reasonWrongState, "the table needs two seated players until the coup in play is settled")
	}
	if p == t.BankerID {
		if t.State != stateBetting || len(t.Coup.Bets) > 0 {
			// Source: RULES.md CF-BANK-NO-WITHDRAW: not while bets are against his bank.
			return fail(codes.FailedPrecondition, reasonWrongState, "the banker may leave only between coups, before any bet")
		}
		passBank(c) // Source: RULES.md CF-PASS: a banker may pass at any time between coups.
	}
	if t.State == stateOffering && t.OfferedID == p {
		offerBank(c, p)
	}
	t.AuctionPassed = removeString(t.AuctionPassed, p)
	leaveOrder(t, p)
	billSeat(t, st, s.now()) // Source: RULES.md CF-BANK-WINS house rule hourly_fee
	number := st.Number
	for i := range t.Seats {
		if t.Seats[i].PlayerID == p {
			t.Seats = append(t.Seats[:i:i], t.Seats[i+1:]...)
			break
		}
	}
	c.emit("", &eventsv1.PlayerLeft{PlayerId: p, SeatNumber: number})
	if len(t.Seats) >= 2 {
		if t.State == stateAuction {
			auctionDone(c)
		}
		return nil
	}
	// Nobody to play against: the bank goes back to its banker.
	if t.BankerID != "" {
		t.PendingVoids = append(t.PendingVoids, t.BankHoldID)
		c.emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED, PreviousBankerPlayerId: t.BankerID})
		t.BankerID, t.Bank, t.BankHoldID = "", 0, ""
	}
	if n := len(t.Bids); n > 0 {
		t.PendingVoids = append(t.PendingVoids, t.Bids[n-1].HoldID)
	}
	if t.Coup != nil {
		// The coup is not played: every bet (the gallery's too) is
		// returned, and the coup ends voided.
		for _, b := range t.Coup.Bets {
			t.PendingVoids = append(t.PendingVoids, b.HoldID)
		}
		if len(t.Coup.Bets) > 0 {
			t.Coup.Voided, t.Coup.VoidReason = true, "the game stopped: fewer than two seated players"
			c.emit(t.Coup.ID, &eventsv1.CoupVoided{Reason: t.Coup.VoidReason, By: trust.Table, ByRole: string(auth.RoleService)})
			t.LastCoup = t.Coup
		}
	}
	t.State, t.Coup, t.OfferedID, t.OpenOffer, t.Bids = stateWaiting, nil, "", 0, nil
	return nil
}

// JoinGallery adds a spectator to the gallery (CF-GALLERY).
func (s *Service) JoinGallery(ctx context.Context, req *tablev1.JoinGalleryRequest) (*tablev1.JoinGalleryResponse, error) {
	t, err := s.act(ctx, "JoinGallery", req, func(c *change) error {
		t, p := c.t, req.GetPlayerId()
		if t.inGallery(p) {
			return fail(codes.AlreadyExists, reasonAlreadySeated, "player %q is already in the gallery", p)
		}
		if t.seatOf(p) != nil {
			if p == t.BankerID || t.OfferedID == p {
				return fail(codes.FailedPrecondition, reasonWrongState, "player %q is in play; leave the seat between coups", p)
			}
			if err := s.leaveSeat(c, p); err != nil {
				return err
			}
		}
		t.Gallery = append(t.Gallery, p)
		c.emit("", &eventsv1.GalleryJoined{PlayerId: p})
		if cp := t.Coup; cp != nil && t.State == stateBetting {
			// Source: RULES.md CF-GALLERY: the gallery bets after the seated players.
			cp.Order = append(cp.Order, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.JoinGalleryResponse{Table: t}, nil
}

// leaveOrder takes player out of the betting order of the coup being bet,
// keeping the turn on the same next punter.
func leaveOrder(t *table, player string) {
	cp := t.Coup
	if cp == nil || t.State != stateBetting {
		return
	}
	for i, q := range cp.Order {
		if q == player {
			cp.Order = append(cp.Order[:i:i], cp.Order[i+1:]...)
			if i < cp.Turn {
				cp.Turn--
			}
			return
		}
	}
}

func removeString(list []string, v string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != v {
			out = append(out, x)
		}
	}
	return out
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
	caller, _ := auth.FromContext(ctx)
	t, err := s.mutate(ctx, "VoidCoup", req.GetRequestId(), req.GetTableId(), req, func(c *change) error {
		t := c.t
		switch t.State {
		case stateBetting, stateDealing, stateDecision, stateRaise:
		default:
			return fail(codes.FailedPrecondition, reasonWrongState, "no coup to void before settlement (table is %s)", tablev1.TableState(t.State))
		}
		cp := t.Coup
		if cp.ID != req.GetCoupId() {
			return fail(codes.FailedPrecondition, reasonCoupNotInPlay, "coup %q is not in play (coup %q is)", req.GetCoupId(), cp.ID)
		}
		c.emit(cp.ID, &eventsv1.StaffAction{Action: "void_coup", ActorId: caller.Subject, ActorRole: string(caller.Role), Reason: req.GetReason()})
		voidCoup(c, req.GetReason(), caller)
		return nil
	})
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
	caller, _ := auth.FromContext(ctx)
	t, err := s.mutate(ctx, "CloseTable", req.GetRequestId(), req.GetTableId(), req, func(c *change) error {
		t := c.t
		switch {
		case t.State == stateWaiting, t.State == stateOffering, t.State == stateAuction:
		case t.State == stateBetting && len(t.Coup.Bets) == 0 && t.Coup.SuiviAsked == "":
		default:
			return fail(codes.FailedPrecondition, reasonWrongState, "a table closes between coups only (it is %s, with bets at stake)", tablev1.TableState(t.State))
		}
		c.emit("", &eventsv1.StaffAction{Action: "close_table", ActorId: caller.Subject, ActorRole: string(caller.Role), Reason: req.GetReason()})
		closeTable(c, req.GetReason(), caller.Subject, false)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tablev1.CloseTableResponse{Table: t}, nil
}

// realMoney refuses money on a certification table whose house rules do
// not allow it: FAILED_PRECONDITION CERTIFICATION_TABLE.
func realMoney(t *table) error {
	if t.Certification && !t.Rules.CertRealMoney {
		return fail(codes.FailedPrecondition, reasonCertificationTable,
			"the table deals from a certification shoe (a prepared order) and takes no money: house rule certification_real_money is off")
	}
	return nil
}

// voidCoup voids the coup in play (CF-ERROR): every bet is returned, its
// cards are discarded, the banker keeps the bank and the next coup's
// betting opens.
func voidCoup(c *change, reason string, by auth.Caller) {
	t, cp := c.t, c.t.Coup
	// Source: RULES.md CF-ERROR: the coup is restored as if not played; every bet returned.
	for _, b := range cp.Bets {
		t.PendingVoids = append(t.PendingVoids, b.HoldID)
	}
	t.PendingResizes = nil // the bets' holds are released whole
	cp.Voided, cp.VoidReason = true, reason
	// Its face-down cards stay secret (but to auditors): the odds count
	// them as still in the shoe.
	for r, n := range (viewer{}).hidden(cp) {
		t.ShoeVoidHidden[r] += n
	}
	cp.DecisionHand, cp.DecisionBy = 0, ""
	c.emit(cp.ID, &eventsv1.CoupVoided{Reason: reason, By: by.Subject, ByRole: string(by.Role)})
	t.LastCoup = cp
	t.Coup = newCoup(t)
	t.State = stateBetting
}

// wantState is WRONG_STATE unless the table is in st.
func wantState(t *table, st tableState) error {
	if t.State != st {
		return fail(codes.FailedPrecondition, reasonWrongState, "table is %s, not %s",
			tablev1.TableState(t.State), tablev1.TableState(st))
	}
	return nil
}
