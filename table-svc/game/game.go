// Package game is the contract between a table's game core and the table
// service's shell.
//
// A core is pure: a table state and the function
//
//	Apply(state, Input) -> (new state, events) or *Error
//
// with no I/O, no clock, no randomness and no gRPC types inside. Time and
// fresh ids come in with every Input; cards, holds and settlements come in
// as commands carrying the results of the effects the core asked for.
//
// Effects are what the shell must do for the core: place a hold before a
// bet exists (Hold, asked synchronously by the command that needs it),
// deal a card, settle a coup, release holds, open a new shoe. Apart from
// Hold, a core does not return effects: the effect due is a function of
// the stored state (the core's Pending), so a shell that crashed simply
// asks again after restart and repeats the same idempotent call, with the
// same request id (derived from the state: "<coup_id>/card/<n>", the coup
// id for a settlement). The shell stores state, events and the request's
// idempotency record in one transaction and feeds each effect's result
// back as a command.
//
// Deadlines (a betting window, a pause) are state too: the shell reads
// the core's Deadline and applies a Tick when it has passed.
//
// # The contract in Go
//
// Each core is a package (chemindefer, puntobanco, banque, oldbaccarat)
// with a State S and its functions, gathered as the interface Core:
//
//	Apply(s S, in Input) (O, error)   // O is Outcome[S] or embeds it
//	Pending(s S) Effect               // the effect due, nil when none
//	Deadline(s S) time.Time           // when a Tick is due, zero: never
//	Restart(s S, now time.Time) (S, bool)
//
// and what each viewer may see (view.go): a Viewer is a player by his
// id, the staff, an auditor or an anonymous viewer; a Hand names a hand
// of a coup as the events do.
//
//	Sees(s S, coupID string, v Viewer, h Hand, i int) bool  // card i of h, face up for v
//	Hidden(s S, coupID string, v Viewer) [13]int            // by rank, the cards v does not see
//	Shown(s S, coupID string, v Viewer, cd *eventsv1.CardDealt) (code string, total int, ok bool)
//	HolderOf(s S, coupID string, cd *eventsv1.CardDealt) string
//	FaceDown(cd *eventsv1.CardDealt) bool                   // published without its card
//
// A viewer's events are the published ones made his by Personal (a
// face-down card he may see given back with its hand's total).
//
// The package exports them as free functions (what the shell calls) and
// as one value, Game, of type Core[State, Outcome]; the assignment to
// Game checks at compile time that the package keeps the contract. An
// Outcome[S] is the new state and its events, or the Hold the command
// waits for (the state then unchanged); chemin de fer's Outcome embeds it
// and adds the bank raise a RaiseBank waits for. Result builds an Outcome
// from a command applied to a copy of the state, the tail every core's
// Apply shares.
//
// Every refusal is an *Error, built by Refuse or as an Error literal, its
// Reason a name of chemmy.table.v1.ErrorReason without the
// "ERROR_REASON_" prefix, written as a string literal or a string
// constant (a core's Reason... constants, named after their values).
// TestCoreReasons reads the sources of this package and of every core for
// each reason they can return and fails on one the enum does not have,
// or on a reason it cannot read.
package game

import (
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

// Input is one command with what a pure core cannot make itself: the time
// (UTC) and a fresh, unique, time-ordered id (a ULID) the core may use to
// name a new coup.
type Input struct {
	Now   time.Time
	NewID string
	Cmd   Command
}

// After is the time ms milliseconds after the input's.
func (in Input) After(ms int32) time.Time { return in.Now.Add(time.Duration(ms) * time.Millisecond) }

// Restarted is deadline given its full length ms again from now, when
// that is later: the restart of a service must not cut anybody's time (a
// player is never timed out for the time the service was down). It
// reports whether the deadline moved; a zero deadline stays.
func Restarted(deadline, now time.Time, ms int32) (time.Time, bool) {
	full := now.Add(time.Duration(ms) * time.Millisecond).UTC()
	if deadline.IsZero() || !deadline.Before(full) {
		return deadline, false
	}
	return full, true
}

// MaxAmount bounds every amount a core takes (a bet, a stake, a bid), in
// minor units: 2^50, beyond any table, so that a payout at up to 1000 to
// 1 stays within int64.
const MaxAmount = 1 << 50

// Changes collects what one command does in a core: its events, and the
// hold it waits for (when set, the command changed nothing yet).
type Changes struct {
	Events []Event
	Hold   *Hold
}

// Emit adds an event of the coup coupID ("" for a table's event).
func (c *Changes) Emit(coupID string, payload proto.Message) {
	c.Events = append(c.Events, Event{CoupID: coupID, Payload: payload})
}

// Outcome is what a core's Apply made of a command, S being the core's
// state: State, the new state, and Events, what happened, in order; or,
// when Hold is set, the hold the command waits for (the shell places it
// and applies the command again with its id, HoldCommand): State is then
// the state the command was applied to, unchanged, and Events empty. A
// refused command has no Outcome: Apply returns an *Error.
type Outcome[S any] struct {
	State  S
	Events []Event
	Hold   *Hold
}

// Base is o: it makes Outcome[S], and a core's outcome that embeds it,
// an Outcomes[S].
func (o Outcome[S]) Base() Outcome[S] { return o }

// Outcomes are the outcomes a Core's Apply may return: Outcome[S], or a
// struct that embeds it and adds what only that game's commands wait for
// (chemin de fer's bank raise). Base is the embedded Outcome[S].
type Outcomes[S any] interface{ Base() Outcome[S] }

// Result is the Outcome of a command a core applied to after, its own
// deep copy of before, with the changes c; err is the command's refusal.
// Refused (err != nil): the zero Outcome and err, nothing happened.
// Waiting for c.Hold: before, unchanged, with the hold and no events.
// Otherwise: after and c.Events.
func Result[S any](before, after S, c Changes, err error) (Outcome[S], error) {
	switch {
	case err != nil:
		return Outcome[S]{}, err
	case c.Hold != nil:
		return Outcome[S]{State: before, Hold: c.Hold}, nil
	}
	return Outcome[S]{State: after, Events: c.Events}, nil
}

// Core is the contract of a game core as one value: S is its state, O the
// outcome of its Apply (Outcome[S], or the core's own that embeds it).
// Each core package exports one, Game, whose methods are the package's
// free functions of the same names.
type Core[S any, O Outcomes[S]] interface {
	// Apply applies in.Cmd to s; s is not changed. On error (an *Error:
	// Code, Reason, Msg) nothing happened.
	Apply(s S, in Input) (O, error)
	// Pending is the effect the shell must carry out next, nil when none.
	// Its request ids derive from s: asked again, it is the same.
	Pending(s S) Effect
	// Deadline is when the core wants a Tick (UTC); zero when it waits
	// for nobody.
	Deadline(s S) time.Time
	// Restart gives the time limit in progress its full length again
	// from now (a restart of the service: nobody is timed out for the
	// time it was down); it reports whether the deadline moved.
	Restart(s S, now time.Time) (S, bool)

	// What each viewer may see (view.go; SHOE-FACE). The coup coupID is
	// the coup in play or the last one; for a coup, hand or card s does
	// not hold, a card is not seen, nothing is hidden or shown and the
	// holder is "".

	// Sees reports whether v may see card i (from 0, in deal order) of
	// hand h of coup coupID: what a view of the table shows face up.
	Sees(s S, coupID string, v Viewer, h Hand, i int) bool
	// Hidden counts by rank, ace first, the cards of coup coupID that v
	// does not see: what the odds given to v count as still in the shoe.
	Hidden(s S, coupID string, v Viewer) [13]int
	// Shown is the card of cd, a card_dealt of coup coupID published face
	// down, that v may see in the events: its code and the total of its
	// hand up to it (the game's count); ok false when v may not.
	Shown(s S, coupID string, v Viewer, cd *eventsv1.CardDealt) (code string, total int, ok bool)
	// HolderOf is the player holding the hand of cd, a card_dealt of coup
	// coupID; "" when nobody does or s no longer knows.
	HolderOf(s S, coupID string, cd *eventsv1.CardDealt) string
	// FaceDown reports whether the card of cd is dealt face down: the
	// events publish it without rank, suit or code.
	FaceDown(cd *eventsv1.CardDealt) bool
}

// Command is an input of a core: a player's or the staff's action, a tick
// of the clock, or the result of an effect. Name is its name in logs.
type Command interface{ CommandName() string }

// Event is what a core says happened: a payload of chemmy.events.v1 (the
// published contract) and the coup it belongs to ("" for table events).
// The shell numbers, stamps and publishes it.
type Event struct {
	CoupID  string
	Payload proto.Message
}

// Effect is work a core asks the shell to do. Name is its name in logs.
type Effect interface{ EffectName() string }

// Hold asks for money to be held (escrowed) at the wallet for a player
// before the command that needs it can be applied: the shell places the
// hold and applies the command again with the hold's id. The hold's
// wallet request id and reference are the shell's: it derives them from
// the request (its idempotency key) and the table, which a core does not
// know. Amount in minor units, > 0.
type Hold struct {
	PlayerID string
	Amount   int64
	// Bank: the hold is a bank or a bid for the bank, not a bet (the
	// wallet tells an operator's wallet which, in seamless mode).
	Bank bool
}

// HoldCommand is a command that may wait for a Hold: WithHold returns the
// same command carrying the hold's id, which the shell applies once the
// hold is placed.
type HoldCommand interface {
	Command
	WithHold(holdID string) Command
}

// VoidHolds asks for holds to be released (bets returned); the shell
// applies HoldsVoided when all are.
type VoidHolds struct{ HoldIDs []string }

// DealCard asks the shoe for the coup's next card, for hand ("player" or
// "banker"); RequestID makes the deal idempotent. The shell applies
// CardDealt with the card.
type DealCard struct {
	RequestID string
	CoupID    string
	Hand      string
	// Then are the cards the core will ask for next, in order, whatever
	// this card is (a coup's opening cards): the shell may deal them in
	// the same call and give each when it is asked for.
	Then []DealCard
	// ThirdCards, with Then, are the coup's possible third cards after
	// the opening (their Hand empty: the tableau's) and Tableau the rules
	// that decide them: the shell may deal in the same call those the
	// tableau forces, stopping at the first option or a natural, and give
	// each when the core asks for it (it asks for exactly those, by the
	// same tableau). Empty: none asked ahead.
	ThirdCards []DealCard
	Tableau    Tableau
}

// Tableau names the third-card rules of a DealCard's ThirdCards:
// chemin de fer's (CF-PLAYER-DRAW, CF-BANKER-DRAW, with the banker's
// option cells of the house rules) or punto banco's (PB-TABLEAU, no
// option).
type Tableau struct {
	PuntoBanco                         bool
	BankerOption3vs9, BankerOption5vs4 bool
}

// Following are the DealCard of a coup's cards from the n-th on, one per
// hand given, with the request ids "<coup_id>/card/<n>": the Then of a
// coup's opening card.
func Following(coupID string, n int, hands ...string) []DealCard {
	out := make([]DealCard, len(hands))
	for i, h := range hands {
		out[i] = DealCard{RequestID: coupID + "/card/" + strconv.Itoa(n+i), CoupID: coupID, Hand: h}
	}
	return out
}

// NewShoe asks the shell to close the table's shoe and open the next one;
// the shell applies ShoeOpened.
type NewShoe struct{}

// CloseShoe asks the shell to close the shoe of a closed table; the shell
// applies ShoeClosed.
type CloseShoe struct{}

// EffectName implements Effect.
func (Hold) EffectName() string      { return "hold" }
func (VoidHolds) EffectName() string { return "void_holds" }
func (DealCard) EffectName() string  { return "deal_card" }

// OrderEffect is an effect that reads the shoe's order: a deal, or a
// game's own (the old game's move of top cards to the bottom). The shell
// has the shoe's seeds in before the first of a shoe.
type OrderEffect interface {
	Effect
	ReadsOrder()
}

// ReadsOrder implements OrderEffect.
func (DealCard) ReadsOrder()         {}
func (NewShoe) EffectName() string   { return "new_shoe" }
func (CloseShoe) EffectName() string { return "close_shoe" }

// Commands every core understands: the results of the shared effects and
// the clock.
type (
	// Tick tells the core that time has passed (Input.Now).
	Tick struct{}
	// CardDealt is the card a DealCard asked for: its code ("7H", "TD")
	// and whether the cut card came out with it (the last coup of the
	// shoe, SHOE-CUT-CARD).
	CardDealt struct {
		Code       string
		CutCardOut bool
	}
	// HoldsVoided: the holds of VoidHolds are released.
	HoldsVoided struct{}
	// ShoeOpened: the next shoe is in play. Abandoned: the shell replaced
	// a shoe before its first card because a player withheld his seed
	// (the table's seed protocol): no new shoe was due, and the coup
	// waiting for its first card goes on with this one.
	ShoeOpened struct {
		ShoeID    string
		Number    int32
		Abandoned bool
	}
	// ShoeClosed: the shoe of a closed table is closed.
	ShoeClosed struct{}
)

// Voiding is a command that voids a coup (every bet returned): a
// croupier's or the shell's interrupt. VoidedCoup is the coup it names.
// The shell asks the wallet first whether that coup is settled there (a
// settlement made and not yet stored, by a shell stopped in between): a
// settled coup is finished, never voided.
type Voiding interface {
	Command
	VoidedCoup() string
}

// CommandName implements Command.
func (Tick) CommandName() string        { return "tick" }
func (CardDealt) CommandName() string   { return "card_dealt" }
func (HoldsVoided) CommandName() string { return "holds_voided" }
func (ShoeOpened) CommandName() string  { return "shoe_opened" }
func (ShoeClosed) CommandName() string  { return "shoe_closed" }

// Code is the class of a refused command; the shell maps it to a gRPC code.
type Code int8

// The classes of refusal.
const (
	InvalidArgument    Code = iota + 1 // the command itself is wrong
	FailedPrecondition                 // not now: the table's state forbids it
	NotFound                           // it names something the table does not have
	AlreadyExists                      // it repeats something done
	ResourceExhausted                  // a limit is reached (seats, house limit)
	PermissionDenied                   // not this caller's to do
)

// Error is a refused command: nothing changed. Reason is the ErrorInfo
// reason the caller sees (chemmy.table.v1.ErrorReason without its prefix,
// checked by TestCoreReasons); Msg says why, for people.
type Error struct {
	Code   Code
	Reason string
	Msg    string
}

func (e *Error) Error() string { return e.Reason + ": " + e.Msg }

// Refuse returns an *Error.
func Refuse(code Code, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Msg: fmt.Sprintf(format, args...)}
}
