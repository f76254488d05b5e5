// Package tablesvc is chemmy's table service: it runs chemin de fer tables
// (RULES.md CF-*), punto banco (PB-*), baccarat banque (BQ-*) and old
// baccarat (OLD-*) tables as crash-safe state machines. Every game runs on
// a pure game core (package game and game/chemindefer, game/puntobanco,
// game/banque, game/oldbaccarat); saga.go is the one shell that serves
// them, adapter_<game>.go its adapters (games.go their registry), retry.go the saga's retry loop;
// docs/game-core.md explains the split. It owns the game state;
// it asks shoe-svc for cards and wallet-svc for holds and settlement, and
// never shuffles or moves money itself.
//
// # State and persistence
//
// Each table is one record (type table) in the bbolt bucket "tables",
// key = table id (a ULID, so keys sort by creation): a version byte
// (0x01) and the record in CBOR, keyed by the names of its JSON fields
// (codec.go); a record stored as JSON before still reads and is written
// in CBOR at its next save. Every change of a
// table is one bbolt transaction that writes the record, appends its
// events to the outbox (package kit/outbox) and stores the idempotency
// record of the request (bucket "requests", key "<method>/<request_id>",
// value = SHA-256 of the request, then "abandoned" for a request rolled
// back; a retry returns the table as it stands). Bucket "intents" holds
// the escrow intents of requests in progress (intent.go); bucket "outbox"
// the events not yet published. The same transaction keeps every event
// with a coup id, unredacted, in the round history (history.go: buckets
// "round_events", "rounds", "round_index", "round_tables"; a round's
// record encoded as a table's), read by ListRounds and GetRound; and each
// coup it ends as the public saw it at its end, the table's last 20
// (recent.go: bucket "recent_coups", read by WatchTable and GetTable as
// Table.recent_coups, by ListTables for Table.recent_results). Schema version 1 (the history's buckets are
// created at start in a store that lacks them; coups played before they
// existed are not in the history).
//
// # The coup as a saga
//
// Steps that call another service (voiding holds, charging seat fees,
// dealing, settling, closing and opening shoes) are driven by advance,
// which only ever repeats idempotent calls: every call carries a request
// id derived from the coup ("<coup_id>/card/<n>", the coup id for the
// settlement, ...). A table left in DEALING or SETTLING by a crash or an
// unavailable dependency is advanced again at start and by a retry loop,
// so the coup finishes exactly once with the same cards and the same
// money. The same loop applies the turns whose time ran out (deadline.go)
// and rolls back escrow intents whose request was never stored (wallet
// CancelPlaceHold: intent.go).
package tablesvc
