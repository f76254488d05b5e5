// Package crosscheck holds only a test: the rules engine the services
// call (services/rules) against the oracle (cmd/sim/oracle), over every
// cell of the tableau, every punto banco deal and grids of settlements,
// roundings and fees. The simulation meets a rare cell of the rules only
// when its seeds deal it; this test meets every one. It is apart from the
// oracle, which must not import the engine (oracle.TestIndependent).
package crosscheck
