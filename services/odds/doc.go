// Package odds computes the exact odds of the baccarat family from a shoe
// composition: the probability of every outcome and the expected value of
// every bet of punto banco (PB-*), baccarat banque (BQ-*, BanqueModel) and
// the old game (OLD-*, OldModel), the outcome odds of chemin de fer under
// any strategy (CF-*), the croupier's advice at an option cell of a coup in
// progress (chemin de fer: Advise; baccarat banque, a table's player on 5
// or the banker: AdviseBanque, BanqueAdviceModel), and the equilibrium of
// the chemin de fer game.
//
// Everything is exact enumeration in integers: a shoe is reduced to counts
// of card VALUES (0..9, CARD-VALUE), every ordered deal of card values is
// weighted by the falling product of the counts it uses, and every result
// is an integer count or a big.Rat. Nothing is sampled and no float is
// used for a result; floats appear only as a view (Float methods).
//
// Weights are ordered deals of the most cards a coup can use (six for
// punto banco, chemin de fer and the old game, nine for banque): a coup
// that uses k cards fewer is counted once for every ordering of the unused
// positions, so the punto banco counts of a full 8-deck shoe sum to
// 416*415*414*413*412*411.
//
// The package never does I/O, reads the clock or uses randomness.
package odds
