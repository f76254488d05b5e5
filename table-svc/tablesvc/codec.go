package tablesvc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/fxamacker/cbor/v2"
)

// The table record as stored (bucket "tables"). A record written today
// is recordBinary, one version byte, then a CBOR (RFC 8949) array of two
// items: the shell's fields (a map keyed by the names of the record's
// JSON fields) and the state of the table's game (its package's State, a
// map keyed by its JSON names). A record written before is JSON (its
// first byte '{'): it still reads, and is written in the binary encoding
// at the table's next save. CBOR keeps the JSON record's names and
// omissions (the fields' json tags), so both encodings hold the same
// record: about half the bytes, and a fraction of JSON's decoding work.

// recordBinary is the version byte of a record in the binary encoding
// (a JSON record starts with '{' or white space).
const recordBinary byte = 0x01

var (
	// recordEnc writes times as RFC 3339 with nanoseconds (as JSON did:
	// nothing is rounded); recordDec reads them, and reads a record's
	// integers into the record's integer fields as JSON did.
	recordEnc, recordDec = recordModes()
	// recordBufs are the buffers records are encoded into (encodeTable,
	// releaseRecord).
	recordBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

func recordModes() (cbor.UserBufferEncMode, cbor.DecMode) {
	enc, err := cbor.EncOptions{Time: cbor.TimeRFC3339Nano}.UserBufferEncMode()
	if err != nil {
		panic(err) // constant options
	}
	dec, err := cbor.DecOptions{
		MaxArrayElements: 1 << 20, MaxMapPairs: 1 << 20, MaxNestedLevels: 64,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return enc, dec
}

// plainTable is the shell's fields of the record, without the JSON
// encoding of table (gamecore.go).
type plainTable table

// binaryRecord is the record in the binary encoding, as written.
type binaryRecord struct {
	_     struct{} `cbor:",toarray"`
	Shell *plainTable
	Game  any // a pointer to the game's State
}

// binaryRecordIn is the record in the binary encoding, as read: the
// game's state is read by the adapter of the record's variant.
type binaryRecordIn struct {
	_     struct{} `cbor:",toarray"`
	Shell *plainTable
	Game  rawItem
}

// rawItem is an item of a CBOR record as it is in the record (not
// copied: valid while the record's bytes are).
type rawItem []byte

func (r *rawItem) UnmarshalCBOR(b []byte) error { *r = b; return nil }

// encodeTable is t's record in the binary encoding, in a pooled buffer:
// once the transaction that stores it is over, releaseRecord gives the
// buffer back (bbolt keeps the value until then).
func encodeTable(t *table) ([]byte, error) {
	buf := recordBufs.Get().(*bytes.Buffer)
	buf.Reset()
	buf.WriteByte(recordBinary)
	if err := recordEnc.MarshalToBuffer(binaryRecord{Shell: (*plainTable)(t), Game: t.game}, buf); err != nil {
		recordBufs.Put(buf)
		return nil, fmt.Errorf("table %s: encode the record: %w", t.ID, err)
	}
	return buf.Bytes(), nil
}

// releaseRecord gives back the buffer of v, a record from encodeTable
// that nothing uses any more. Records larger than 256 KiB are left to the
// garbage collector.
func releaseRecord(v []byte) {
	if cap(v) == 0 || cap(v) > 256<<10 {
		return
	}
	recordBufs.Put(bytes.NewBuffer(v[:0]))
}

// decodeTable reads a stored record into t: the binary encoding (through
// table's UnmarshalCBOR, gamecore.go), or JSON as written before it
// (UnmarshalJSON).
func decodeTable(b []byte, t *table) error {
	if len(b) == 0 || b[0] != recordBinary {
		return json.Unmarshal(b, t)
	}
	if err := recordDec.Unmarshal(b[1:], t); err != nil {
		return fmt.Errorf("table record: %w", err)
	}
	return nil
}

// decodeShell reads into shell (a struct with some of the record's JSON
// fields) those fields of the stored record b, in either encoding; the
// game's state is skipped.
func decodeShell[T any](b []byte, shell *T) error {
	if len(b) == 0 || b[0] != recordBinary {
		return json.Unmarshal(b, shell)
	}
	in := shellRecordIn[T]{Shell: shell}
	return recordDec.Unmarshal(b[1:], &in)
}

// shellRecordIn is the record in the binary encoding read for some of the
// shell's fields (T's).
type shellRecordIn[T any] struct {
	_     struct{} `cbor:",toarray"`
	Shell *T
	Game  struct{}
}

// releaseRecords gives back the buffers of records vs (releaseRecord);
// nil ones are skipped.
func releaseRecords(vs [][]byte) {
	for _, v := range vs {
		releaseRecord(v)
	}
}
