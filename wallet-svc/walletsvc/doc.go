// Package walletsvc is chemmy's wallet service: it owns money. It keeps a
// double-entry ledger of accounts in integer minor units, holds (escrow)
// for banks and bets as two-phase transfers, and settles coups of chemin
// de fer (RULES.md CF-STANDOFF, CF-BANK-WINS, CF-BANK-LOSES, CF-UNCOVERED,
// CF-BANK-SIZE, CF-BANK-LIMIT; computed by rules.SettleChemin and
// rules.BankLimit), punto banco (PB-BETS, with the table's prices, pair
// bets and the no-commission game; computed by rules.SettlePuntoBanco and
// rules.TotalHouse), baccarat banque (BQ-BANK, BQ-BETS, BQ-CHEVAL;
// computed by rules.SettleBanqueCoup) and the old game with aces at eleven
// (OLD-SETTLE, OLD-NATURAL, OLD-STAKE; computed, without the cards, from
// each punter's result against the banker by rules.SettleOldResults and
// rules.OldBankAfter: old.go), and charges the house fees (bank auction
// 2.5%, rules.BanqueAuctionFee; hourly seat fee, rules.HourlyFeeDue). The
// rules engine (services/rules) is the one home of every payout,
// commission and fee; the wallet computes each settlement's amounts with
// it from the request's inputs and moves them, it does not take amounts
// computed elsewhere on trust.
//
// # Accounts
//
//   - "player:<id>", id 1..64 characters of [A-Za-z0-9_.-]: created by the
//     first Deposit.
//   - "house:commission": commissions and fees taken by the house.
//   - "house:bank": the house's float, which banks punto banco and a
//     house-held banque bank; funded by Deposit like a player, never
//     negative (a settlement it cannot pay fails INSUFFICIENT_FUNDS).
//   - "external:funding": the other side of deposits and withdrawals; its
//     balance is minus the money in the wallet.
//   - "external:operator" (seamless mode): the other side of the
//     operator's debits, credits and rollbacks; its balance is minus the
//     operator's money in the wallet (at stake, or taken as commission
//     and fees). Like external:funding it may be negative; the audit
//     treats both as external.
//
// Currencies: an account id without a suffix is in the wallet's default
// currency (Config.Currency, the file's); "<id>@<CUR>" (e.g.
// "player:alice@USD", "external:funding@USD") is the same kind of account
// in currency CUR, created by its first deposit (system accounts of CUR by
// their first use). CUR is an active ISO 4217 code or one the deployment
// configured (Config.Currencies); any other is CURRENCY_UNKNOWN
// (GetCurrency says which are accepted, and each one's exponent: ISO
// 4217's minor unit, or the configured one). Every Account, Transfer and
// TransferRecorded event carries its currency's exponent. A transfer never crosses currencies
// (CURRENCY_MISMATCH); conservation holds per currency. The escrow of a
// hold is the account's "held" column (a pending debit, TigerBeetle
// style), not a separate table escrow account: funds stay on the owner's
// account, reserved, until the hold is posted, settled, voided or expired.
//
// The system accounts of the default currency exist from the first start. Every movement is a
// transfer from one account to another, so the sum of all balances is
// always exactly 0 (the conservation invariant), and the sum of all but
// external:funding is total deposits minus total withdrawals. Each
// transaction checks before it commits that no account but external:funding
// is negative and that 0 <= held <= balance on every account.
//
// # Operators
//
// Every account belongs to one operator (tenant; docs/design-tenancy.md,
// step 3, operator.go). The API's ids stay as above; inside, the ledger
// keys another operator's account "<operator>/<id>" ("acme/player:bob",
// "acme/house:commission") and the default operator's (Config.OperatorID,
// "operator", which must be the gateway's -default-operator) as before
// operators, so a ledger written before reads unchanged as the default
// operator's. Two operators' "player:bob" are two accounts; each operator
// has his own system accounts (another's come with their first use and
// read as empty before), so each one's books balance apart.
//
// A call acts on one operator's accounts: the request's operator_id for
// the service role (table-svc names its table's operator; empty: the
// default operator) and for a deployment-wide auditor (operator "*");
// the caller's own operator for anyone else (his operator_id is ignored:
// a player never chooses his operator). Another operator's account,
// hold, launch session, request id or coup id is one that does not
// exist: NOT_FOUND (ACCOUNT_NOT_FOUND, HOLD_NOT_FOUND,
// LAUNCH_SESSION_NOT_FOUND; never PERMISSION_DENIED), and two operators'
// identical request or coup ids are two requests (their idempotency keys
// are "req/<operator> <id>", "coup/<operator> <id>"; the default
// operator's unchanged). Responses, error messages and TransferRecorded /
// PlayerLimitsChanged events name the API's ids (an event carries its
// operator_id); an account id with "/" in a request is INVALID_ACCOUNT.
// AuditLedger audits each operator's books apart (OperatorBooks) and
// their sum: an operator's auditor sees his own only, a deployment-wide
// auditor every one's (or one's, naming it). ListLimitChanges lists the
// caller's operator's changes, ExpireHolds expires every operator's due
// holds and answers with the caller's. With an operators file
// (Config.OperatorsFile, opwallets.go) each operator has his own seamless
// wallet (the default operator Config.Operator when the file gives him
// none), and an operator listed with currencies may name accounts in
// those only (INVALID_ARGUMENT CURRENCY_UNKNOWN otherwise); in seamless
// mode a call for an operator without a wallet is FAILED_PRECONDITION
// SEAMLESS_WALLET. The operator report, exceptions and rounds show the
// caller's operator's transactions only.
//
// # Holds
//
// A hold is OPEN until it resolves exactly once: SETTLED (by a coup
// settlement), POSTED (PostHold: part or all moved by one transfer, the
// rest released), VOIDED, or EXPIRED (its expire_time, from PlaceHold's
// ttl, passed; a sweep runs every Config.HoldSweepInterval and on
// ExpireHolds). Resolving it again fails HOLD_NOT_OPEN naming the state it
// is in; a due but unswept hold fails HOLD_EXPIRED. A chemin de fer bank
// is a hold that stays open across coups, resized to the new bank; the
// uncovered part of it never moves (CF-UNCOVERED) and with bank_limit the
// excess over the limit is released from it (CF-BANK-LIMIT).
//
// # Wallet mode
//
// A ledger file belongs to one wallet mode: transfer (the players' money
// is here, on their "player:" accounts) or seamless (it is in the
// operator's wallet; the accounts are zero at rest). The two read the
// same accounts differently: seamless mode takes whatever is available
// on a player account for money owed to the operator's wallet and sends
// it there (the sweep below), so a transfer-mode file started in
// seamless mode paid each player's whole balance out to the operator as
// a "payout" of his first coup (issue 23), and a seamless file started
// in transfer mode would leave its operator credits unsent and settle
// stakes the operator's wallet paid into this ledger. So (mode.go):
//
//   - Start records the mode in the file ("mode" in "wallet") the first
//     time, and refuses a file of the other mode with a *ModeError that
//     names both modes and the ways out, in the first transaction after
//     the file is opened, before the ledger is touched or anything
//     served (no operator call, not even the probe). A file written
//     before the mode was recorded is taken as seamless when it holds
//     operator transactions, as transfer when it holds transfers, holds
//     or player accounts, and as new otherwise; its next start records
//     that. CheckMode makes the same check reading only (chemmy run
//     checks before it starts anything).
//   - MigrateMode (chemmy wallet migrate, the service stopped) changes
//     the recorded mode and nothing else, and only when the file holds
//     nothing of the mode it leaves: to seamless, every player account
//     at 0 (the players' money withdrawn first); to transfer, no
//     operator transaction left to send, no debit in flight, no round
//     open (no stake, no bank up). Otherwise it names what stands in the
//     way (*MigrateRefusal) and changes nothing.
//   - Every mode given to the file is logged in "mode-log": when, from,
//     to, how (first start, inferred, migrate) and by whom.
//
// # Seamless wallet mode
//
// With Config.Operator (wallet-svc -wallet-mode seamless), chosen per
// deployment, every "player:" account mirrors a player whose money lives
// in the operator's wallet (services/kit/opwallet): his own operator's,
// with an operators file (opwallets.go). The account is zero
// at rest: money enters it only by a debit of the operator's wallet and
// leaves it by a credit or a rollback, against external:operator (the
// transfer reasons operator_debit, operator_credit, operator_rollback,
// which are not play for the responsible-gaming limits). Deposit and
// Withdraw of a player fail FAILED_PRECONDITION SEAMLESS_WALLET; a player
// account is created by his first stake; GetAccount shows what he has at
// stake (balance = held). Holds, settlements, the chemin de fer bank
// across coups and the limits work as in transfer mode: the escrow is
// still here.
//
// Debit before the hold. PlaceHold, a larger ResizeHold (the increase) and
// ChargeFee on a player account first debit the operator (seamless.go
// staked), serialised per request_id: the limits are checked (a refusal
// costs no debit); the debit is logged "pending" and in flight
// ("op-inflight") with transaction id "db-<request_id>-<attempt>" (the
// request id as is when it fits [A-Za-z0-9._:/-] and 96 bytes, else
// "h" and a digest), round = the coup id of the reference
// "tables/<T>/coups/<C>" (a fee without one: opwallet.FeeRound,
// "fee-<request_id>", a round table-svc records before it asks), reason
// bet (PlaceHold), bank (a raise) or fee; then the operator is called,
// never inside a bbolt transaction. Accepted: one transaction marks it
// applied, moves the amount external:operator -> player and takes the
// stake as in transfer mode (if that fails, e.g. the hold was resolved
// meanwhile, the debit's rollback is queued in the same transaction).
// Refused (*opwallet.Refusal): FAILED_PRECONDITION OPERATOR_REFUSED with
// ErrorInfo metadata "operator_code" (INSUFFICIENT_FUNDS for the
// operator's INSUFFICIENT_FUNDS), stored as the request's answer.
// Unknown outcome (any other error): the debit's rollback is queued and
// the request fails UNAVAILABLE OPERATOR_UNAVAILABLE, not stored: a retry
// with the same request_id makes a new debit (the next attempt). A debit
// still in flight at start (the service stopped during the call) is
// rolled back.
//
// Cancelled requests (cancel.go). A stake the table could not store is
// taken back by CancelPlaceHold under the PlaceHold's request_id, never
// by asking for the hold again (in seamless mode that would be a new
// debit, one per recovery pass while the operator is down, only to be
// rolled back). Under the request id's lock (s.keys, which PlaceHold,
// ResizeHold and ChargeFee take in both modes) it voids the hold named by
// "placed/<request_id>" (written by PlaceHold with its hold, in the
// requests bucket; for a hold placed by an older version, its stored
// PlaceHold answer, recognised by its request hash: legacyPlaced) as
// VoidHold does (seamless: the debit rolled back or
// the amount credited), and stores its answer under
// "cancel/<request_id>"; from then on a PlaceHold, ResizeHold or
// ChargeFee under that id fails FAILED_PRECONDITION REQUEST_CANCELLED
// before any debit or hold. It never calls the operator. A round where
// the cancelled request's debits staked nothing (refused or rolled back)
// ends at once (endCancelled: no retry of it can come), unless a debit
// of the round is in flight. A refused
// debit counts in its round (a round with only refusals ends cancelled
// after the idle wait below).
//
// Sweep out. Every ledger transaction (Service.commitTxn, before flush)
// leaves each player account with nothing available: what became
// available goes back to external:operator in the same transaction with
// an entry in the operator outbox ("op-outbox"): after a settlement one
// credit "payout" in the round of his hold in it; a voided or expired
// hold whose amount is exactly its debits, never settled, in a round
// without a credit to him: the rollback of each debit; anything else
// released by a hold (a void, an expiry, a resize down): a credit
// "bank_return" for a bank (a hold that stayed open through a
// settlement), "refund" for a stake. A rollback is never sent after a
// credit of the same round to the same player.
//
// Rounds. A hold belongs to the round of its first debit, for its whole
// life: a chemin de fer bank kept across coups stays in the round it was
// put up in (its raises are debited there, and it comes back there), so
// that no movement ever follows a round's end. A player's round ends when
// he has no hold left in it, with one round_end, queued after its
// credits and rollbacks: "completed" when a hold of it took part in a
// settlement (or was posted, or the round is a fee's), "cancelled" when
// all were voided or expired. A round where no stake stood (only debits
// refused, or rolled back because their outcome was unknown) ends
// cancelled only after a minute without a stake ("op-idle"; never while
// a debit of it is in flight), so that the table's retry of the stake
// under the same request id lands in the same round. A stake in a coup
// after his round of it ended opens round "<coup>.2" (and so on).
//
// Outbox relay (opoutbox.go). Entries are sent with exponential backoff
// from 100 ms doubling to 30 s, jittered, across restarts; an entry is
// removed when the operator answered (a duplicate answer is success).
// They wait for one another only within one player's round, where the
// operator's books need an order: a rollback once its debit's call is
// over; a credit after the round's rollbacks (none follows a credit) and
// never while a debit of the round is being called (the roundGate: the
// debit waits for a credit being sent, the credit for the debit); the
// round_end last, once nothing else of the round is queued, in flight or
// an open exception. Nothing else orders them: a refused or unanswered
// entry never holds back another round's, the same player's included.
// Metrics: chemmy_operator_outbox_depth{operator} (counted in the ledger
// when scraped), chemmy_operator_calls_total{operator,op,result},
// chemmy_operator_call_seconds{operator,op} (operator: whose wallet; its
// values are the configured operators, few, never from a request).
//
// Exceptions (opexceptions.go). A refusal of a credit, rollback or
// round_end is logged as an error, counted
// (chemmy_operator_outbox_refusals_total{operator,op}) and retried with the normal
// backoff; one for good (UNKNOWN_PLAYER, CURRENCY_MISMATCH,
// INVALID_REQUEST, TRANSACTION_ID_REUSED, TRANSACTION_ROLLED_BACK: the
// operator would refuse the same transaction the same way for ever), or
// the relayRefusalLimit-th (10) whatever its code, makes it an
// exception: out of the outbox, its transaction "refused", an
// opException open in "op-exceptions" (and "op-exceptions-open"),
// counted by chemmy_operator_exceptions_open{operator,kind} and in the report.
// INVALID_SIGNATURE (the shared secret) is retried like no answer.
// Operators resolve an exception: RetryOperatorException sends the same
// movement under a new id (<id>.r2, .r3...), SettleOperatorException
// closes it as settled outside chemmy with a reason; who, when and why
// are kept with it for ever, and logged. Nothing moves in the ledger
// either way. Open exceptions keep the file from migrating to transfer
// mode.
//
// Operator probe (probe.go). At start and then every
// Config.OperatorProbeInterval (30 s) the service asks every operator's
// wallet (the default operator's and each of the operators file's, all
// at once) for the balance of Config.OperatorProbePlayer ("chemmy-probe");
// balance is called for nothing else. Any answer signed with the shared
// secret, a 200 or a refusal such as 404 UNKNOWN_PLAYER, proves the URL
// and the secret: chemmy_operator_up{operator} is 1 and, for the default
// operator's wallet, the gRPC health service OperatorHealthService
// ("chemmy.wallet.operator") SERVING. An unsigned
// or badly signed answer, a signed INVALID_SIGNATURE refusal, a timeout,
// a transport error or a 5xx sets them to 0 and NOT_SERVING, counts
// chemmy_operator_probe_failures_total{operator,kind} (bad_signature, unsigned,
// clock_skew, signature_refused, timeout, unreachable, bad_answer) and
// logs an ERROR naming the likely cause (a wrong -operator-secret-file, a
// wrong -operator-url, clocks, the network) when the probe starts failing
// or fails another way, an INFO when it succeeds again. The server's
// readiness (/readyz, which follows its events and its store: app.Base.Ready;
// the health of "" and of the wallet service) does not follow the probe,
// by choice: while the operator is down stakes
// fail OPERATOR_UNAVAILABLE anyway, but settlements, voids and their
// credits must still reach this service to be queued safely in the
// outbox, and the wallet (one bbolt file) has no other replica to send
// them to; a readiness failure would take it out of its Kubernetes
// Service and lose exactly those. For the same reason one operator's
// wallet down takes no other operator down: it sets that operator's
// series only (and OperatorHealthService when he is the default
// operator); his stakes fail, the other operators play on. An operator
// no longer in the operators file loses his probe series. Alert on
// chemmy_operator_up == 0 (by operator).
//
// Every operator transaction is logged ("op-tx") with its kind, status
// (pending, applied, refused, rolled_back, acknowledged; a refused
// credit, rollback or round_end also its exception's state), player, round,
// table, amount, currency, times and the operator's transaction id, for
// GetOperatorReport (per operator and UTC day; opreport.go).
//
// # Storage (bbolt, schema version 1)
//
// Besides the kit's "meta" (schema), "requests" (idempotency records, with
// their index by age "requests-saved" and "requests-expiry") and "outbox"
// buckets:
//
//   - "wallet": key "currency" -> the currency code (ASCII). Written on the
//     first start, checked on every later start: a file never changes
//     currency. Key "mode" -> the wallet mode, "transfer" or "seamless"
//     (ASCII), written on the first start (or inferred for an older
//     file), checked on every start, changed only by MigrateMode.
//   - "mode-log": key = 8-byte big-endian sequence -> a ModeChange (JSON:
//     time, from, to, how, by, note): every mode the file was given.
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
//     chemmy.wallet.v1.Transfer whose transfer_id is a ULID; its sequence
//     field is the key (gapless from 1; older records lack the field).
//   - "statements": key = account id, 0x00, the transfer's 8-byte
//     sequence -> the account's balance after it (8 bytes): the index of
//     ListStatement. Written with the transfer; rebuilt from the log at
//     start on a file that has transfers but no index (files written
//     before it existed).
//   - "expiry": key = 8-byte big-endian expire time (Unix ns) then the
//     hold id -> empty: the open holds with a ttl, in expiry order.
//   - Seamless mode: "op-tx" (transaction id -> the logged operator
//     transaction, JSON), "op-day" ("YYYY-MM-DD" UTC creation day, then
//     an 8-byte sequence -> transaction id: the report's index),
//     "op-outbox" (8-byte sequence -> transaction id: credits, rollbacks
//     and round ends to send, in order), "op-inflight" (debit ids whose
//     call may be in flight), "op-attempts" (idempotency key -> 8-byte
//     debit attempt count), "op-holds" (open hold id -> its round, table,
//     debits, whether it was settled or is a bank; JSON), "op-rounds"
//     (account id, 0x00, round id -> the player's open holds in the
//     round, whether it completed, was credited or staked, since when it
//     is idle, whether and when it ended; JSON), "op-exceptions" (8-byte
//     sequence -> an exception: the refused transaction, cause, the
//     operator's code, its state and who resolved it, when, why; JSON;
//     kept for ever), "op-exceptions-open" (8-byte sequence ->
//     transaction id: the open ones), "op-idle" (8-byte Unix
//     ns since when a round without a stake waits, then the round key ->
//     empty), "op-ended" (8-byte Unix ns when a round ended, then the
//     round key -> empty: the retention's index; "op-ended-indexed" in
//     "wallet" once the rounds ended before it existed are indexed).
//   - Game-launch sessions (launch.go): "launch_sessions" (session id,
//     "ls-<ULID>" -> its record: player, currency, table, times, who
//     created and revoked it, why, the hex SHA-256 of its current token,
//     the request that made it; JSON; never the token), "launch_tokens"
//     (hex SHA-256 of a token -> session id), "launch_requests"
//     (CreateLaunchSession request_id -> session id: a retry's session)
//     and "launch_expiry" (8-byte Unix ns expire time, then the session
//     id -> empty: the retention's index; a session goes one request
//     retention after its expiry, with its token and request entries).
//     Seamless mode's "op-holds" and "op-rounds" records and the logged
//     operator transactions carry the session id ("session") of the
//     stake, sent as session_id.
//   - "limit_changes": account id 0x00 be64(unix ns) event id ->
//     chemmy.wallet.v1.LimitChange (protobuf): every SetPlayerLimits,
//     with who, when, the limits before and after and any override; its
//     event (player_limits_changed) goes to the outbox with it.
//   - "outbox" (kit): one message per transaction that records
//     transfers, in that transaction: a chemmy.events.v1.WalletEventBatch
//     of its transfers (one WalletEvent, transfer_recorded, each; the
//     fields they share once: wallet-svc/walletevents), subject
//     "chemmy.wallet.<first transfer_id>.v2" (transfer ids, not account
//     ids, because player ids may contain dots), message id = that
//     transfer id (docs/events.md, version 2). A limits change: one
//     WalletEvent alone on "chemmy.wallet.<event_id>.player_limits_changed".
//
// Idempotency records live in the kit's "requests" bucket (store.Lookup /
// store.Save): key "req/<request_id>" for Deposit, Withdraw, PlaceHold,
// VoidHold, PostHold, ExpireHolds and ChargeFee (one key space shared by
// these methods), "cancel/<request_id>" for CancelPlaceHold (with
// "placed/<request_id>", the hold a PlaceHold placed; both go after the
// retention as "req/..." does), "coup/<coup_id>" for SettleCoup, SettlePuntoBanco,
// SettleBanque and SettleOld. The stored hash is SHA-256 over the method name and
// store.Hash(request), so the same id with another request, or reused by
// another method, is refused with ALREADY_EXISTS REQUEST_ID_REUSED. The
// value is the marshalled response, returned as is to a retry. A request
// that fails with a reason (any status error from inside the transaction:
// INSUFFICIENT_FUNDS, HOLD_NOT_OPEN, ...) is stored too, under
// "fail/<key>", as a marshalled google.rpc.Status, in the same
// transaction that decided it; a retry returns that same error (AIP-155).
// So a player refused INSUFFICIENT_FUNDS who then deposits must retry with
// a NEW request_id: the old one fails the same way, by design. Requests
// refused by validation before the transaction store nothing (a retry is
// refused the same way anyway); internal errors store nothing (a retry is
// a new attempt).
//
// A coup id, unlike a request id, cannot be replaced by the client: it is
// the coup's, for the coup's life. So a settlement failure is stored under
// "fail/coup/<coup_id>" only when it is final, when no later change of the
// ledger can alter it: HOLD_NOT_FOUND, HOLD_NOT_OPEN, HOLD_EXPIRED,
// INVALID_ARGUMENT (a malformed settlement, e.g. a bet on the banker's own
// hold), INVALID_ACCOUNT, CURRENCY_MISMATCH. A failure that depends on
// amounts that may still change, INVALID_AMOUNT (a bet's amount differs
// from its hold's, as when the reply to a ResizeHold was lost; a bank hold
// of 0; an overflow), BETS_EXCEED_BANK (a raise in flight) or
// INSUFFICIENT_FUNDS (house:bank short), rolls back and stores nothing:
// the holds stay open (VoidHold works), and the table may send the coup
// again, as it was or corrected (another request under the same coup id
// is then accepted), once it has reconciled. Such a failure stored by an
// older version is dropped by the next settlement of that coup id.
//
// Retention (Config.RequestRetention, default 7 days, store.Sweep): the
// records of request ids ("req/...", "fail/req/...") are deleted in the
// background, a batch per transaction, once older than the retention; a
// request id sent again after that is a new request and applied again,
// so clients must not retry older requests (the table's saga must not
// leave a step unfinished that long). The records of coup ids
// ("coup/...", "fail/coup/...") are kept for ever: a coup is settled
// exactly once however late it is retried, and answers the same.
// Seamless mode's player round records ("op-rounds") go after the same
// retention once their round ended (opretention.go, on the service
// clock; a round ended by an older version counts from the first start
// with the index); a round still open, or not ended, is kept. A stake
// in the same coup after that would reuse the round id (a coup lasts
// minutes, the retention days). The operator transactions ("op-tx") are
// the report's and are kept.
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
// another request (the same scheme as bbolt's DB.Batch, without its timer:
// store.Committer, the one committer of the file, which the outbox relay's
// removals share; its counters are the chemmy_store_*{db="wallet"} metrics).
//
// # Audit
//
// AuditLedger replays the whole transfer log in one read transaction and
// checks: gapless sequences, known accounts, one currency per transfer,
// stored balance = replayed balance, the statement index's running
// balances, held = sum of the open holds and 0 <= held <= balance, no
// negative balance but external funding, and per currency debits =
// credits and the balances summing to 0.
package walletsvc
