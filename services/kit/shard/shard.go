// Package shard names the table-svc shard that owns a table or a shoe.
//
// A sharded deployment runs several table-svc processes (shards), each
// with its own bbolt file and its own shoe-svc; the wallet stays one. A
// shard puts its number into every id it makes: the id of a table or shoe
// made on shard k is "s<k>-" followed by a ULID, e.g.
// "s2-01JD0Q7Z8V9W5M3K2H1G0F9E8D". The gateway reads the shard from the id
// and routes every call on that table or shoe there, so a table never
// moves and adding a shard moves nothing: the new shard only gets new
// tables. An id without the prefix (a deployment of one shard) belongs to
// shard 0.
package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// Max bounds the shard numbers: 0..Max-1.
const Max = 1024

// Parse reads a shard from a flag value: a number ("2"), or a name ending
// in "-<number>" such as a StatefulSet pod's name ("table-svc-2"). The
// empty string means not sharded (ok false, no error).
func Parse(s string) (k int, ok bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	digits := s
	if i := strings.LastIndexByte(s, '-'); i > 0 {
		digits = s[i+1:]
	}
	k, err = strconv.Atoi(digits)
	if err != nil || k < 0 || k >= Max || strconv.Itoa(k) != digits {
		return 0, false, fmt.Errorf("shard %q: want a number 0..%d or a name ending in -<number>", s, Max-1)
	}
	return k, true, nil
}

// Prefix is the prefix of the ids made on shard k: "s<k>-".
func Prefix(k int) string { return "s" + strconv.Itoa(k) + "-" }

// FlagPrefix is Prefix of a flag value read by Parse; "" when the value
// is empty (not sharded).
func FlagPrefix(s string) (string, error) {
	k, ok, err := Parse(s)
	if err != nil || !ok {
		return "", err
	}
	return Prefix(k), nil
}

// Of returns the shard an id was made on: k for "s<k>-...", 0 for an id
// without a shard prefix. ok is false for a malformed prefix ("s-x",
// "s01-x", a number of Max or more), which names no shard.
func Of(id string) (k int, ok bool) {
	rest, found := strings.CutPrefix(id, "s")
	if !found {
		return 0, true
	}
	digits, _, found := strings.Cut(rest, "-")
	if !found {
		return 0, true // "s..." without a dash: an unsharded id that starts with s
	}
	k, err := strconv.Atoi(digits)
	if err != nil || k < 0 || k >= Max || strconv.Itoa(k) != digits {
		return 0, false
	}
	return k, true
}
