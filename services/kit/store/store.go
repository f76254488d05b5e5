// Package store opens a service's bbolt file and keeps idempotency records.
//
// Layout shared by every service: bucket "meta" holds "schema" (uint32,
// big-endian), checked at open; bucket "requests" maps an idempotency key
// to a record of the request's hash and its response. The service's own
// buckets are documented in the service.
//
// # Retention of idempotency records
//
// Save also indexes a record by the time it was first saved: bucket
// "requests-saved" maps the key to that time (8 bytes, big-endian Unix
// nanoseconds) and bucket "requests-expiry" holds that time followed by
// the key (empty value), so the oldest records come first. A service that
// runs Sweep (see Retention; DefaultRetention is 7 days) deletes the
// records first saved more than the retention ago, a small batch per
// write transaction. A record lives at least the retention; a request id
// retried after its record was deleted is a new request, applied again:
// clients must not retry a request older than the retention. Keys a
// service must keep for ever (Retention.Forever) are never deleted, only
// dropped from the index; records it still needs for now
// (Retention.Extend, e.g. while what they are about is open) are indexed
// again as saved at the sweep. Records saved before the index existed (no
// "requests-saved" entry) are indexed by the first sweep as if saved then
// (meta "requests-indexed" records the progress, 0x01 once done). A
// service that never sweeps keeps every record, as before.
package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"
)

var (
	bucketMeta     = []byte("meta")
	bucketRequests = []byte("requests")
	bucketSaved    = []byte("requests-saved")
	bucketExpiry   = []byte("requests-expiry")
	keySchema      = []byte("schema")
	keyIndexed     = []byte("requests-indexed")
)

// ErrSchemaMismatch is returned by Open when the file holds another schema
// version than the service runs.
var ErrSchemaMismatch = errors.New("store: schema version mismatch")

// ErrRequestReused is returned by Lookup when a key was stored with a
// different request hash.
var ErrRequestReused = errors.New("store: idempotency key reused with a different request")

// Open opens (creating if needed) the bbolt file at path, creates the
// meta and requests buckets and the given ones, and checks that the stored
// schema version is schema (writing it on a new file).
func Open(path string, schema uint32, buckets ...[]byte) (*bolt.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range append([][]byte{bucketMeta, bucketRequests, bucketSaved, bucketExpiry}, buckets...) {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		want := binary.BigEndian.AppendUint32(nil, schema)
		got := meta.Get(keySchema)
		if got == nil {
			// A new file: every record it will hold is indexed by Save.
			if err := meta.Put(keyIndexed, indexDone); err != nil {
				return err
			}
			return meta.Put(keySchema, want)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%w: file has %x, service runs %d", ErrSchemaMismatch, got, schema)
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	track(db, path)
	return db, nil
}

// Hash returns the SHA-256 of m's deterministic wire form: the
// fingerprint an idempotency record compares.
func Hash(m proto.Message) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	h := sha256.Sum256(b)
	return h[:]
}

// Lookup returns the response stored under key. found is false when there
// is none. When the record was stored for a request of another hash it
// returns ErrRequestReused.
func Lookup(tx *bolt.Tx, key string, hash []byte) (resp []byte, found bool, err error) {
	v := tx.Bucket(bucketRequests).Get([]byte(key))
	if v == nil {
		return nil, false, nil
	}
	if len(v) < sha256.Size || !bytes.Equal(v[:sha256.Size], hash) {
		return nil, true, ErrRequestReused
	}
	return bytes.Clone(v[sha256.Size:]), true, nil
}

// Get returns the record stored under key whatever its hash: the request
// hash and the response. found is false when there is none.
func Get(tx *bolt.Tx, key string) (hash, resp []byte, found bool) {
	v := tx.Bucket(bucketRequests).Get([]byte(key))
	if v == nil {
		return nil, nil, false
	}
	if len(v) < sha256.Size {
		return bytes.Clone(v), nil, true
	}
	return bytes.Clone(v[:sha256.Size]), bytes.Clone(v[sha256.Size:]), true
}

// Save stores resp under key with the request's hash, in tx (read-write).
// The record's retention runs from the first Save of key: saving it again
// replaces the response and keeps that time.
func Save(tx *bolt.Tx, key string, hash, resp []byte) error {
	v := make([]byte, 0, len(hash)+len(resp))
	v = append(append(v, hash...), resp...)
	if err := tx.Bucket(bucketRequests).Put([]byte(key), v); err != nil {
		return err
	}
	return index(tx, []byte(key), now())
}

// Delete removes the record of key and its index entries, in tx
// (read-write). Deleting a missing key does nothing.
func Delete(tx *bolt.Tx, key string) error {
	k := []byte(key)
	if err := tx.Bucket(bucketRequests).Delete(k); err != nil {
		return err
	}
	return unindex(tx, k)
}
