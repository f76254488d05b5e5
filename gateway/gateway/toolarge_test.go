package gateway

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestRequestTooLarge: a request over the size limit (-max-message-bytes,
// 1 MiB by default) is refused as not retryable: over gRPC
// RESOURCE_EXHAUSTED REQUEST_TOO_LARGE without a RetryInfo (a forwarded
// call and one the gateway serves itself), over HTTP 413 with the same
// reason (plain, gzip once decompressed, and a stream of lines), never
// the 429 of a rate limit, which says to come back later.
func TestRequestTooLarge(t *testing.T) {
	e := startEnv(t)
	huge := strings.Repeat("t", 2<<20)

	noRetry := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.ResourceExhausted {
			t.Errorf("%s: %v, want RESOURCE_EXHAUSTED", what, err)
			return
		}
		wantStatus(t, err, codes.ResourceExhausted, Domain, ReasonRequestTooLarge)
		for _, d := range status.Convert(err).Details() {
			if _, ok := d.(*errdetails.RetryInfo); ok {
				t.Errorf("%s: carries a RetryInfo %v: a request too large is not retryable", what, d)
			}
		}
	}
	_, err := tablev1.NewTableServiceClient(e.conn).GetTable(e.as("tok-alice"), &tablev1.GetTableRequest{TableId: huge})
	noRetry("gRPC GetTable (forwarded) of 2 MiB", err)
	// GetCaller is served by the gateway itself: its request read as a
	// frame before the interceptors (a GetTableRequest's bytes: a valid
	// message with an unknown field).
	err = e.conn.Invoke(e.as("tok-alice"), gatewayv1.GatewayService_GetCaller_FullMethodName,
		&tablev1.GetTableRequest{TableId: huge}, new(gatewayv1.GetCallerResponse))
	noRetry("gRPC GetCaller (local) of 2 MiB", err)

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte(`{"tableId":"` + huge + `"}`)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, body string
		hdr              http.Header
	}{
		{"unary", "/chemmy.table.v1.TableService/GetTable", `{"tableId":"` + huge + `"}`, nil},
		{"unary gzip", "/chemmy.table.v1.TableService/GetTable", gz.String(), http.Header{"Content-Encoding": {"gzip"}}},
		{"stream of lines", "/chemmy.table.v1.TableService/WatchTable", `{"tableId":"` + huge + `"}`, nil},
	} {
		code, m := e.postWith(t, http.DefaultClient, c.hdr, c.path, "tok-alice", c.body)
		if code != http.StatusRequestEntityTooLarge || m["code"] != "resource_exhausted" || reason(m) != ReasonRequestTooLarge {
			t.Errorf("HTTP %s of 2 MiB: %d %v, want 413 resource_exhausted %s", c.name, code, m["code"], ReasonRequestTooLarge)
		}
		ds, _ := m["details"].([]any)
		for _, d := range ds {
			if d, _ := d.(map[string]any); d["type"] == "google.rpc.RetryInfo" {
				t.Errorf("HTTP %s of 2 MiB carries a RetryInfo", c.name)
			}
		}
	}
	// Within the limit all is as before.
	if _, err := tablev1.NewTableServiceClient(e.conn).GetTable(e.as("tok-alice"), &tablev1.GetTableRequest{TableId: "t1"}); err != nil {
		t.Errorf("a small GetTable: %v", err)
	}
}
