package walletsvc

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/chemmy/chemmy/services/kit/store"
)

// Wallet modes (doc.go "Wallet mode"): a ledger file records the mode it
// was first started in, and a start in the other mode is refused.
const (
	// ModeTransfer: the players' money is in this ledger (Deposit,
	// Withdraw); Config.Operator is nil.
	ModeTransfer = "transfer"
	// ModeSeamless: the players' money is in the operator's wallet;
	// Config.Operator is set.
	ModeSeamless = "seamless"
)

var (
	// keyMode, in the "wallet" bucket: the ledger file's wallet mode
	// (ModeTransfer or ModeSeamless, ASCII).
	keyMode = []byte("mode")
	// bucketModeLog: 8-byte big-endian sequence -> a ModeChange (JSON),
	// every mode the file was given: at its first start, when an older
	// file's mode was inferred, and by each MigrateMode.
	bucketModeLog = []byte("mode-log")
)

// How a ModeChange came about.
const (
	ModeHowFirstStart = "first start"
	ModeHowInferred   = "inferred"
	ModeHowMigrate    = "migrate"
)

// ModeChange is one entry of a ledger file's mode log.
type ModeChange struct {
	Seq  uint64    `json:"-"`
	Time time.Time `json:"time"`
	// From is the mode before (empty: none was recorded).
	From string `json:"from,omitempty"`
	To   string `json:"to"`
	// How: ModeHowFirstStart, ModeHowInferred (a file written before
	// the mode was recorded; Note says from what) or ModeHowMigrate.
	How string `json:"how"`
	// By: who (MigrateMode's caller, e.g. user@host) or what (the
	// service at its start).
	By   string `json:"by,omitempty"`
	Note string `json:"note,omitempty"`
}

// modeOf is the mode of tx's ledger: the recorded one; for a file
// written before the mode was recorded, the one its contents show
// (inferred true, with why): seamless when it holds operator
// transactions, transfer when it holds transfers, holds or player
// accounts; "" for a new file (nothing in it but the system accounts).
func modeOf(tx *bolt.Tx) (mode string, inferred bool, why string) {
	if w := tx.Bucket(bucketWallet); w != nil {
		if m := w.Get(keyMode); m != nil {
			return string(m), false, ""
		}
	}
	if nonEmpty(tx, bucketOpTx) {
		return ModeSeamless, true, "an older file with operator transactions"
	}
	if nonEmpty(tx, bucketTransfers) || nonEmpty(tx, bucketHolds) {
		return ModeTransfer, true, "an older file with transfers and no operator transaction"
	}
	if a := tx.Bucket(bucketAccounts); a != nil {
		if k, _ := a.Cursor().Seek([]byte(playerPrefix)); k != nil && strings.HasPrefix(string(k), playerPrefix) {
			return ModeTransfer, true, "an older file with player accounts and no operator transaction"
		}
	}
	return "", false, ""
}

func nonEmpty(tx *bolt.Tx, bucket []byte) bool {
	b := tx.Bucket(bucket)
	if b == nil {
		return false
	}
	k, _ := b.Cursor().First()
	return k != nil
}

// modeText says where the players' money is in mode.
func modeText(mode string) string {
	if mode == ModeSeamless {
		return "the players' money in the operator's wallet"
	}
	return "the players' money in wallet-svc's own ledger"
}

// ModeError is the refusal of a start in another wallet mode than the
// ledger file's. Nothing was changed.
type ModeError struct {
	// Path is the ledger file; Recorded its mode; Wanted the start's.
	Path, Recorded, Wanted string
}

func (e *ModeError) Error() string {
	return fmt.Sprintf("wallet: %s was used in %s mode (%s); this start asks for %s mode (%s). "+
		"Nothing was changed. Start it in %s mode (chemmy run -wallet %s; wallet-svc -wallet-mode %s), "+
		"or, with the services stopped, move it to %s mode with `chemmy wallet migrate -data-dir %s -to %s` "+
		"(docs/guide-integration.md, \"Changing the wallet mode\")",
		e.Path, e.Recorded, modeText(e.Recorded), e.Wanted, modeText(e.Wanted),
		e.Recorded, e.Recorded, e.Recorded, e.Wanted, filepath.Dir(e.Path), e.Wanted)
}

// validMode checks that mode is a wallet mode.
func validMode(mode string) error {
	if mode != ModeTransfer && mode != ModeSeamless {
		return fmt.Errorf("wallet: mode %q: want %s or %s", mode, ModeTransfer, ModeSeamless)
	}
	return nil
}

// takeMode checks, in one transaction, that db (the ledger file at path)
// may run in mode and records the mode of a new file, or the inferred
// mode of an older one, with its entry in the mode log. A file of the
// other mode is refused with a *ModeError and nothing is written.
func takeMode(db *bolt.DB, path, mode string, now time.Time) error {
	return db.Update(func(tx *bolt.Tx) error {
		got, inferred, why := modeOf(tx)
		if got != "" && got != mode {
			return &ModeError{Path: path, Recorded: got, Wanted: mode}
		}
		if got != "" && !inferred {
			return nil
		}
		c := ModeChange{Time: now, To: mode, How: ModeHowFirstStart, By: "wallet-svc"}
		if inferred {
			c.How, c.Note = ModeHowInferred, why
		}
		return recordMode(tx, c)
	})
}

// recordMode writes c.To as the file's mode and appends c to its mode log.
func recordMode(tx *bolt.Tx, c ModeChange) error {
	if err := tx.Bucket(bucketWallet).Put(keyMode, []byte(c.To)); err != nil {
		return err
	}
	log, err := tx.CreateBucketIfNotExists(bucketModeLog)
	if err != nil {
		return err
	}
	seq, err := log.NextSequence()
	if err != nil {
		return err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return log.Put(binary.BigEndian.AppendUint64(nil, seq), b)
}

// modeLog reads the mode log of tx's file, oldest first.
func modeLog(tx *bolt.Tx) ([]ModeChange, error) {
	b := tx.Bucket(bucketModeLog)
	if b == nil {
		return nil, nil
	}
	var out []ModeChange
	err := b.ForEach(func(k, v []byte) error {
		var c ModeChange
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("wallet: mode log entry %x: %w", k, err)
		}
		if len(k) == 8 {
			c.Seq = binary.BigEndian.Uint64(k)
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// openTimeout is how long CheckMode, ReadMode and MigrateMode wait for
// the ledger file's lock (a running wallet-svc holds it).
const openTimeout = 2 * time.Second

// errInUse: the ledger file at path is locked by another process.
func errInUse(path string) error {
	return fmt.Errorf("wallet: %s is in use (a wallet-svc or chemmy run on it?): stop the services first", path)
}

// openExisting opens the ledger file at path (read-only, or for
// writing), which must exist; a file locked by a running service is
// named as such.
func openExisting(path string, readOnly bool) (*bolt.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("wallet: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: readOnly, Timeout: openTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, errInUse(path)
	}
	if err != nil {
		return nil, fmt.Errorf("wallet: open %s: %w", path, err)
	}
	return db, nil
}

// CheckMode reports, reading only, whether the ledger file at path may
// be started in mode: nil for a file that does not exist yet, a new one,
// or one of that mode (recorded, or inferred for an older file); a
// *ModeError for one of the other mode. chemmy run checks it before it
// starts anything; Start checks it again (and records the mode).
func CheckMode(path, mode string) error {
	if err := validMode(mode); err != nil {
		return err
	}
	if fi, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || err == nil && fi.Size() == 0 {
		return nil // new (an empty file: created by a start that went no further)
	}
	db, err := openExisting(path, true)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if got, _, _ := modeOf(tx); got != "" && got != mode {
			return &ModeError{Path: path, Recorded: got, Wanted: mode}
		}
		return nil
	})
}

// ModeInfo is a ledger file's wallet mode and its log.
type ModeInfo struct {
	// Mode is the file's mode ("" for a new file); Inferred says it is
	// not recorded yet (an older file: its next start records it).
	Mode     string
	Inferred bool
	Log      []ModeChange
}

// ReadMode reads the wallet mode of the ledger file at path and its mode
// log, reading only.
func ReadMode(path string) (ModeInfo, error) {
	db, err := openExisting(path, true)
	if err != nil {
		return ModeInfo{}, err
	}
	defer db.Close()
	var info ModeInfo
	err = db.View(func(tx *bolt.Tx) error {
		info.Mode, info.Inferred, _ = modeOf(tx)
		info.Log, err = modeLog(tx)
		return err
	})
	return info, err
}

// MigrateRefusal is MigrateMode's refusal: what stands in the way, one
// line each. Nothing was changed.
type MigrateRefusal struct {
	Path, From, To string
	// Blockers: the accounts holding money (transfer to seamless), the
	// operator transactions still to send and the rounds still open
	// (seamless to transfer).
	Blockers []string
	// Hint says how to clear them.
	Hint string
}

func (e *MigrateRefusal) Error() string {
	return fmt.Sprintf("wallet: %s stays in %s mode: it cannot move to %s mode while\n  %s\n%s\nNothing was changed.",
		e.Path, e.From, e.To, strings.Join(e.Blockers, "\n  "), e.Hint)
}

// buckets are every bucket of the ledger file, made at open.
func buckets() [][]byte {
	return append([][]byte{bucketWallet, bucketAccounts, bucketHolds, bucketTransfers, bucketStatements,
		bucketExpiry, bucketLimits, bucketPlay, bucketLimitChanges, bucketLimitChangeLog, bucketModeLog,
		bucketLaunch, bucketLaunchTokens, bucketLaunchReqs, bucketLaunchExpiry}, opBuckets...)
}

// MigrateMode changes the recorded wallet mode of the ledger file at path
// (the service stopped) to to, and logs the change with by (who) and the
// time. It moves no money and changes nothing else: it is refused (a
// *MigrateRefusal naming each obstacle) unless the file holds nothing
// that belongs to the other mode:
//
//   - transfer to seamless: every player account (every currency) has a
//     balance of 0. Their money is in this ledger; it must first go back
//     to the operator by Withdraw (and a chemin de fer bank still up
//     comes back by PassBank or CloseTable), or seamless mode would take
//     it for money owed to the operator's wallet and pay it out.
//   - seamless to transfer: no operator transaction still to send
//     (credits, rollbacks, round ends: start it in seamless mode until
//     they are acknowledged), no operator exception open (retried or
//     settled outside chemmy: opexceptions.go), no debit in flight, no open hold on a
//     player account and no round still open (a chemin de fer bank up,
//     a coup in play), and every player account at 0.
//
// A file already in mode to is left as it is (changed false). A file
// that does not exist, or a new one, has no mode to change: its first
// start takes the mode it is started in.
func MigrateMode(path, to, by string, now time.Time) (from string, changed bool, err error) {
	if err := validMode(to); err != nil {
		return "", false, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("wallet: no ledger file %s: there is no mode to change (a new data dir takes the mode of its first start)", path)
	} else if err != nil {
		return "", false, fmt.Errorf("wallet: %w", err)
	}
	db, err := store.Open(path, schemaVersion, buckets()...)
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return "", false, errInUse(path)
		}
		return "", false, err
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		var inferred bool
		var why string
		from, inferred, why = modeOf(tx)
		if from == "" {
			return fmt.Errorf("wallet: %s has never been used: there is no mode to change; start it in the mode you want (chemmy run -wallet %s)", path, to)
		}
		if from == to {
			return nil // an inferred mode is recorded by the next start
		}
		c := ModeChange{Time: now, From: from, To: to, How: ModeHowMigrate, By: by}
		if inferred {
			c.Note = "the mode before was inferred: " + why
		}
		blockers, hint, err := migrateBlockers(tx, from)
		if err != nil {
			return err
		}
		if len(blockers) > 0 {
			return &MigrateRefusal{Path: path, From: from, To: to, Blockers: blockers, Hint: hint}
		}
		changed = true
		return recordMode(tx, c)
	})
	return from, changed, err
}

// migrateBlockers lists what keeps tx's file, in mode from, from moving
// to the other mode (MigrateMode), and how to clear it.
func migrateBlockers(tx *bolt.Tx, from string) (blockers []string, hint string, err error) {
	def := string(tx.Bucket(bucketWallet).Get(keyCurrency))
	c := tx.Bucket(bucketAccounts).Cursor()
	// Every operator's player accounts ("acme/player:bob" too).
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if !isPlayerAccount(string(k)) {
			continue
		}
		bal, held, err := decodeAccount(v)
		if err != nil {
			return nil, "", err
		}
		if bal == 0 && held == 0 {
			continue
		}
		line := fmt.Sprintf("%s: balance %d, held %d (minor units of %s)", k, bal, held, currencyOf(string(k), def))
		if held != 0 {
			line += ": at stake, or a bank up"
		}
		blockers = append(blockers, line)
	}
	if from == ModeTransfer {
		return blockers, "The players' money is in this ledger: take it out first (WalletService/Withdraw of each player account, " +
			"after PassBank or CloseTable for a bank still up) and credit it to the players in your wallet, then migrate again.", nil
	}
	// Seamless: what is still owed to, or pending with, the operator.
	n := 0
	err = tx.Bucket(bucketOpOutbox).ForEach(func(_, id []byte) error {
		n++
		if n > 10 {
			return nil
		}
		x, err := getTx(tx, string(id))
		if err != nil {
			return err
		}
		line := fmt.Sprintf("operator transaction %s not yet acknowledged: %s", x.ID, x.Kind)
		if x.Amount != 0 {
			line += fmt.Sprintf(" of %d (minor units of %s)", x.Amount, x.Currency)
		}
		blockers = append(blockers, line+fmt.Sprintf(" for %s in round %s", x.Player, x.Round))
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if n > 10 {
		blockers = append(blockers, fmt.Sprintf("and %d more operator transactions not yet acknowledged", n-10))
	}
	exc, err := exceptionBlockers(tx)
	if err != nil {
		return nil, "", err
	}
	blockers = append(blockers, exc...)
	if err := tx.Bucket(bucketOpInflight).ForEach(func(id, _ []byte) error {
		blockers = append(blockers, fmt.Sprintf("debit %s may be in flight (its start rolls it back)", id))
		return nil
	}); err != nil {
		return nil, "", err
	}
	var open []string
	if err := tx.Bucket(bucketOpRounds).ForEach(func(k, v []byte) error {
		r := &roundRec{}
		if err := json.Unmarshal(v, r); err != nil {
			return err
		}
		if !r.Ended && (r.Open > 0 || r.Txs > 0) {
			acct, round, _ := strings.Cut(string(k), "\x00")
			line := fmt.Sprintf("round %s of %s is still open", round, acct)
			if r.Open > 0 {
				line += fmt.Sprintf(" (%d hold(s) in it: a stake, or a bank up)", r.Open)
			}
			open = append(open, line)
		}
		return nil
	}); err != nil {
		return nil, "", err
	}
	slices.Sort(open)
	blockers = append(blockers, open...)
	if nonEmpty(tx, bucketOpHolds) && len(open) == 0 {
		blockers = append(blockers, "holds on player accounts are still open")
	}
	return blockers, "The operator's wallet is still owed, or holds, part of a round: start it again in seamless mode, " +
		"let the coups in play finish and the banks come back (PassBank or CloseTable) until the operator has acknowledged " +
		"every transaction (GetOperatorReport: nothing pending) and no exception is open (ListOperatorExceptions: retry or settle each), " +
		"stop it, then migrate again.", nil
}
