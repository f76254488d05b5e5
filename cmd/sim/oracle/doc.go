// Package oracle is the simulation's own reading of the game rules,
// written again from docs/RULES.md (rule IDs cited at each branch), the
// readings the walk-throughs (docs/walkthroughs) state where RULES.md leaves a choice, and the
// house rules' contract in proto/chemmy/table/v1/table.proto. It does not
// import the code it judges: not services/rules, services/odds,
// table-svc, wallet-svc or shoe-svc (TestIndependent checks it), and
// nothing of the proto types: cards are their codes ("7H", "TD"), spots
// and sides plain strings, amounts int64 minor units.
//
// It says, for all four games:
//
//   - chemin de fer (CF-*): who draws on what (CF-PLAYER-DRAW,
//     CF-BANKER-DRAW with its two option house rules, CF-BANCO-FREEDOM),
//     naturals, the outcome, and the settlement of a coup (CF-BANK-WINS
//     commission in basis points with commission_rounding, first coup
//     exempt, CF-BANK-LOSES, CF-STANDOFF, CF-UNCOVERED, CF-BANK-SIZE), and
//     the hourly seat fee;
//   - punto banco (PB-*): the fixed tableau, pairs, the bank's natural,
//     and every bet against the house bank (bank, player, tie, bank
//     natural, pairs; commission or the no-commission game);
//   - baccarat banque (BQ-*): three hands, the banker free on his own,
//     each hand's outcome, the à cheval bet, the auction fee and the
//     commission on the banker's net winnings;
//   - the old game (OLD-*): aces at eleven, ranks by last digit, who may
//     draw, naturals, and the settlement with the three-way split.
//
// Small and plain on purpose: where the services' engine is clever
// (overflow-free splits, state machines), the oracle is direct, so that
// the two are unlikely to share a mistake.
package oracle
