package gateway

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post calls the HTTP side as curl would.
func (e *env) post(t *testing.T, path, token, body string) (int, map[string]any) {
	t.Helper()
	return e.postWith(t, http.DefaultClient, nil, path, token, body)
}

// postWith is post with client hc and the further headers hdr.
func (e *env) postWith(t *testing.T, hc *http.Client, hdr http.Header, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, "http://"+e.gw.HTTPAddr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %d %q: %v", path, resp.StatusCode, b, err)
	}
	return resp.StatusCode, m
}

// reason is the ErrorInfo reason of a Connect JSON error.
func reason(m map[string]any) string {
	ds, _ := m["details"].([]any)
	for _, d := range ds {
		d, _ := d.(map[string]any)
		if d["type"] == "google.rpc.ErrorInfo" {
			dbg, _ := d["debug"].(map[string]any)
			r, _ := dbg["reason"].(string)
			return r
		}
	}
	return ""
}

func TestHTTPSameAuthAndErrors(t *testing.T) {
	e := startEnv(t)
	// Authenticated by the same token file, forwarded with the identity.
	code, m := e.post(t, "/chemmy.gateway.v1.GatewayService/GetCaller", "tok-alice", `{}`)
	if code != 200 || m["subject"] != "alice" || m["role"] != "ROLE_PLAYER" {
		t.Fatalf("GetCaller: %d %v", code, m)
	}
	code, m = e.post(t, "/chemmy.table.v1.TableService/GetTable", "tok-carol", `{"tableId":"t1"}`)
	tbl, _ := m["table"].(map[string]any)
	if code != 200 || tbl["tableId"] != "carol" || tbl["bankerPlayerId"] != "croupier" {
		t.Fatalf("GetTable: %d %v", code, m)
	}
	if extra, _ := tbl["offeredPlayerId"].(string); extra != "" {
		t.Errorf("the backend saw caller metadata: %q", extra)
	}
	// The gateway's errors, with their reasons.
	for _, c := range []struct {
		path, token, body string
		status            int
		code, reason      string
	}{
		{"/chemmy.gateway.v1.GatewayService/GetCaller", "", `{}`, 401, "unauthenticated", ReasonTokenMissing},
		{"/chemmy.gateway.v1.GatewayService/GetCaller", "nope", `{}`, 401, "unauthenticated", ReasonTokenUnknown},
		{"/chemmy.table.v1.TableService/PlaceBet", "tok-alice", `{"tableId":"t1","playerId":"bob","amount":5}`, 403, "permission_denied", ReasonNotYourself},
		{"/chemmy.wallet.v1.WalletService/Deposit", "tok-alice", `{"requestId":"r","accountId":"player:alice","amount":5}`, 403, "permission_denied", ReasonRoleNotAllowed},
		// The backend's own, passed through.
		{"/chemmy.table.v1.TableService/PlaceBet", "tok-alice", `{"tableId":"t1","playerId":"alice","amount":5}`, 400, "failed_precondition", "NOT_YOUR_TURN"},
	} {
		code, m := e.post(t, c.path, c.token, c.body)
		if code != c.status || m["code"] != c.code || reason(m) != c.reason {
			t.Errorf("%s as %q: %d %v, want %d %s %s", c.path, c.token, code, m, c.status, c.code, c.reason)
		}
	}
	// Snake-case field names are accepted too (protobuf JSON).
	code, m = e.post(t, "/chemmy.table.v1.TableService/JoinTable", "tok-alice", `{"table_id":"t9","player_id":"alice","request_id":"r1"}`)
	if tbl, _ := m["table"].(map[string]any); code != 200 || tbl["tableId"] != "t9" {
		t.Errorf("JoinTable: %d %v", code, m)
	}
}

// TestHTTPZeroValuesPresent: the HTTP/JSON side writes zero values (a
// hand total of 0, an amount of 0) instead of leaving them out, and
// leaves out what is unset (a message, a field of explicit presence).
func TestHTTPZeroValuesPresent(t *testing.T) {
	e := startEnv(t)
	code, m := e.post(t, "/chemmy.table.v1.TableService/GetTable", "tok-carol", `{"tableId":"t1"}`)
	tbl, _ := m["table"].(map[string]any)
	coup, _ := tbl["lastCoup"].(map[string]any)
	if code != 200 || coup == nil {
		t.Fatalf("GetTable: %d %v", code, m)
	}
	if v, ok := coup["playerTotal"]; !ok || v != float64(0) {
		t.Errorf("playerTotal %v (present %v), want 0", v, ok)
	}
	if v := coup["bankerTotal"]; v != float64(5) {
		t.Errorf("bankerTotal %v, want 5", v)
	}
	if v, ok := tbl["bank"]; !ok || v != "0" {
		t.Errorf("bank %v (present %v), want \"0\"", v, ok)
	}
	for _, absent := range []string{"currentCoup", "currencyExponent"} {
		if v, ok := tbl[absent]; ok {
			t.Errorf("%s present though unset: %v", absent, v)
		}
	}
}

func TestHTTPUnknownPath(t *testing.T) {
	e := startEnv(t)
	resp, err := http.Post("http://"+e.gw.HTTPAddr()+"/chemmy.table.v1.TableService/Nope", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d", resp.StatusCode)
	}
}

func TestConsoleServed(t *testing.T) {
	e := startEnv(t)
	for path, want := range map[string]string{"/": "chemmy table console", "/console/app.js": "WatchTable", "/console/style.css": ".card"} {
		resp, err := http.Get("http://" + e.gw.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) || resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: %d, %d bytes, CSP %q", path, resp.StatusCode, len(b), resp.Header.Get("Content-Security-Policy"))
		}
	}
}

// TestHTTPMalformedRequest: over HTTP a body that does not decode as the
// method's input (JSON or protobuf) is INVALID_ARGUMENT MALFORMED_REQUEST
// with its reason, and so is an enum value name the contract does not
// have: dropped as unknown, it would send the call on with the field unset
// (a table of the default game, the default commission rounding). Unknown
// field names are still ignored, as protobuf JSON allows.
func TestHTTPMalformedRequest(t *testing.T) {
	e := startEnv(t)
	for _, c := range []struct{ path, token, body string }{
		{"/chemmy.table.v1.TableService/CreateTable", "tok-carol", `{"requestId":"r1","variant":"VARIANT_NOPE"}`},
		{"/chemmy.table.v1.TableService/CreateTable", "tok-carol", `{"requestId":"r1","house_rules":{"commissionRounding":"COMMISSION_ROUNDING_NOPE"}}`},
		{"/chemmy.table.v1.TableService/PlaceBet", "tok-alice", `{"tableId":"t1","playerId":"alice","amount":1.5}`},
		{"/chemmy.table.v1.TableService/PlaceBet", "tok-alice", `{"tableId":"t1","playerId":"alice","amount":"99999999999999999999"}`},
		{"/chemmy.table.v1.TableService/GetTable", "tok-carol", `{"tableId":`},
		{"/chemmy.table.v1.TableService/GetTable", "tok-carol", `[]`},
		{"/chemmy.table.v1.TableService/GetTable", "tok-carol", ``},
		{"/chemmy.table.v1.TableService/WatchTable", "tok-carol", `{"tableId":`},
		{"/chemmy.table.v1.TableService/WatchTable", "tok-carol", `{"tableId":"t1","playerId":"x","bogus":{"variant":"NOPE"}}x`},
	} {
		code, m := e.post(t, c.path, c.token, c.body)
		if code != http.StatusBadRequest || m["code"] != "invalid_argument" || reason(m) != ReasonMalformedRequest {
			t.Errorf("%s %s: %d %v, want 400 invalid_argument %s", c.path, c.body, code, m, ReasonMalformedRequest)
		}
	}
	// Unknown fields are ignored, at any depth.
	code, m := e.post(t, "/chemmy.table.v1.TableService/GetTable", "tok-carol", `{"tableId":"t1","bogus":{"variant":"NOPE"}}`)
	if tbl, _ := m["table"].(map[string]any); code != 200 || tbl["tableId"] != "carol" {
		t.Errorf("GetTable with an unknown field: %d %v", code, m)
	}
	// A protobuf body that does not decode.
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, "http://"+e.gw.HTTPAddr()+"/chemmy.table.v1.TableService/GetTable", strings.NewReader("\xff\xff\xff"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/proto")
	req.Header.Set("Authorization", "Bearer tok-carol")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var pm map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&pm); err != nil || resp.StatusCode != http.StatusBadRequest || reason(pm) != ReasonMalformedRequest {
		t.Errorf("application/proto garbage: %d %v (%v), want 400 %s", resp.StatusCode, pm, err, ReasonMalformedRequest)
	}
}

// TestHTTPCompressedRequest: a gzip body (Content-Encoding: gzip) is
// checked as the plain one is, once decompressed: an enum value name the
// contract lacks is MALFORMED_REQUEST, as is a body that is not gzip; one
// over the size limit once decompressed is 413 REQUEST_TOO_LARGE; another
// encoding UNIMPLEMENTED; a good one is served, unary and as a stream of
// lines.
func TestHTTPCompressedRequest(t *testing.T) {
	e := startEnv(t)
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	hdr := http.Header{"Content-Encoding": {"gzip"}}
	for _, c := range []struct{ path, token, body string }{
		{"/chemmy.table.v1.TableService/CreateTable", "tok-carol", gz(`{"requestId":"r1","variant":"VARIANT_NOPE"}`)},
		{"/chemmy.table.v1.TableService/CreateTable", "tok-carol", gz(`{"requestId":"r1","house_rules":{"commissionRounding":"COMMISSION_ROUNDING_NOPE"}}`)},
		{"/chemmy.table.v1.TableService/WatchTable", "tok-carol", gz(`{"tableId":"t1","playerId":"x","bogus":{"variant":"NOPE"}}x`)},
		{"/chemmy.table.v1.TableService/GetTable", "tok-carol", `{"tableId":"t1"}`},
	} {
		code, m := e.postWith(t, http.DefaultClient, hdr, c.path, c.token, c.body)
		if code != http.StatusBadRequest || m["code"] != "invalid_argument" || reason(m) != ReasonMalformedRequest {
			t.Errorf("%s gzip %q: %d %v, want 400 invalid_argument %s", c.path, c.body, code, m, ReasonMalformedRequest)
		}
	}
	code, m := e.postWith(t, http.DefaultClient, hdr, "/chemmy.table.v1.TableService/GetTable", "tok-carol", gz(`{"tableId":"t1"}`))
	if tbl, _ := m["table"].(map[string]any); code != 200 || tbl["tableId"] != "carol" {
		t.Errorf("GetTable gzip: %d %v", code, m)
	}
	// Decompressed beyond the request limit (1 MiB): refused, as a plain
	// body that large is; an encoding Connect does not take: refused.
	code, m = e.postWith(t, http.DefaultClient, hdr, "/chemmy.table.v1.TableService/GetTable", "tok-carol",
		gz(`{"tableId":"`+strings.Repeat("t", 1<<20)+`"}`))
	if code != http.StatusRequestEntityTooLarge || m["code"] != "resource_exhausted" || reason(m) != ReasonRequestTooLarge {
		t.Errorf("GetTable gzip of over 1 MiB: %d %v", code, m)
	}
	code, m = e.postWith(t, http.DefaultClient, http.Header{"Content-Encoding": {"br"}}, "/chemmy.table.v1.TableService/GetTable", "tok-carol", `{"tableId":"t1"}`)
	if code == 200 || m["code"] != "unimplemented" {
		t.Errorf("GetTable br: %d %v", code, m)
	}
	// A stream of lines answers the gzip request as the plain one (the
	// stub table-svc has no WatchTable: the same error, not a malformed
	// request).
	const watch = "/chemmy.table.v1.TableService/WatchTable"
	plainCode, plain := e.post(t, watch, "tok-carol", `{"tableId":"t1"}`)
	code, m = e.postWith(t, http.DefaultClient, hdr, watch, "tok-carol", gz(`{"tableId":"t1"}`))
	if code != plainCode || m["code"] != plain["code"] || reason(m) == ReasonMalformedRequest {
		t.Errorf("WatchTable gzip: %d %v; plain: %d %v", code, m, plainCode, plain)
	}
}
