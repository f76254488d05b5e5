package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/natsauth"
)

// TestEvents runs `chemmy events -table ID` as the read-only reader
// against a real stack: each event is a JSON line with its type (from the
// Chemmy-Event-Type header), its kind and the event in protobuf JSON, and
// only that table's events are printed.
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
	o := eventsOptions{url: st.NATSURL, nkey: st.NATSKeys.SeedFile(natsauth.Reader), table: ids[1], all: true, max: 2, wait: 10 * time.Second}
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
		if p.Type != "chemmy.events.v1.TableEvent" || p.Error != "" || p.Event["tableId"] != ids[1] {
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
	// Without the reader's key the embedded NATS refuses.
	o.nkey = ""
	if err := followEvents(ctx, o, &out); err == nil {
		t.Error("no nkey: no error")
	}
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
