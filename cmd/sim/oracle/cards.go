package oracle

import (
	"fmt"
	"strings"
)

// Card codes are a rank and a suit: "A", "2".."9", "T" (or "10"), "J",
// "Q", "K", then "C", "D", "H" or "S" ("7H", "TD", "AS").

// rank is the rank part of a card code, "" when the code is not a card.
func rank(code string) string {
	if len(code) < 2 {
		return ""
	}
	r, suit := code[:len(code)-1], code[len(code)-1:]
	if !strings.Contains("CDHS", suit) {
		return ""
	}
	if r == "10" {
		r = "T"
	}
	if len(r) != 1 || !strings.Contains("A23456789TJQK", r) {
		return ""
	}
	return r
}

// Value is a card's baccarat value (CARD-VALUE): ten and the court
// cards 0, ace 1, the others their face.
func Value(code string) (int, error) {
	switch r := rank(code); r {
	case "":
		return 0, fmt.Errorf("oracle: %q is not a card", code)
	case "A":
		return 1, nil
	case "T", "J", "Q", "K":
		return 0, nil
	default:
		return int(r[0] - '0'), nil
	}
}

// Total is a hand's total (HAND-TOTAL): the sum of its values modulo 10.
func Total(codes []string) (int, error) {
	sum := 0
	for _, c := range codes {
		v, err := Value(c)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum % 10, nil
}

// Pair reports whether a hand's first two cards have the same rank (the
// punto banco pair bets: a king and a queen are no pair).
func Pair(codes []string) bool {
	return len(codes) >= 2 && rank(codes[0]) != "" && rank(codes[0]) == rank(codes[1])
}

// Outcome is a coup's result from the bank's side.
type Outcome int

// The outcomes.
const (
	BankWins Outcome = iota + 1
	BankLoses
	StandOff
)

func (o Outcome) String() string {
	switch o {
	case BankWins:
		return "bank wins"
	case BankLoses:
		return "bank loses"
	case StandOff:
		return "stand-off"
	}
	return "no outcome"
}

// compare is CF-RESULT: the total nearer 9 wins; equal totals stand off
// (CF-STANDOFF).
func compare(player, banker int) Outcome {
	switch {
	case banker > player:
		return BankWins
	case player > banker:
		return BankLoses
	}
	return StandOff
}
