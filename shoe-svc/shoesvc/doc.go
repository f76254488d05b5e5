// Package shoesvc is chemmy's shoe service: it builds, shuffles, cuts and
// burns shoes and deals their cards one at a time (RULES.md SHOE-*). It
// owns card order; nobody else shuffles or draws. The gRPC contract is
// chemmy.shoe.v1.ShoeService.
//
// # Building a shoe (CreateShoe)
//
//  1. SHOE-DECKS: rules.NewDecks(decks), 6 or 8 decks (default 6).
//  2. SHOE-SHUFFLE: one Fisher-Yates shuffle whose indices come from a
//     [Source] through rejection sampling (no modulo bias). In production
//     the source is always crypto/rand; only this package's tests can
//     inject another one.
//  3. SHOE-CUT: the shuffled cards are rotated at a uniformly random
//     position 0..n-1 (the card at that position becomes the first).
//  4. SHOE-BURN: the first `burn` cards (3 or 4, default 3) are drawn,
//     shown in Shoe.burned and discarded. Shoe.cards_total counts the cards
//     left after the burn (312-3 = 309 with the defaults).
//  5. SHOE-CUT-CARD: the cut card lies `cut_card_from_end` cards (6..16,
//     default 8) before the end: exactly that many cards are behind it.
//
// CreateShoeFromOrder skips 2 to 4: the cards come out in exactly the given
// order, and cut_card_from_end may be 0 (cut card comes out with the last
// card) up to 16, and must be less than the number of cards.
//
// # Dealing and the cut card
//
// DealCard deals the card at position cards_dealt (0-based, burned cards
// excluded). After every deal
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
// # Idempotency
//
// Every mutating RPC is idempotent by request_id (kit/store records): a
// retry returns the first response byte for byte and changes nothing; the
// same request_id with another request is ALREADY_EXISTS
// REQUEST_ID_REUSED. CreateShoe hashes the request with its defaults filled
// in, so {decks: 0} and {decks: 6} are the same request. DealCard is
// idempotent per (shoe_id, request_id).
//
// # Storage (bbolt, schema version [SchemaVersion])
//
// Besides kit/store's "meta" and "requests" buckets and kit/outbox's
// "outbox" bucket:
//
//   - "shoes": key = shoe id, the 26-character ULID string (sorts by
//     creation time); value = the deterministic protobuf encoding of the
//     shoe's public state, chemmy.shoe.v1.Shoe (counts, cut card, burned
//     cards, state).
//   - "orders": key = shoe id as above; value = the dealing order after the
//     burn, one byte per card: byte i is rules.Card.Index() (0..51) of the
//     card dealt at position i. The full order as loaded into the shoe is
//     Shoe.burned followed by these cards. Never returned by any RPC.
//
// Idempotency keys in "requests" (kit/store, value = request hash +
// response protobuf):
//
//   - "shoe/create/" + request_id           → CreateShoeResponse
//   - "shoe/create-from-order/" + request_id → CreateShoeFromOrderResponse
//   - "shoe/deal/" + shoe_id + "/" + request_id → DealCardResponse
//     (shoe ids have a fixed length, so the key is unambiguous)
//
// Every state change (a new shoe with its order and idempotency record; a
// deal with the shoe's new counts and its idempotency record) is one bbolt
// Update transaction, so a service restarted on the same file continues
// every shoe at the same position.
//
// # Events
//
// The service publishes no events yet; the outbox bucket exists (app.Start
// creates it) for the shoe events a later change adds.
package shoesvc
