package sim

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/services/kit/app"
)

// Kills: a service killed mid-request, as kill -9 would, not stopped.
//
// The fault interceptor kills at one of table-svc's calls to shoe-svc or
// wallet-svc (faults.go): table-svc before the call is made, table-svc
// once the call is made (the callee applied it, table-svc never hears),
// or the callee once it has applied the call and before it replies. At
// that instant the killed service's store is copied (a read transaction
// of bbolt: everything committed, nothing after) and the service is dead
// to the world: table-svc's further calls are not made (UNAVAILABLE), a
// dead callee is down, the dead service's outbox relay reaches NATS no
// more (relay.go). The process goes on in memory until the request
// returns (a client that sees table-svc killed gets no answer: the
// driver treats it as UNAVAILABLE, whatever the handler returned); then
// the service is stopped, its file replaced by the copy and started
// again (reap): on disk exactly what the kill left, the outbox's
// published events not yet removed included.

// errKilled is the answer a client gets from a table-svc killed while
// it handled the request: none (the connection dropped).
var errKilled = status.Error(codes.Unavailable, "sim: table-svc was killed mid-request (no answer)")

// hook is the services' Config.Hook: the simulation keeps each service's
// parts and sets its relay's ack timeout and interceptor.
func (c *cluster) hook(svc string) func(*app.Base) {
	return func(b *app.Base) {
		c.mu.Lock()
		c.bases[svc] = b
		c.mu.Unlock()
		b.Relay.WithAckTimeout(relayAckTimeout).WithInterceptor(c.relay.intercept(svc))
	}
}

func (c *cluster) dbPath(svc string) string { return filepath.Join(c.dir, svc+".db") }

// kill kills svc now (see above): it is called on table-svc's goroutine,
// from inside one of its calls.
func (c *cluster) kill(svc string) {
	c.relay.setDead(svc, true)
	if svc == svcTable {
		c.faults.setTableDead(true)
	} else {
		c.setUp(svc, false)
	}
	c.mu.Lock()
	b := c.bases[svc]
	c.mu.Unlock()
	snap := c.dbPath(svc) + ".killed"
	err := b.DB.View(func(tx *bolt.Tx) error { return tx.CopyFile(snap, 0o600) })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kills[svc]++
	if err != nil {
		c.killErr = fmt.Errorf("sim: copy %s-svc's store at its kill: %w", svc, err)
		return
	}
	c.killed[svc] = snap
}

// killCount is the number of times svc was killed so far.
func (c *cluster) killCount(svc string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kills[svc]
}

// pendingKill reports whether svc was killed and not yet started again.
func (c *cluster) pendingKill(svc string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.killed[svc]
	return ok
}

// reap starts again every service killed since the last reap, on its
// file as the kill left it; a restart that kills again (table-svc's
// recovery calls) is reaped too.
func (c *cluster) reap() error {
	for {
		c.mu.Lock()
		if err := c.killErr; err != nil {
			c.mu.Unlock()
			return err
		}
		svc, snap := "", ""
		for _, name := range []string{svcShoe, svcWallet, svcTable} {
			if p, ok := c.killed[name]; ok {
				svc, snap = name, p
				delete(c.killed, name)
				break
			}
		}
		c.mu.Unlock()
		if svc == "" {
			return nil
		}
		// The dead instance's errors are the kill's: not a failure.
		_ = c.stop(svc)
		if err := os.Rename(snap, c.dbPath(svc)); err != nil {
			return fmt.Errorf("sim: %s-svc's store as its kill left it: %w", svc, err)
		}
		c.relay.setDead(svc, false)
		if svc == svcTable {
			c.faults.setTableDead(false)
		}
		if err := c.startOnly(svc); err != nil {
			return err
		}
	}
}
