// Package walletsvc is chemmy's wallet service: it owns money. It keeps a
// double-entry ledger of accounts in integer minor units of one currency,
// holds (escrow) for banks and bets, and settles chemin de fer coups with
// the house commission (RULES.md CF-STANDOFF, CF-BANK-WINS, CF-BANK-LOSES,
// CF-UNCOVERED, CF-BANK-SIZE) computed by rules.SettleChemin.
//
// # Accounts
//
//   - "player:<id>", id 1..64 characters of [A-Za-z0-9_.-]: created by the
//     first Deposit.
//   - "house:commission": the commission taken by the house.
//   - "external:funding": the other side of deposits and withdrawals; its
//     balance is minus the money in the wallet.
//
// The two system accounts exist from the first start. Every movement is a
// transfer from one account to another, so the sum of all balances is
// always exactly 0 (the conservation invariant), and the sum of all but
// external:funding is total deposits minus total withdrawals. Each
// transaction checks before it commits that no account but external:funding
// is negative and that 0 <= held <= balance on every account.
//
// # Storage (bbolt, schema version 1)
//
// Besides the kit's "meta" (schema), "requests" (idempotency records) and
// "outbox" buckets:
//
//   - "wallet": key "currency" -> the currency code (ASCII). Written on the
//     first start, checked on every later start: a file never changes
//     currency.
//   - "accounts": key = account id (UTF-8, so keys sort by kind, then by
//     player id) -> 16 bytes: balance, held; each a big-endian int64 (two's
//     complement). available = balance - held.
//   - "holds": key = hold id, a 26-character ULID (sorts by creation time)
//     -> a deterministically marshalled chemmy.wallet.v1.Hold. held on an
//     account is always the sum of the amounts of its OPEN holds. A closed
//     (SETTLED or VOIDED) hold keeps the amount it had when it closed.
//   - "transfers": key = 8-byte big-endian sequence (the bucket's
//     NextSequence, so keys sort in commit order; the log is append-only and
//     never rewritten) -> a deterministically marshalled
//     chemmy.wallet.v1.Transfer whose transfer_id is a ULID.
//
// Idempotency records live in the kit's "requests" bucket (store.Lookup /
// store.Save): key "req/<request_id>" for Deposit, Withdraw, PlaceHold and
// VoidHold (one key space shared by the four methods), "coup/<coup_id>" for
// SettleCoup. The stored hash is SHA-256 over the method name and
// store.Hash(request), so the same id with another request, or reused by
// another method, is refused with ALREADY_EXISTS REQUEST_ID_REUSED. The
// value is the marshalled response, returned as is to a retry. Failed
// requests store nothing: a retry after the failure's cause is gone (for
// example after a deposit) is a new attempt.
//
// # Transactions
//
// The whole effect of one RPC (idempotency record, accounts, holds,
// transfers) is written in one bbolt read-write transaction; an error
// anywhere rolls all of it back. Concurrent RPCs are group-committed: while
// one transaction commits, the next requests queue and then commit together
// in one transaction (one fsync). If one of them fails, the group is rolled
// back, the failing request is rerun alone and the others are rerun
// together, so a failure never leaves partial state and never affects
// another request (the same scheme as bbolt's DB.Batch, without its timer).
//
// # Not yet
//
// Events: no ledger event is written to the outbox yet (one event per
// transfer is a later issue).
package walletsvc
