package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/natsauth"
)

// TestEvents runs `chemmy events -table ID` as the read-only reader
// against a real stack: each event is a JSON line with its type (from the
// Chemmy-Event-Type header; a batch's events each as a TableEvent on its
// own subject), its kind and the event in protobuf JSON, and only that
// table's events are printed.
func TestEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	st, err := stack.Start(context.Background(), stack.Config{DataDir: t.TempDir(), TokensFile: "../../deploy/local/tokens.yaml", Limits: gateway.LimitConfig{Rate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { st.Stop(); _ = st.Wait() }()
	cc, err := grpc.NewClient(st.GatewayAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	tc := tablev1.NewTableServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	as := func(who string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token")
	}
	var ids []string
	for i := range 2 {
		r, err := tc.CreateTable(as("croupier"), &tablev1.CreateTableRequest{RequestId: "ev-t" + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetTable().GetTableId())
	}
	if _, err := tc.JoinTable(as("alice"), &tablev1.JoinTableRequest{RequestId: "ev-j", TableId: ids[1], PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	o := eventsOptions{url: st.NATSURL, nkey: st.NATSKeys.SeedFile(natsauth.Reader), table: ids[1], all: true, follow: true, max: 2, wait: 10 * time.Second}
	if err := followEvents(ctx, o, &out); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var p struct {
			Subject, Type, Kind, Error string
			Event                      map[string]any
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("%q: %v", sc.Bytes(), err)
		}
		// A batch's events print as version 1 published each alone.
		if p.Type != "chemmy.events.v1.TableEvent" || p.Error != "" || p.Event["tableId"] != ids[1] || p.Subject != "chemmy.table."+ids[1]+"."+p.Kind {
			t.Errorf("line %s", sc.Bytes())
		}
		if _, ok := p.Event[camel(p.Kind)]; !ok {
			t.Errorf("kind %s but event %v", p.Kind, p.Event)
		}
		kinds = append(kinds, p.Kind)
	}
	if len(kinds) != 2 || kinds[0] != "table_created" || kinds[1] != "player_seated" {
		t.Errorf("kinds %v", kinds)
	}
	// -operator: the table's events are the default operator's (the demo
	// tokens name no operator), none another's.
	for op, want := range map[string]bool{"operator": true, "casino-x": false} {
		var got bytes.Buffer
		oo := eventsOptions{url: st.NATSURL, nkey: st.NATSKeys.SeedFile(natsauth.Reader), table: ids[1], operator: op}
		if err := followEvents(ctx, oo, &got); err != nil {
			t.Fatal(err)
		}
		lines := 0
		for sc := bufio.NewScanner(&got); sc.Scan(); lines++ {
			var p struct{ Event map[string]any }
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatalf("%q: %v", sc.Bytes(), err)
			}
			if p.Event["operatorId"] != "operator" {
				t.Errorf("-operator %s printed %s", op, sc.Bytes())
			}
		}
		if (lines >= 2) != want || (!want && lines != 0) {
			t.Errorf("-operator %s printed %d events of table %s", op, lines, ids[1])
		}
	}
	// -operator on wallet events: a deposit of the default operator's
	// staff is his (design-tenancy step 3), none another's.
	if _, err := walletv1.NewWalletServiceClient(cc).Deposit(as("operator"), &walletv1.DepositRequest{RequestId: "ev-d", AccountId: "player:alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	for op, want := range map[string]int{"operator": 1, "casino-x": 0} {
		var got bytes.Buffer
		oo := eventsOptions{url: st.NATSURL, nkey: st.NATSKeys.SeedFile(natsauth.Reader), subject: "chemmy.wallet.>", operator: op,
			all: true, follow: true, max: want, wait: 2 * time.Second}
		if want == 0 {
			oo.follow, oo.max, oo.wait = false, 0, 0
		}
		if err := followEvents(ctx, oo, &got); err != nil && !errors.Is(err, errQuiet) {
			t.Fatal(err)
		}
		lines := 0
		for sc := bufio.NewScanner(&got); sc.Scan(); lines++ {
			var p struct {
				Subject, Type, Kind string
				Event               map[string]any
			}
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatalf("%q: %v", sc.Bytes(), err)
			}
			// Published in a version 2 batch, printed as version 1
			// published a transfer alone, made whole.
			tr, _ := p.Event["transferRecorded"].(map[string]any)
			if p.Type != "chemmy.events.v1.WalletEvent" || p.Event["operatorId"] != "operator" || p.Kind != "transfer_recorded" ||
				p.Subject != fmt.Sprintf("chemmy.wallet.%s.transfer_recorded", p.Event["eventId"]) || tr["transferId"] != p.Event["eventId"] ||
				tr["amount"] != "1000" || tr["currencyCode"] == nil || tr["reference"] != "ev-d" || p.Event["occurTime"] == nil {
				t.Errorf("-operator %s printed %s", op, sc.Bytes())
			}
		}
		if lines != want {
			t.Errorf("-operator %s printed %d wallet events, want %d", op, lines, want)
		}
	}
	// Without the reader's key the embedded NATS refuses.
	o.nkey = ""
	if err := followEvents(ctx, o, &out); err == nil {
		t.Error("no nkey: no error")
	}
}

// TestEventsReturnsAtTheEnd: each `chemmy events` command of the events
// walk-through (docs/walkthroughs/events.md), run against a stack, prints
// the events stored and returns, where it used to wait for ever; with
// -follow it prints the stored ones, then a new one as it comes, until
// stopped.
func TestEventsReturnsAtTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	doc, err := os.ReadFile("../../docs/walkthroughs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	var examples [][]string
	for _, l := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(l, "go run ./cmd/chemmy events"); ok {
			examples = append(examples, shellWords(rest))
		}
	}
	if len(examples) < 2 {
		t.Fatalf("%d examples of chemmy events in the walk-through", len(examples))
	}
	st, err := stack.Start(context.Background(), stack.Config{DataDir: t.TempDir(), TokensFile: "../../deploy/local/tokens.yaml", Limits: gateway.LimitConfig{Rate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { st.Stop(); _ = st.Wait() }()
	cc, err := grpc.NewClient(st.GatewayAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	tc := tablev1.NewTableServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	as := func(who string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token")
	}
	if _, err := walletv1.NewWalletServiceClient(cc).Deposit(as("operator"), &walletv1.DepositRequest{RequestId: "end-d", AccountId: "player:alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	r, err := tc.CreateTable(as("croupier"), &tablev1.CreateTableRequest{RequestId: "end-t"})
	if err != nil {
		t.Fatal(err)
	}
	id := r.GetTable().GetTableId()
	if _, err := tc.JoinTable(as("alice"), &tablev1.JoinTableRequest{RequestId: "end-j", TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	// The events reach the stream through the outbox relays.
	here := []string{"-nats-url", st.NATSURL, "-nkey", st.NATSKeys.SeedFile(natsauth.Reader)}
	count := func(args []string) int {
		var out bytes.Buffer
		o, err := eventsFlags(append(append([]string(nil), args...), here...), io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if err := followEvents(ctx, o, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return strings.Count(out.String(), "\n")
	}
	for deadline := time.Now().Add(10 * time.Second); count([]string{"-table", id}) < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the table's events did not reach the stream")
		}
	}
	for _, ex := range examples {
		args := slices.Clone(ex)
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "TABLE", id)
		}
		start := time.Now()
		n := count(args)
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("chemmy events %v took %v to return", ex, took)
		}
		if n == 0 {
			t.Errorf("chemmy events %v printed nothing", ex)
		}
	}

	// -follow: the stored events, then the new one, until stopped.
	o, err := eventsFlags(append([]string{"-table", id, "-follow", "-all"}, here...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	fctx, stop := context.WithCancel(ctx)
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- followEvents(fctx, o, &out) }()
	if _, err := tc.JoinTable(as("bob"), &tablev1.JoinTableRequest{RequestId: "end-j2", TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); strings.Count(out.String(), "\n") < 3; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("-follow returned (%v) after %q", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("-follow printed %q, want the two stored events and bob's seat", out.String())
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("-follow, stopped: %v", err)
	}
}

// shellWords splits a shell command's arguments (spaces, single quotes).
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// lockedBuffer is a buffer written by one goroutine and read by another.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func camel(s string) string {
	b := []byte{}
	up := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '_':
			up = true
		case up:
			b = append(b, s[i]-'a'+'A')
			up = false
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}
