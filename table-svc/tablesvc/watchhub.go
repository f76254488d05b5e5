package tablesvc

import (
	"sync"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

// watchHub hands the events of each save, once committed, to the
// WatchTable streams of this process that watch its table, so that a
// watcher gets a coup's result as the move that ended it is answered,
// not after the outbox relay has published it to JetStream. JetStream
// stays the source of every event: a watch takes a local event only when
// it is the next of the table's sequence, and the stream brings whatever
// the hub did not (a watcher too slow, a watch on another table-svc, a
// one-player event), each event once (watch.go).
type watchHub struct {
	mu   sync.Mutex
	subs map[string]map[*localWatch]struct{}
}

// localWatch is one watch's feed from the hub: the public events of each
// save of its table, in commit order. A save that finds it full is not
// handed over (the watch reads it from the stream).
type localWatch struct {
	ch chan []*eventsv1.TableEvent
}

// localWatchBuffer is how many saves a watch's feed holds.
const localWatchBuffer = 64

func newWatchHub() *watchHub {
	return &watchHub{subs: map[string]map[*localWatch]struct{}{}}
}

// subscribe returns a feed of table's saves; unsubscribe ends it. A nil
// hub (a Service made without Start) feeds nothing.
func (h *watchHub) subscribe(table string) *localWatch {
	w := &localWatch{ch: make(chan []*eventsv1.TableEvent, localWatchBuffer)}
	if h == nil {
		return w
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[table] == nil {
		h.subs[table] = map[*localWatch]struct{}{}
	}
	h.subs[table][w] = struct{}{}
	return w
}

func (h *watchHub) unsubscribe(table string, w *localWatch) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[table], w)
	if len(h.subs[table]) == 0 {
		delete(h.subs, table)
	}
}

// watched reports whether table has a local watch.
func (h *watchHub) watched(table string) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[table]) > 0
}

// publish hands evs, the public events of one committed save of table (in
// sequence order; shared by the watches, which do not change them), to
// its watches, never blocking: a full feed misses it.
func (h *watchHub) publish(table string, evs []*eventsv1.TableEvent) {
	if h == nil || len(evs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.subs[table] {
		select {
		case w.ch <- evs:
		default:
		}
	}
}
