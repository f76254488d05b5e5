// Package shoesvc is chemmy's shoe service: it builds, shuffles, cuts and
// burns shoes and deals their cards one at a time (RULES.md SHOE-*). It
// owns card order; nobody else shuffles or draws. The gRPC contract is
// chemmy.shoe.v1.ShoeService.
//
// Every shoe belongs to an operator (tenant; operator.go): a caller of
// another operator, but for the services and a deployment-wide auditor,
// is answered NOT_FOUND SHOE_NOT_FOUND by every call naming it.
//
// # Building a shoe (CreateShoe)
//
//  1. SHOE-DECKS, BQ-DECKS, OLD-DECKS: decks by variant: chemin de fer
//     (also unspecified) and punto banco 6 or 8 (default 6), banque 3
//     (156 cards), the old game 2 (104 cards). A 2- or 3-deck shoe needs
//     its variant: decks 2 or 3 with chemin de fer or punto banco is
//     INVALID_HOUSE_RULE.
//  2. SHOE-SHUFFLE: a fresh 512-byte server seed from crypto/rand is
//     committed to: Shoe.commitment = fair.Commit(server seed) =
//     SHA-256(server seed) is published (event shoe_opened) before any
//     player seed is known. The order is fixed only at the cut, through
//     package fair (an unbiased rejection-sampling Fisher-Yates over a
//     documented bit stream) from the server seed, the request's public
//     client seed and the player seeds (Shoe.player_seeds, and who gave
//     them, player_seed_player_ids): the cutter's CutRequest.player_seed,
//     or the seeds of its table's players (SeedShoe, seed.go), sorted by
//     their bytes. Only this package's tests can inject other
//     server seeds (start's options; no Config field, flag or environment
//     variable reaches them).
//  3. SHOE-CUT: without cutter_player_id the shoe is shuffled without
//     player seed and cut at once at the random position fair.RandomCut
//     draws from the same stream. With one, the shoe waits in
//     SHOE_STATE_AWAITING_CUT (its order not yet fixed) until that player
//     calls Cut (his seed, any position 0..n-1) or cut_deadline passes;
//     then it is shuffled without player seed and cut at the random
//     position, by the first call that touches the shoe (DealCard, Cut,
//     CloseShoe) or by the sweep (about every second). A shoe without
//     player seed has no player entropy: its order follows from what was
//     fixed when it opened, and its reveal's player_seeds is empty. With
//     await_player_seeds (the table service's shoes without a cutter) it
//     waits in SHOE_STATE_AWAITING_SEEDS, with no time limit, until its
//     table's SeedShoe (the seeds its players gave after the commitment,
//     possibly none) shuffles it and cuts it at random; DealCard and
//     MoveTopCardsToBottom are SHOE_NOT_SEEDED until then, CloseShoe cuts
//     it at random without seeds.
//  4. SHOE-BURN: 3 or 4 cards (default 3), or the first card and as many
//     more as its value (BURN_MODE_BY_FIRST_CARD), are shown in
//     Shoe.burned and discarded (fate BURNED, event cards_burned).
//     Shoe.cards_total counts the cards left after the burn.
//  5. SHOE-CUT-CARD: the cut card lies `cut_card_from_end` cards before
//     the end (default 8): exactly that many cards are behind it. Its
//     range is by variant (cutRule): the cards behind it must complete the
//     coup that brings it out, and it must not come out before 5/6 of the
//     shoe (SHOE-RESHUFFLE: 6*(loaded-C) >= 5*loaded). Chemin de fer and
//     punto banco 6..16 (a coup of up to 6 cards). Banque 8..16: a coup
//     deals up to 9 cards (three hands). The old game 8..17: a coup of p
//     players (at least 3) deals up to 3p cards and needs C >= 3p-1 (8 for
//     3 players, 17 for 6), and 17 is the 5/6 bound of 104 cards; a table
//     of more players checks cards_remaining before each coup. The burn
//     (3 or 4, or by the first card: 2 to 11) stays as it is: it counts
//     among the cards out, so it does not move the 5/6 bound.
//  6. OLD-CUT (the old game): after the cut and the burn and before the
//     first deal, the table service may move the next `count` cards
//     (1..cards_remaining-1) to the bottom, once, when the banker announces
//     it (MoveTopCardsToBottom; also on certification shoes). The stored
//     dealing order is rotated (fair.MoveToBottom); Shoe.moved_to_bottom
//     and moved_by, the event top_cards_moved and the reveal's
//     moved_to_bottom and moved_by record it, and fair.Verify applies it,
//     so the closed shoe is recomputed with the move. Not between coups:
//     the text places it after the cut, before the deal.
//
// CreateShoeFromOrder (a certification shoe) skips 2 to 4: the cards come
// out in exactly the given order, and cut_card_from_end may be 0 (cut card
// comes out with the last card) up to 16, and must be less than the number
// of cards. The cards must be 2, 3, 6 or 8 full decks (NOT_FULL_DECKS
// otherwise; Shoe.decks is that number) unless test_shoe is set (any 1 to
// 832 cards, decks 0). Shoe.certification is true, Shoe.test_shoe is
// test_shoe, and both are in its shoe_opened event.
//
// # Ownership
//
// Shoe.owned_by_table is true, and Shoe.table_id names the table, for a
// shoe the table service (verified role service, subject "table-svc")
// created with an owner (its table id) or claimed for a table (ClaimShoe,
// claim.go: CreateTable claims the staff shoe it is opened on, before the
// table exists, so nobody deals from it in the table's first betting and
// no second table takes it). It also becomes true with the table
// service's first successful DealCard on any shoe (tables opened before
// ClaimShoe; table_id stays empty). On such a shoe DealCard and
// CloseShoe are for the table service only, and Cut for the named cutter
// (a player for himself) or the table service; anybody else gets
// PERMISSION_DENIED SHOE_OWNED_BY_TABLE before any stored answer is
// replayed (a retried request_id of the table reveals nothing). The table
// closes its shoe between coups, so no coup is cut short by a close. For
// a staff shoe owner is a free-form label that grants nothing;
// Shoe.created_by names the creator's verified subject, Shoe.closed_by
// and closed_by_role whoever closed it (a forced close by an operator
// names him).
//
// # Dealing and the cut card
//
// DealCard deals the card at position cards_dealt (0-based, burned cards
// excluded); DealCards deals several in order, each exactly as its
// DealCard, in one write transaction (the table service's coup openings:
// one commit for four cards; with third_cards also the third cards the
// tableau forces, up to its first option, each to the tableau's hand,
// decided by the rules engine the table plays by: forcedHand). After
// every deal
//
//	cut_card_out = cards_remaining <= cut_card_from_end
//
// where cards_remaining counts the cards left after this one. So with
// cards_total = T and cut_card_from_end = C, the deal at position T-C-1
// (the last card in front of the cut card) is the first to report
// cut_card_out = true: the cut card is now at the front of the shoe and the
// coup in progress is the shoe's last (SHOE-RESHUFFLE). The service keeps
// dealing behind the cut card (so that coup can be completed) until the
// shoe is exhausted; the deal of the last card closes the shoe
// (SHOE_STATE_CLOSED) and any further DealCard fails with
// FAILED_PRECONDITION SHOE_EXHAUSTED. Since C < T always holds, the
// invariant cut_card_out == (cards_remaining <= cut_card_from_end) holds for
// every stored shoe, also before the first deal (when it is false).
//
// The coup of the deal that brought the cut card out is recorded
// (Shoe.cut_card_coup_id, event cut_card_out); after it a deal for
// another coup fails with CUT_CARD_OUT: the cut card's coup is the shoe's
// last (SHOE-RESHUFFLE). The coup of a deal is DealCardRequest.coup_id or,
// when empty, the "<coup_id>" of a request_id "<coup_id>/card/<n>".
//
// # Coups of tables
//
// A deal names its coup (above), and ListCardFates lists a coup's cards
// by that name, so a card of a staff shoe dealt under a table coup's id
// would be listed among the table coup's cards. A deal by a caller
// other than the table service (a staff shoe's: the table's own shoes
// deal to the table service only) that names a table's coup is
// therefore refused, PERMISSION_DENIED COUP_OWNED_BY_TABLE, before any
// stored answer is replayed (tableCoup):
//
//   - a coup id of the form table-svc gives its coups is reserved to it,
//     dealt or not: a ULID, after the shard prefix "s<k>-" of a sharded
//     deployment (tableCoupID). The reservation covers the coup in its
//     betting, before the table deals a card of it (its id is in the
//     table's view from then on), which no record here can;
//   - any other coup id that has a card dealt from a table's shoe
//     (owned_by_table; every fate of the coup is checked).
//
// Staff name their coups otherwise ("coup-42"). The table service is
// never refused for a coup id: a staff card already under a table coup's
// id (dealt before this rule) must not be able to stop a table, and
// ListCardFates checks every fate it lists, so such a card opens nothing
// (see "Closing" below).
//
// # Closing (SHOE-RESHUFFLE) and the reveal
//
// CloseShoe closes a shoe once the cut card is out or at least 5/6 of the
// loaded cards are burned or dealt; earlier only with force by an
// operator, with a reason. The table calls it after the cut card's coup is
// settled. The deal of the last card closes the shoe too. Closing writes
// the fate LEFT for every card still in the shoe and the event shoe_closed
// with the reveal; GetShoeReveal returns the same reveal for closed shoes
// only. Nothing returns the seed or the order of an open shoe.
//
// ListCardFates answers the fates of a shoe, or of a coup, to a caller
// other than the table service only if every fate it would list is on a
// closed shoe or on a staff shoe (not owned_by_table): the dealt cards of
// a table's open shoe include the face-down cards of the coup in play.
// Each fate is checked against its own shoe, since a coup's fates may
// come from several shoes; one fate on an open table shoe refuses the
// whole answer (FAILED_PRECONDITION SHOE_NOT_CLOSED).
//
// # Idempotency
//
// Every mutating RPC is idempotent by request_id (kit/store records; for
// the two creates, per caller): a retry returns the first response byte
// for byte and changes nothing; the same request_id with another request
// is ALREADY_EXISTS REQUEST_ID_REUSED. CreateShoe hashes the request with its defaults filled
// in, so {decks: 0} and {decks: 6} are the same request. DealCard is
// idempotent per (shoe_id, request_id).
// Records are kept Config.RequestRetention (default 7 days) after their
// first save, those of a shoe still open as long as it is (retention.go);
// a request_id sent again after that is a new request.
//
// # Storage (bbolt, schema version [SchemaVersion])
//
// Version 2 added the buckets "secrets", "fates", "coups" and "cutting"
// and the seeds; version 3 (this change) commits to the server seed alone
// and mixes the player seeds in at the cut (fair's version 2 scheme): an
// older file is refused at open (delete the data directory of a
// development stack). Besides kit/store's "meta" and "requests" buckets
// and kit/outbox's "outbox" bucket:
//
//   - "shoes": key = shoe id, the 26-character ULID string (sorts by
//     creation time); value = the deterministic protobuf encoding of the
//     shoe's public state, chemmy.shoe.v1.Shoe.
//   - "secrets": key = shoe id; value = uint16 big-endian seed length,
//     the server seed, one byte of burn count (0 for by first card), then
//     the shuffled order before the cut (one byte per card, its index;
//     empty until the cut). Absent for CreateShoeFromOrder shoes. Never
//     returned while the shoe is open.
//   - "orders": key = shoe id; value = the dealing order after the cut
//     and the burn, one byte per card: byte i is rules.Card.Index() (0..51)
//     of the card dealt at position i. Written at the cut, rotated by an
//     OLD-CUT move. Never returned by any RPC.
//   - "fates": key = shoe id + uint16 big-endian load position (0 = first
//     card after the cut, burned cards first, then the dealing order after
//     an OLD-CUT move); value = CardFate protobuf.
//   - "coups": key = coup id + 0x00 + the "fates" key; empty value: the
//     per-coup index of ListCardFates (coup ids hold no NUL).
//   - "cutting": key = value = shoe id of every shoe in AWAITING_CUT (the
//     sweep's work list).
//
// Idempotency keys in "requests" (kit/store, value = request hash +
// response protobuf):
//
//   - "shoe/create/" + C + "/" + request_id → CreateShoeResponse
//   - "shoe/create-from-order/" + C + "/" + request_id →
//     CreateShoeFromOrderResponse
//
// where C is the Go-quoted "<role>:<subject>" of the verified caller:
// create request ids are per caller, so nobody can take the request id
// the table service will use for its next shoe and have his shoe replayed
// to the table.
//   - "shoe/deal/" + shoe_id + "/" + request_id → DealCardResponse
//     (shoe ids have a fixed length, so the key is unambiguous)
//   - "shoe/cut/" + shoe_id + "/" + request_id → CutResponse
//   - "shoe/close/" + shoe_id + "/" + request_id → CloseShoeResponse
//   - "shoe/move/" + shoe_id + "/" + request_id →
//     MoveTopCardsToBottomResponse
//   - "shoe/claim/" + shoe_id + "/" + request_id → ClaimShoeResponse
//     (hashed without table_id: a retry gets the first claim's table)
//
// SeedShoe stores no record: it is idempotent per shoe (the first fixes
// the order; a later one answers the shoe as it stands).
//
// # Events
//
// chemmy.events.v1.ShoeEvent, written to the outbox in the transaction of
// the change and published as "chemmy.shoe.<shoe_id>.<kind>" with
// Nats-Msg-Id "<shoe_id>/<kind>": shoe_opened (commitment, or
// certification and test_shoe for CreateShoeFromOrder; owned_by_table,
// created_by), shoe_claimed (the claiming table), cards_burned (cut,
// player seeds and burn), top_cards_moved (the old game's move to the
// bottom: count, announced_by), cut_card_out, shoe_closed (with the
// reveal for shoes with seeds, and who closed it).
//
// # Crash safety
//
// Every state change (a new shoe with its secret, order and events; a
// cut; a deal with its fate and idempotency record; a close with the
// fates of the cards left) is one bbolt transaction: killed at any point
// the service restarts at the last committed card, and a retried
// request_id returns the stored answer. TestCrashDuringDeals kills a real
// process (-tags failpoints: CHEMMY_SHOE_FAILPOINT=deal-in-tx or
// deal-after-commit, CHEMMY_SHOE_FAILPOINT_AFTER=n) and at random moments.
package shoesvc
