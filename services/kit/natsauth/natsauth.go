// Package natsauth says who may do what on chemmy's NATS: each service
// authenticates with its own nkey and may publish only its own subjects
// (chemmy.<service>.>) plus the JetStream API calls it needs; a read-only
// user, "reader", may follow the stream but publish no event. The local
// stack configures its embedded NATS from here (DevKeys); a real NATS gets
// the same permissions from its configuration file
// (deploy/k8s/base/nats/nats.conf), which a test of this package keeps
// equal to Permissions, user by user.
package natsauth

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Users of chemmy's NATS.
const (
	Table  = "table-svc"
	Wallet = "wallet-svc"
	Shoe   = "shoe-svc"
	Reader = "reader"
)

// Users lists every user, in a fixed order.
var Users = []string{Table, Wallet, Shoe, Reader}

// stream is the JetStream API a publishing service needs on the CHEMMY
// stream (create or update it at start, read its info).
var stream = []string{
	"$JS.API.INFO",
	"$JS.API.STREAM.INFO.CHEMMY",
	"$JS.API.STREAM.CREATE.CHEMMY",
}

// consume is the JetStream API a consumer of the CHEMMY stream needs.
var consume = []string{
	"$JS.API.INFO",
	"$JS.API.STREAM.INFO.CHEMMY",
	"$JS.API.CONSUMER.CREATE.CHEMMY.>",
	"$JS.API.CONSUMER.INFO.CHEMMY.>",
	"$JS.API.CONSUMER.MSG.NEXT.CHEMMY.>",
	"$JS.ACK.CHEMMY.>",
}

// InboxPrefix is the reply-subject prefix of user's connections (the
// nats.go option CustomInboxPrefix; `nats --inbox-prefix`): each user may
// subscribe to its own inbox only, so nobody reads another's replies.
func InboxPrefix(user string) string { return "_INBOX_" + user }

// Permissions returns what user may publish and subscribe to; nil for an
// unknown user.
func Permissions(user string) *server.Permissions {
	perm := func(pub, sub []string) *server.Permissions {
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: pub},
			Subscribe: &server.SubjectPermission{Allow: sub},
		}
	}
	inbox := []string{InboxPrefix(user) + ".>"}
	switch user {
	case Table:
		// table-svc also follows its tables' events for WatchTable (and
		// deletes its watches' consumers), and reads a table's last event
		// in the stream at start (the outbox's published check). It
		// publishes a player's reality checks on chemmy.player.<id>.
		return perm(append(append([]string{"chemmy.table.>", "chemmy.player.>", "$JS.API.STREAM.MSG.GET.CHEMMY", "$JS.API.DIRECT.GET.CHEMMY.>",
			"$JS.API.CONSUMER.DELETE.CHEMMY.>"}, stream...), consume[2:]...), inbox)
	case Wallet:
		return perm(append([]string{"chemmy.wallet.>"}, stream...), inbox)
	case Shoe:
		return perm(append([]string{"chemmy.shoe.>"}, stream...), inbox)
	case Reader:
		// No consumer deletion (its own consumers are ephemeral and go
		// when idle): a reader cannot end anybody's WatchTable.
		return perm(append([]string{"$JS.API.STREAM.NAMES"}, consume...), append([]string{"chemmy.>"}, inbox...))
	}
	return nil
}

// DevKeys are throw-away nkeys made at start by the local stack: a seed
// file <Dir>/<user>.nk (mode 0600) for each of Users.
type DevKeys struct {
	Dir   string
	users []*server.NkeyUser
}

// NewDevKeys makes a key pair for each user and writes the seeds in dir.
func NewDevKeys(dir string) (*DevKeys, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsauth: %w", err)
	}
	k := &DevKeys{Dir: dir}
	for _, u := range Users {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, err
		}
		seed, err := kp.Seed()
		if err != nil {
			return nil, err
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(k.SeedFile(u), append(seed, '\n'), 0o600); err != nil {
			return nil, fmt.Errorf("natsauth: %w", err)
		}
		k.users = append(k.users, &server.NkeyUser{Nkey: pub, Permissions: Permissions(u)})
	}
	return k, nil
}

// SeedFile is the path of user's seed.
func (k *DevKeys) SeedFile(user string) string { return filepath.Join(k.Dir, user+".nk") }

// ServerUsers is the Nkeys option of an embedded NATS server.
func (k *DevKeys) ServerUsers() []*server.NkeyUser { return k.users }
