package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

// secret is something some callers may not see: a card code (found as a
// card, or as a word of a text), or a string of bytes such as a seed
// (found in any text or bytes field, raw, in hex or in base64).
type secret struct {
	what   string
	card   string
	text   []byte
	seenBy map[string]bool // the callers (demo token names) who may see it
}

// secrets is what the test knows is hidden, and from whom. Add to it as
// the game goes: hideCard and hideText (nobody but seenBy may see it),
// show (more callers may), reveal (everybody may).
type secrets struct {
	mu    sync.Mutex
	items []*secret
}

func (s *secrets) add(x *secret, seenBy []string) {
	x.seenBy = map[string]bool{}
	for _, who := range seenBy {
		x.seenBy[who] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, x)
}

// hideCard: the card code may be seen by seenBy only.
func (s *secrets) hideCard(code, what string, seenBy ...string) {
	s.add(&secret{what: what, card: code}, seenBy)
}

// hideText: the bytes (a seed, a player's seed not yet revealed) may be
// seen by seenBy only.
func (s *secrets) hideText(text []byte, what string, seenBy ...string) {
	s.add(&secret{what: what, text: bytes.Clone(text)}, seenBy)
}

// show lets who see the cards (codes) or texts named.
func (s *secrets) show(who string, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.items {
		if slices.Contains(values, x.card) || (x.text != nil && slices.Contains(values, string(x.text))) {
			x.seenBy[who] = true
		}
	}
}

// reveal makes the cards or texts named public.
func (s *secrets) reveal(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = slices.DeleteFunc(s.items, func(x *secret) bool {
		return slices.Contains(values, x.card) || (x.text != nil && slices.Contains(values, string(x.text)))
	})
}

// hiddenFrom is what who may not see.
func (s *secrets) hiddenFrom(who string) []*secret {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*secret
	for _, x := range s.items {
		if !x.seenBy[who] {
			out = append(out, x)
		}
	}
	return out
}

// textForms are the ways bytes may show in an answer: raw, in hex and in
// base64. A long secret (a 512-byte server seed) is looked for by its
// first 30 bytes, so that a part of it is found too.
func textForms(b []byte) [][]byte {
	if len(b) > 30 {
		b = b[:30]
	}
	forms := [][]byte{b, []byte(hex.EncodeToString(b)), []byte(strings.ToUpper(hex.EncodeToString(b)))}
	if len(b) < 6 {
		return forms // too short for its base64 to say anything
	}
	for _, s := range []string{base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b)} {
		if len(b)%3 != 0 {
			// The last characters depend on what follows in a longer text.
			s = strings.TrimRight(s, "=")
			s = s[:len(s)-1]
		}
		forms = append(forms, []byte(s))
	}
	return forms
}

// scanner finds in an answer what its caller may not see: a hidden card
// (a Card of that code, face down or not, or the code as a word of a
// text), a hidden text in any form, and the server seed or order of a
// shoe that is not closed: a non-empty field named server_seed or order,
// or any bytes field of a server seed's size (fair.ServerSeedSize), in a
// message whose shoe_id is not a closed shoe's.
type scanner struct {
	cards  map[string]*secret
	texts  []*secret
	forms  map[*secret][][]byte
	closed map[string]bool
	found  []string
}

func newScanner(hidden []*secret, closed map[string]bool) *scanner {
	s := &scanner{cards: map[string]*secret{}, forms: map[*secret][][]byte{}, closed: closed}
	for _, x := range hidden {
		if x.card != "" {
			s.cards[x.card] = x
		} else {
			s.texts = append(s.texts, x)
			s.forms[x] = textForms(x.text)
		}
	}
	return s
}

// leaks returns what msg shows that it may not (nil: nothing).
func leaks(msg proto.Message, hidden []*secret, closed map[string]bool) []string {
	s := newScanner(hidden, closed)
	s.message(msg.ProtoReflect(), string(msg.ProtoReflect().Descriptor().Name()))
	return s.found
}

const cardMessage protoreflect.FullName = "chemmy.shoe.v1.Card"

func (s *scanner) message(m protoreflect.Message, path string) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		// An error's details: what they hold is checked as such.
		if inner, err := a.UnmarshalNew(); err == nil {
			s.message(inner.ProtoReflect(), path+"("+string(inner.ProtoReflect().Descriptor().Name())+")")
			return
		}
	}
	if m.Descriptor().FullName() == cardMessage {
		s.card(m, path)
		return
	}
	s.seedFields(m, path)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := path + "." + string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				s.value(fd, l.Get(i), fmt.Sprintf("%s[%d]", name, i))
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				s.text(name+"(key)", []byte(k.String()))
				s.value(fd.MapValue(), mv, name+"["+k.String()+"]")
				return true
			})
		default:
			s.value(fd, v, name)
		}
		return true
	})
}

func (s *scanner) value(fd protoreflect.FieldDescriptor, v protoreflect.Value, path string) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		s.message(v.Message(), path)
	case protoreflect.StringKind:
		s.text(path, []byte(v.String()))
	case protoreflect.BytesKind:
		s.bytes(path, v.Bytes())
	}
}

// card checks a Card: its code, and the card its rank and suit make.
func (s *scanner) card(m protoreflect.Message, path string) {
	fields := m.Descriptor().Fields()
	code := m.Get(fields.ByName("code")).String()
	rank, suit := m.Get(fields.ByName("rank")).Enum(), m.Get(fields.ByName("suit")).Enum()
	made := ""
	if rank >= 1 && rank <= 13 && suit >= 1 && suit <= 4 {
		made = string("A23456789TJQK"[rank-1]) + string("CDHS"[suit-1])
	}
	for _, c := range []string{code, made} {
		if x := s.cards[c]; c != "" && x != nil {
			s.found = append(s.found, fmt.Sprintf("%s: the card %s (%s; face_down %v)", path, c, x.what,
				m.Get(fields.ByName("face_down")).Bool()))
			return
		}
	}
}

// text checks a string: hidden cards as words, hidden texts anywhere.
func (s *scanner) text(path string, b []byte) {
	if len(s.cards) > 0 {
		for _, w := range strings.FieldsFunc(string(b), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if x := s.cards[w]; x != nil {
				s.found = append(s.found, fmt.Sprintf("%s: the card %s (%s) in %q", path, w, x.what, b))
			}
		}
	}
	s.bytes(path, b)
}

func (s *scanner) bytes(path string, b []byte) {
	for _, x := range s.texts {
		for _, f := range s.forms[x] {
			if bytes.Contains(b, f) {
				s.found = append(s.found, fmt.Sprintf("%s: %s", path, x.what))
				break
			}
		}
	}
}

// seedFields: a shoe's server seed or order only once the shoe is closed.
func (s *scanner) seedFields(m protoreflect.Message, path string) {
	fields := m.Descriptor().Fields()
	shoe := ""
	if fd := fields.ByName("shoe_id"); fd != nil && fd.Kind() == protoreflect.StringKind && !fd.IsList() {
		shoe = m.Get(fd).String()
	}
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsList() || fd.IsMap() || !m.Has(fd) {
			continue
		}
		name, bytesField := string(fd.Name()), fd.Kind() == protoreflect.BytesKind
		seedLike := strings.Contains(name, "server_seed") || (bytesField && (name == "order" || strings.HasSuffix(name, "_order"))) ||
			(bytesField && len(m.Get(fd).Bytes()) == fair.ServerSeedSize)
		if seedLike && !s.closed[shoe] {
			s.found = append(s.found, fmt.Sprintf("%s.%s: a server seed or order (field %s) of shoe %q, which is not closed", path, name,
				fd.Kind(), shoe))
		}
	}
}

// readMethod is a read of the gateway's policy (gateway.ReadMethods).
type readMethod struct {
	full   string
	desc   protoreflect.MethodDescriptor
	in     protoreflect.MessageType
	out    protoreflect.MessageType
	stream bool
}

func readMethods(t *testing.T) []readMethod {
	t.Helper()
	var out []readMethod
	for _, full := range gateway.ReadMethods() {
		name := strings.Replace(strings.TrimPrefix(full, "/"), "/", ".", 1)
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			t.Fatalf("%s: %v", full, err)
		}
		md := d.(protoreflect.MethodDescriptor)
		in, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			t.Fatal(err)
		}
		outT, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
		if err != nil {
			t.Fatal(err)
		}
		if md.IsStreamingClient() {
			t.Fatalf("%s: a client stream; the test sends one request", full)
		}
		out = append(out, readMethod{full: full, desc: md, in: in, out: outT, stream: md.IsStreamingServer()})
	}
	// The reads that show cards and seeds are among them.
	for _, want := range []string{"GetTable", "ListTables", "WatchTable", "GetRound", "ListRounds", "GetShoe", "GetShoeReveal", "ListCardFates"} {
		if !slices.ContainsFunc(out, func(m readMethod) bool { return string(m.desc.Name()) == want }) {
			t.Fatalf("the gateway's reads %q lack %s", gateway.ReadMethods(), want)
		}
	}
	return out
}

// scope is one thing the test knows, by the request fields that name it:
// a table and its shoe ({table_id, shoe_id}), a coup and its table
// ({table_id, coup_id, round_id}), a shoe of no table ({shoe_id}), or
// nothing.
type scope map[string]string

// requests fills m's request from what the test knows, for caller who,
// in each scope: the fields the scope names are set; player_id and
// account_id (the caller's own for a player; staff name the players
// staffNames) and day (today) take each value or stay unset, and a bool
// include_... (what a read adds when asked: GetTable's recent coups) is
// set and not, in every combination. The same request is made once.
func requests(m readMethod, who string, scopes []scope) []proto.Message {
	seen := map[string]bool{}
	var out []proto.Message
	for _, sc := range scopes {
		values := func(field string) []string {
			if v, ok := sc[field]; ok {
				return []string{v}
			}
			names := staffNames
			if !isStaff(who) {
				names = []string{who}
			}
			switch field {
			case "player_id":
				return append([]string{""}, names...)
			case "account_id":
				accts := []string{""}
				for _, p := range names {
					accts = append(accts, "player:"+p)
				}
				if isStaff(who) {
					accts = append(accts, "house:commission")
				}
				return accts
			case "day":
				return []string{"", time.Now().UTC().Format(time.DateOnly)}
			}
			return nil
		}
		reqs := []protoreflect.Message{m.in.New()}
		fields := m.in.Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fd.Kind() == protoreflect.BoolKind && strings.HasPrefix(string(fd.Name()), "include_") && !fd.IsList() {
				// What a read adds when asked (GetTable's
				// include_recent_coups): asked and not.
				var next []protoreflect.Message
				for _, r := range reqs {
					c := proto.Clone(r.Interface()).ProtoReflect()
					c.Set(fd, protoreflect.ValueOfBool(true))
					next = append(next, r, c)
				}
				reqs = next
				continue
			}
			if fd.Kind() != protoreflect.StringKind || fd.IsList() {
				continue
			}
			vs := values(string(fd.Name()))
			if len(vs) == 0 {
				continue
			}
			var next []protoreflect.Message
			for _, r := range reqs {
				for _, v := range vs {
					c := proto.Clone(r.Interface()).ProtoReflect()
					if v != "" {
						c.Set(fd, protoreflect.ValueOfString(v))
					}
					next = append(next, c)
				}
			}
			reqs = next
		}
		for _, r := range reqs {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(r.Interface())
			if !seen[string(b)] {
				seen[string(b)] = true
				out = append(out, r.Interface())
			}
		}
	}
	return out
}

func isStaff(who string) bool { return who == "croupier" || who == "operator" || who == "auditor" }

// staffNames are the players staff name in requests: the banker and a
// holder of a hand at every game, and a player in no coup.
var staffNames = []string{"alice", "bob", "erin"}

// secretRig is the state of TestNoSecretInAnyReadForAnyRole.
type secretRig struct {
	t      *testing.T
	c      *client
	reads  []readMethod
	roles  []string
	hidden *secrets
	closed map[string]bool
	// What the requests are filled with: the tables, their shoes and
	// coups, and the staff shoe.
	tables    []string
	shoes     map[string]string   // by table
	coups     map[string][]string // by table
	staffShoe string

	mu      sync.Mutex
	answers map[[32]byte][]byte // every answer, for the seeds read at the end
	leaked  map[string]int      // leaks by step, caller and method
	watches []*watch
	calls   int
}

func (r *secretRig) ctx(who string, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token"), cancel
}

func (r *secretRig) record(b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[sha256.Sum256(b)] = b
	r.calls++
}

// call makes one read as who and returns its answer (the first message
// of a stream, read within 10 s) or its error.
func (r *secretRig) call(m readMethod, who string, req proto.Message) (proto.Message, error) {
	ctx, cancel := r.ctx(who, 10*time.Second)
	defer cancel()
	resp := m.out.New().Interface()
	var err error
	if m.stream {
		var s grpc.ClientStream
		s, err = r.c.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, m.full)
		if err == nil {
			if err = s.SendMsg(req); err == nil {
				if err = s.CloseSend(); err == nil {
					err = s.RecvMsg(resp)
				}
			}
		}
	} else {
		err = r.c.conn.Invoke(ctx, m.full, req, resp)
	}
	if err != nil {
		return status.Convert(err).Proto(), err
	}
	return resp, nil
}

// check calls every read as every role with every request it can fill,
// and reads every role's watch of every table up to the table's last
// event; nothing may show what that role may not see.
func (r *secretRig) check(step string) {
	t := r.t
	t.Helper()
	// The watches first: each up to its table's last event now.
	last := map[string]uint64{}
	for _, id := range r.tables {
		last[id] = r.table(id).GetEventSequence()
	}
	for _, w := range r.watches {
		for _, msg := range w.until(t, last[w.table]) {
			r.scan(step, w.who, "WatchTable "+w.table+" (open since the start)", msg)
		}
	}
	scopes := []scope{{}, {"shoe_id": r.staffShoe}}
	for _, id := range r.tables {
		scopes = append(scopes, scope{"table_id": id, "shoe_id": r.shoes[id]})
		for _, c := range r.coups[id] {
			scopes = append(scopes, scope{"table_id": id, "coup_id": c, "round_id": c})
		}
	}
	start := time.Now()
	before := r.calls
	var wg sync.WaitGroup
	for _, who := range r.roles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range r.reads {
				for _, req := range requests(m, who, scopes) {
					resp, err := r.call(m, who, req)
					call := strings.TrimPrefix(m.full, "/chemmy.") + " " + prototext.MarshalOptions{}.Format(req)
					// A refusal is an answer; a crash is a bug.
					if c := status.Code(err); c == codes.Internal || c == codes.Unknown {
						t.Errorf("%s: %s's %s: %v", step, who, call, err)
					}
					r.scan(step, who, call, resp)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%s: %d reads as %d callers in %v", step, r.calls-before, len(r.roles), time.Since(start).Round(time.Millisecond))
}

// scan records an answer and fails the test on what who may not see in it.
func (r *secretRig) scan(step, who, call string, msg proto.Message) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		r.t.Errorf("%s: %v", call, err)
		return
	}
	r.record(b)
	found := leaks(msg, r.hidden.hiddenFrom(who), r.closed)
	if len(found) == 0 {
		return
	}
	// One report per step, caller and method, with the first request
	// and the first leak of its answer.
	method, _, _ := strings.Cut(call, " ")
	key := step + "|" + who + "|" + method
	r.mu.Lock()
	r.leaked[key]++
	first := r.leaked[key] == 1
	r.mu.Unlock()
	if first {
		r.t.Errorf("%s: %s sees in %s: %s (and %d more in that answer; further answers of %s to %s at this step not reported)",
			step, who, call, found[0], len(found)-1, method, who)
	}
}

// table is the table's view for a croupier.
func (r *secretRig) table(id string) *tablev1.Table {
	r.t.Helper()
	resp, err := r.c.table.GetTable(as(r.t, "croupier"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.GetTable()
}

// wait polls the table until ok (20 ms apart, as a client would; 30 s
// at most).
func (r *secretRig) wait(id, what string, ok func(*tablev1.Table) bool) *tablev1.Table {
	r.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		tb := r.table(id)
		if ok(tb) {
			return tb
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("table %s: waited 30 s for %s: %v", id, what, tb)
		}
	}
}

// learn notes a table's coups (in play and last) among the ids the
// reads are filled with.
func (r *secretRig) learn(id string) {
	tb := r.table(id)
	if !slices.Contains(r.tables, id) {
		r.tables = append(r.tables, id)
	}
	r.shoes[id] = tb.GetShoeId()
	for _, cp := range []*tablev1.Coup{tb.GetCoup(), tb.GetLastCoup()} {
		if c := cp.GetCoupId(); c != "" && !slices.Contains(r.coups[id], c) {
			r.coups[id] = append(r.coups[id], c)
		}
	}
}

// watch is one caller's WatchTable of one table, read from the start of
// the test to its end.
type watch struct {
	who, table string
	mu         sync.Mutex
	msgs       []*tablev1.WatchTableResponse
	seq        uint64
	err        error
	more       chan struct{}
}

func (r *secretRig) watch(who, table string) {
	ctx, cancel := r.ctx(who, 5*time.Minute)
	r.t.Cleanup(cancel)
	s, err := r.c.table.WatchTable(ctx, &tablev1.WatchTableRequest{TableId: table})
	if err != nil {
		r.t.Fatal(err)
	}
	w := &watch{who: who, table: table, more: make(chan struct{}, 1)}
	go func() {
		for {
			msg, err := s.Recv()
			w.mu.Lock()
			if err != nil {
				w.err = err
			} else {
				w.msgs = append(w.msgs, msg)
				w.seq = max(w.seq, msg.GetTable().GetEventSequence(), msg.GetEvent().GetSequence())
			}
			w.mu.Unlock()
			select {
			case w.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	r.watches = append(r.watches, w)
}

// until waits until the watch has delivered the table's event seq (30 s
// at most) and returns the messages not returned before.
func (w *watch) until(t *testing.T, seq uint64) []*tablev1.WatchTableResponse {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		if w.seq >= seq && w.seq > 0 {
			out := w.msgs
			w.msgs = nil
			w.mu.Unlock()
			return out
		}
		err, at := w.err, w.seq
		w.mu.Unlock()
		if err != nil {
			t.Fatalf("%s's watch of %s ended: %v", w.who, w.table, err)
		}
		select {
		case <-w.more:
		case <-timeout:
			t.Fatalf("%s's watch of %s: event %d not delivered in 30 s (at %d)", w.who, w.table, seq, at)
		}
	}
}

// testShoe opens a test shoe dealing cards and then aces of spades
// (which no coup of the test reaches).
func (r *secretRig) testShoe(name string, cards ...string) string {
	r.t.Helper()
	order := slices.Clone(cards)
	for len(order) < 60 {
		order = append(order, "AS")
	}
	sh, err := r.c.shoe.CreateShoeFromOrder(as(r.t, "operator"), &shoev1.CreateShoeFromOrderRequest{RequestId: "secrets/" + name, Cards: order, TestShoe: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return sh.GetShoe().GetShoeId()
}

func (r *secretRig) createTable(name string, req *tablev1.CreateTableRequest) string {
	r.t.Helper()
	req.RequestId = "secrets/" + name
	resp, err := r.c.table.CreateTable(as(r.t, "operator"), req)
	if err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	id := resp.GetTable().GetTableId()
	r.learn(id)
	return id
}

func (r *secretRig) must(what string, err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatalf("%s: %v", what, err)
	}
}

// bets places the bets of a coup in the turns the table names (chemin
// de fer, banque: amount by player; side at banque), n of them (0: all),
// and returns the bets still to be placed.
func (r *secretRig) bets(id, rid string, amounts map[string]int64, sides map[string]tablev1.BanqueSide, n int) map[string]int64 {
	r.t.Helper()
	left := maps(amounts)
	for placed := 0; len(left) > 0 && (n == 0 || placed < n); placed++ {
		tb := r.wait(id, "a betting turn of "+strings.Join(left, ", "), func(tb *tablev1.Table) bool {
			return tb.GetState() == tablev1.TableState_TABLE_STATE_BETTING && slices.Contains(left, tb.GetCoup().GetTurnPlayerId())
		})
		p := tb.GetCoup().GetTurnPlayerId()
		_, err := r.c.table.PlaceBet(as(r.t, p), &tablev1.PlaceBetRequest{RequestId: rid + "/bet/" + p, TableId: id, PlayerId: p,
			Amount: amounts[p], Side: sides[p]})
		r.must(p+"'s bet", err)
		left = slices.DeleteFunc(left, func(s string) bool { return s == p })
	}
	out := map[string]int64{}
	for _, p := range left {
		out[p] = amounts[p]
	}
	return out
}

func maps(m map[string]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// void voids the coup in play at table id.
func (r *secretRig) void(id, rid string) {
	r.t.Helper()
	coup := r.table(id).GetCoup().GetCoupId()
	_, err := r.c.table.VoidCoup(as(r.t, "croupier"), &tablev1.VoidCoupRequest{RequestId: rid + "/void", TableId: id, CoupId: coup, Reason: "a card shown"})
	r.must("the void of "+coup, err)
	r.wait(id, "the void", func(tb *tablev1.Table) bool {
		return tb.GetLastCoup().GetVoided() && tb.GetLastCoup().GetCoupId() == coup
	})
	r.learn(id)
}

// hands renders a coup's hands as who sees them: "player | banker" at
// chemin de fer and punto banco, "holder: cards" of each hand then the
// banker's at banque and the old game ("??" face down).
func hands(cp *tablev1.Coup) string {
	var out []string
	if len(cp.GetHands()) == 0 {
		out = append(out, seen(cp.GetPlayerCards()))
	}
	for _, h := range cp.GetHands() {
		out = append(out, h.GetHolderPlayerId()+": "+seen(h.GetCards()))
	}
	return strings.Join(append(out, seen(cp.GetBankerCards())), " | ")
}

func (r *secretRig) view(who, id string) *tablev1.Table {
	r.t.Helper()
	resp, err := r.c.table.GetTable(as(r.t, who), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.GetTable()
}

// TestNoSecretInAnyReadForAnyRole plays, through the gateway, a coup of
// each game on prepared shoes whose cards are all different (and aces of
// spades after them, which no coup reaches), so a card code in an answer
// to a caller who may not see that card is a leak whatever the code that
// made the answer. At each step (the betting; the deal, at the decision
// on face-down cards; the coup voided there; the next coup settled) it
// calls every read of the gateway's policy (gateway.ReadMethods: a new
// read is called without editing this test), filled with every id the
// test knows, as every caller: the banker and punters of the coups
// (alice, bob, carol), a spectator in the gallery (dave), a player in no
// coup (erin), a croupier, an operator and an auditor; and reads the
// WatchTable stream every caller has had open on every table since the
// start. No answer, error or stream message may show a card its caller
// may not see (a face-down card to all but its holder, and to an auditor
// once its coup is over; an undealt card to nobody), nor the server seed
// or the order of an open shoe: no such field is set while the shoe is
// open, and once the test's provably fair shoes (a table's, awaiting its
// players' seeds, and a staff shoe awaiting its cutter) are closed, their
// reveals' seeds and orders are in no answer given before.
//
// Every read also answers something other than INTERNAL or UNKNOWN: a
// refusal is an answer, a crash is a bug.
//
// The secrets are a list, each with the callers who may see it (r.hidden:
// hideCard, hideText, show, reveal), checked in every answer to everybody
// else at every step. The players' seeds of a provably fair shoe are
// secrets too (docs/guide-fairness.md, "Provably fair shoes"): bob's and carol's at a
// punto banco table, committed at the betting, bob's revealed before the
// decision, carol's never (the shoe waits for it to the end: it would
// deal shuffled cards whose codes the test's shoes use); nobody, bob
// included (no answer echoes a seed), sees either before the shoe is
// seeded.
//
// Source: RULES.md SHOE-FACE
func TestNoSecretInAnyReadForAnyRole(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	// A seed window longer than the test: no shoe is abandoned.
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1, MaxStreamsPerCaller: -1},
		SeedWindow: 10 * time.Minute})
	c := dial(t, st.GatewayAddr)
	players := []string{"alice", "bob", "carol", "dave", "erin"}
	c.fund(t, 100000, players...)
	if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{RequestId: "secrets/float", AccountId: "house:bank", Amount: 100000}); err != nil {
		t.Fatal(err)
	}
	r := &secretRig{t: t, c: c, reads: readMethods(t), roles: append(slices.Clone(players), "croupier", "operator", "auditor"),
		hidden: &secrets{}, closed: map[string]bool{}, shoes: map[string]string{}, coups: map[string][]string{}, answers: map[[32]byte][]byte{},
		leaked: map[string]int{}}
	var reads []string
	for _, m := range r.reads {
		reads = append(reads, strings.TrimPrefix(m.full, "/chemmy."))
	}
	t.Logf("the reads: %s", strings.Join(reads, ", "))

	// The coups, every card different. Chemin de fer deals player,
	// banker, player, banker; banque right, left, banker, twice; the old
	// game bob, carol, the banker, then carol, bob, the banker (OLD-DEAL).
	type coup struct {
		order []string
		holds map[string][]string // the cards each holder sees at the decision
	}
	cf := []coup{
		// player 2C 3D (5: bob's option), banker KD 5H (5).
		{[]string{"2C", "KD", "3D", "5H"}, map[string][]string{"bob": {"2C", "3D"}, "alice": {"KD", "5H"}}},
		// player 4C 5C (a natural 9), banker 6C TC.
		{[]string{"4C", "6C", "5C", "TC"}, nil},
	}
	bq := []coup{
		// right 2D 3H (5: bob's), left 7D KC (7), banker 4D 2H (6).
		{[]string{"2D", "7D", "4D", "3H", "KC", "2H"}, map[string][]string{"bob": {"2D", "3H"}, "carol": {"7D", "KC"}, "alice": {"4D", "2H"}}},
		// right 6D 8C, left 7C 9D, banker 4H 5D (a natural 9).
		{[]string{"6D", "7C", "4H", "8C", "9D", "5D"}, nil},
	}
	old := []coup{
		// bob 2S JH (12: he may draw), carol 7S QH (17), banker 3C 3S (6).
		{[]string{"2S", "7S", "3C", "QH", "JH", "3S"}, map[string][]string{"bob": {"2S", "JH"}, "carol": {"7S", "QH"}, "alice": {"3C", "3S"}}},
		// bob 6H 8H (14), carol 7H 9C (16), banker 4S 5S (9: he takes all).
		{[]string{"6H", "7H", "4S", "9C", "8H", "5S"}, nil},
	}
	// player 8S AD (a natural 9), banker 6S TD.
	pb := []string{"8S", "6S", "AD", "TD"}
	all := []string{"AS"}
	for _, g := range [][]coup{cf, bq, old} {
		for _, cp := range g {
			all = append(all, cp.order...)
		}
	}
	all = append(all, pb...)
	for i, code := range all {
		if slices.Index(all, code) != i {
			t.Fatalf("card %s used twice", code)
		}
		// Before the deal every card is the shoe's order: nobody's.
		r.hidden.hideCard(code, "a card not dealt yet")
	}
	shoeOf := func(g []coup, name string) string {
		var order []string
		for _, cp := range g {
			order = append(order, cp.order...)
		}
		return r.testShoe(name, order...)
	}
	const long = 600000 // ms: no time limit runs out during the test
	cfT := r.createTable("cf", &tablev1.CreateTableRequest{ShoeId: shoeOf(cf, "cf"), HouseRules: &tablev1.HouseRules{
		CertificationRealMoney: true, BetTimeLimitMs: long, DecisionTimeLimitMs: long, BankOfferTimeLimitMs: long}})
	bqT := r.createTable("banque", &tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE, ShoeId: shoeOf(bq, "banque"),
		BanqueRules: &tablev1.BanqueRules{CertificationRealMoney: true, AuctionTimeLimitMs: long, BetTimeLimitMs: long, DecisionTimeLimitMs: long}})
	oldT := r.createTable("old", &tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_OLD_BACCARAT, ShoeId: shoeOf(old, "old"),
		OldBaccaratRules: &tablev1.OldBaccaratRules{CertificationRealMoney: true, AuctionWindowMs: long, StakingWindowMs: long,
			CutTimeLimitMs: long, DecisionTimeLimitMs: long, BankOfferTimeLimitMs: long}})
	// Punto banco: a table whose coup is voided in its (long) betting
	// window, and one whose coup is dealt when its 1 s window closes.
	pbVoidT := r.createTable("pb-void", &tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, ShoeId: r.testShoe("pb-void"),
		PuntoBancoRules: &tablev1.PuntoBancoRules{CertificationRealMoney: true, BettingWindowMs: long}})
	pbT := r.createTable("pb", &tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, ShoeId: r.testShoe("pb", pb...),
		PuntoBancoRules: &tablev1.PuntoBancoRules{CertificationRealMoney: true, BettingWindowMs: 1000, ResultPauseMs: proto.Int32(0)}})
	// A table on a shoe of its own, provably fair, awaiting its players'
	// seeds; and a staff shoe awaiting its cutter (neither burns a card:
	// no card of theirs is dealt or shown during the test).
	fairT := r.createTable("fair", &tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_OLD_BACCARAT})
	staffShoe, err := c.shoe.CreateShoe(as(t, "operator"), &shoev1.CreateShoeRequest{RequestId: "secrets/staff-shoe", CutterPlayerId: "erin",
		CutTimeLimit: durationpb.New(10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	r.staffShoe = staffShoe.GetShoe().GetShoeId()
	// A punto banco table on a shoe of its own, whose players commit to
	// seeds: bob and carol, each his own secret until the shoe is seeded.
	seedsT := r.createTable("seeds", &tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
		PuntoBancoRules: &tablev1.PuntoBancoRules{BettingWindowMs: 1000, ResultPauseMs: proto.Int32(0)}})
	playerSeeds := map[string]string{"bob": "bob's secret seed " + rand.Text(), "carol": "carol's secret seed " + rand.Text()}
	for p, seed := range playerSeeds {
		r.hidden.hideText([]byte(seed), p+"'s seed before the shoe is seeded")
	}

	// The players sit: alice, bob and carol at the banked games (bob on
	// the right at banque, carol on the left), dave in the chemin de fer
	// gallery; erin nowhere.
	join := func(id, p string, side tablev1.BanqueSide) {
		_, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "secrets/join/" + id + "/" + p, TableId: id, PlayerId: p, Side: side})
		r.must(p+" joins "+id, err)
	}
	for _, p := range []string{"alice", "bob", "carol"} {
		join(cfT, p, 0)
		join(oldT, p, 0)
	}
	join(bqT, "alice", tablev1.BanqueSide_BANQUE_SIDE_RIGHT)
	join(bqT, "bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT)
	join(bqT, "carol", tablev1.BanqueSide_BANQUE_SIDE_LEFT)
	for _, id := range []string{pbVoidT, pbT} {
		join(id, "alice", 0)
		join(id, "bob", 0)
	}
	_, err = c.table.JoinGallery(as(t, "dave"), &tablev1.JoinGalleryRequest{RequestId: "secrets/gallery", TableId: cfT, PlayerId: "dave"})
	r.must("dave joins the gallery", err)
	// Everybody watches every table from here on.
	for _, id := range r.tables {
		for _, who := range r.roles {
			r.watch(who, id)
		}
	}

	// The banks: alice accepts the chemin de fer bank and wins the banque
	// and old game auctions, the others declining.
	_, err = c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "secrets/cf/bank", TableId: cfT, PlayerId: "alice", Amount: 1000})
	r.must("alice's chemin de fer bank", err)
	for id, amount := range map[string]int64{bqT: 2000, oldT: 10000} {
		r.wait(id, "the auction", func(tb *tablev1.Table) bool { return tb.GetState() == tablev1.TableState_TABLE_STATE_AUCTION })
		_, err = c.table.BidBank(as(t, "alice"), &tablev1.BidBankRequest{RequestId: "secrets/bid/" + id, TableId: id, PlayerId: "alice", Amount: amount})
		r.must("alice's bid", err)
		for _, p := range []string{"bob", "carol"} {
			_, err = c.table.DeclineBank(as(t, p), &tablev1.DeclineBankRequest{RequestId: "secrets/decline/" + id + "/" + p, TableId: id, PlayerId: p})
			r.must(p+" declines to bid", err)
		}
	}

	// Step 1, the betting: a bet placed at each table, no card dealt.
	cfBets, cfSides := map[string]int64{"bob": 600, "carol": 400}, map[string]tablev1.BanqueSide(nil)
	bqBets := map[string]int64{"bob": 500, "carol": 400}
	bqSides := map[string]tablev1.BanqueSide{"bob": tablev1.BanqueSide_BANQUE_SIDE_RIGHT, "carol": tablev1.BanqueSide_BANQUE_SIDE_CHEVAL}
	cfLeft := r.bets(cfT, "secrets/cf/1", cfBets, cfSides, 1)
	bqLeft := r.bets(bqT, "secrets/banque/1", bqBets, bqSides, 1)
	stake := func(id, rid, p string, amount int64) {
		r.wait(id, "the staking", func(tb *tablev1.Table) bool { return tb.GetState() == tablev1.TableState_TABLE_STATE_BETTING })
		_, err := c.table.PlaceBet(as(t, p), &tablev1.PlaceBetRequest{RequestId: rid + "/stake/" + p, TableId: id, PlayerId: p, Amount: amount})
		r.must(p+"'s stake", err)
	}
	stake(oldT, "secrets/old/1", "bob", 1000)
	pbBet := func(id, rid, p string, spot tablev1.BetSpot) {
		_, err := c.table.PlaceBet(as(t, p), &tablev1.PlaceBetRequest{RequestId: rid + "/" + p, TableId: id, PlayerId: p, Amount: 500, Spot: spot})
		r.must(p+"'s punto banco bet", err)
	}
	pbBet(pbVoidT, "secrets/pb-void", "alice", tablev1.BetSpot_BET_SPOT_BANK)
	pbBet(pbVoidT, "secrets/pb-void", "bob", tablev1.BetSpot_BET_SPOT_PLAYER)
	commitment := func(p string) []byte {
		sum := sha256.Sum256([]byte(playerSeeds[p]))
		return sum[:]
	}
	_, err = c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "secrets/seeds/bob", TableId: seedsT, PlayerId: "bob",
		Amount: 500, Spot: tablev1.BetSpot_BET_SPOT_PLAYER, SeedCommitment: commitment("bob")})
	r.must("bob's bet with his commitment", err)
	_, err = c.table.CommitSeed(as(t, "carol"), &tablev1.CommitSeedRequest{RequestId: "secrets/seeds/carol", TableId: seedsT, PlayerId: "carol",
		Commitment: commitment("carol")})
	r.must("carol's commitment", err)
	revealSeed := func(p string) {
		r.wait(seedsT, "the seeds' reveal", func(tb *tablev1.Table) bool { return tb.GetShoeEntropy().GetRevealing() })
		_, err := c.table.RevealSeed(as(t, p), &tablev1.RevealSeedRequest{RequestId: "secrets/seeds/reveal/" + p, TableId: seedsT, PlayerId: p,
			Seed: playerSeeds[p]})
		r.must(p+"'s reveal", err)
	}
	for _, id := range r.tables {
		r.learn(id)
	}
	r.check("the betting")

	// Step 2, the decision: the first coups dealt; each holder sees his
	// own hand. bob's seed is revealed, carol's not yet: the shoe waits.
	revealSeed("bob")
	if e := r.table(seedsT).GetShoeEntropy(); !e.GetRevealing() || !slices.Equal(e.GetRevealedPlayerIds(), []string{"bob"}) {
		t.Fatalf("the seeds' shoe after bob's reveal: %v", e)
	}
	// The control: the scan finds a seed where one is.
	if len(leaks(&tablev1.RevealSeedRequest{Seed: playerSeeds["bob"]}, r.hidden.hiddenFrom("erin"), r.closed)) == 0 {
		t.Fatal("the scan does not find bob's seed in a message that holds it")
	}
	r.bets(cfT, "secrets/cf/1", cfLeft, cfSides, 0)
	r.bets(bqT, "secrets/banque/1", bqLeft, bqSides, 0)
	stake(oldT, "secrets/old/1", "carol", 2000)
	// The shoe's first coup waits for the banker's move (OLD-CUT): none.
	r.wait(oldT, "the banker's move", func(tb *tablev1.Table) bool { return tb.GetState() == tablev1.TableState_TABLE_STATE_DEALING })
	_, err = c.table.MoveTopCards(as(t, "alice"), &tablev1.MoveTopCardsRequest{RequestId: "secrets/old/move", TableId: oldT, PlayerId: "alice"})
	r.must("alice moves no card", err)
	for id, g := range map[string][]coup{cfT: cf, bqT: bq, oldT: old} {
		tb := r.wait(id, "the decision", func(tb *tablev1.Table) bool { return tb.GetState() == tablev1.TableState_TABLE_STATE_DECISION })
		if d := tb.GetCoup().GetDecisionPlayerId(); d != "bob" {
			t.Fatalf("table %s: %s decides, want bob", id, d)
		}
		for who, cards := range g[0].holds {
			for _, code := range cards {
				r.hidden.show(who, code)
			}
			// The control: the holder's view shows his cards, and the
			// scan finds them there for anybody else.
			v := r.view(who, id)
			for _, code := range cards {
				if !strings.Contains(hands(v.GetCoup()), code) {
					t.Fatalf("table %s at the decision: %s sees %q, not his %s", id, who, hands(v.GetCoup()), code)
				}
			}
			if len(leaks(v, r.hidden.hiddenFrom("erin"), r.closed)) == 0 {
				t.Fatalf("the scan does not find %s's cards %v in his view for erin: %s", who, cards, hands(v.GetCoup()))
			}
		}
		r.learn(id)
	}
	r.check("the decision")

	// Step 3, the coups voided: their hole cards stay face down, to all
	// but their holders and, now that the coups are over, auditors.
	for id, g := range map[string][]coup{cfT: cf, bqT: bq, oldT: old} {
		r.void(id, "secrets/"+id)
		for _, code := range g[0].order {
			r.hidden.show("auditor", code)
		}
	}
	r.void(pbVoidT, "secrets/pb-void")
	r.check("the coups voided")

	// Step 4, the next coups settled: their cards are everybody's.
	r.bets(cfT, "secrets/cf/2", cfBets, cfSides, 0)
	r.bets(bqT, "secrets/banque/2", bqBets, bqSides, 0)
	stake(oldT, "secrets/old/2", "bob", 1000)
	stake(oldT, "secrets/old/2", "carol", 2000)
	pbBet(pbT, "secrets/pb", "alice", tablev1.BetSpot_BET_SPOT_BANK)
	for id, cards := range map[string][]string{cfT: cf[1].order, bqT: bq[1].order, oldT: old[1].order, pbT: pb} {
		tb := r.wait(id, "the second coup settled", func(tb *tablev1.Table) bool {
			cp := tb.GetLastCoup()
			return cp.GetSettled() && !cp.GetVoided() && notDealing(tb)
		})
		for _, code := range cards {
			if !strings.Contains(hands(tb.GetLastCoup()), code) {
				t.Fatalf("table %s: the settled coup shows %q, not %s", id, hands(tb.GetLastCoup()), code)
			}
		}
		r.hidden.reveal(cards...)
		r.learn(id)
	}
	r.check("the coups settled")

	// The provably fair shoes closed: their seeds and orders were in no
	// answer while they were open.
	fairShoe := r.table(fairT).GetShoeId()
	_, err = c.table.CloseTable(as(t, "croupier"), &tablev1.CloseTableRequest{RequestId: "secrets/fair/close", TableId: fairT, Reason: "end of the test"})
	r.must("the fair table's close", err)
	_, err = c.shoe.CloseShoe(as(t, "operator"), &shoev1.CloseShoeRequest{RequestId: "secrets/staff-close", ShoeId: staffShoe.GetShoe().GetShoeId(),
		Force: true, Reason: "end of the test"})
	r.must("the staff shoe's close", err)
	for _, id := range []string{fairShoe, staffShoe.GetShoe().GetShoeId()} {
		rv, err := c.shoe.GetShoeReveal(as(t, "auditor"), &shoev1.GetShoeRevealRequest{ShoeId: id})
		r.must("the reveal of "+id, err)
		seed, order := rv.GetReveal().GetServerSeed(), rv.GetReveal().GetOrder()
		if len(seed) != fair.ServerSeedSize || len(order) < 30 {
			t.Fatalf("the reveal of %s: seed of %d bytes, order of %d", id, len(seed), len(order))
		}
		late := &secrets{}
		late.hideText(seed, "the server seed of shoe "+id+" while it was open")
		late.hideText(order, "the order of shoe "+id+" while it was open")
		// The control: the scan finds them in the reveal.
		if len(leaks(rv, late.hiddenFrom("auditor"), map[string]bool{id: true})) < 2 {
			t.Fatalf("the scan does not find the seed and order of %s in its reveal", id)
		}
		for _, b := range r.answers {
			for _, x := range late.hiddenFrom("anyone") {
				for _, f := range textForms(x.text) {
					if bytes.Contains(b, f) {
						t.Errorf("%s was in an answer: %x...", x.what, b[:min(len(b), 64)])
					}
				}
			}
		}
	}
	t.Logf("%d distinct answers checked", len(r.answers))
}
