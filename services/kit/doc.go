// Package kit is the platform kit shared by chemmy's services: the gRPC
// server bootstrap (grpcx), error statuses with reasons (errs), caller
// identity and roles (auth), bbolt helpers with idempotency records
// (store) and the event outbox with its NATS relay (outbox).
//
// Nothing here knows the game: the rules live in package rules.
package kit
