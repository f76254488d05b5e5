package opwallet

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// openAPIFile is the machine-readable wire format, beside the operator's
// guide.
const openAPIFile = "../../../docs/operator-wallet.openapi.yaml"

// openAPI is the parsed document, with $ref resolution.
type openAPI struct {
	t   *testing.T
	doc map[string]any
}

func loadOpenAPI(t *testing.T) *openAPI {
	t.Helper()
	raw, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", openAPIFile, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Fatalf("%s: openapi %q, want 3.x", openAPIFile, v)
	}
	return &openAPI{t: t, doc: doc}
}

// at is the object at a slash-separated path from the root (JSON pointer
// escapes: ~1 for /), following the $refs on the way; it fails the test
// when there is none.
func (o *openAPI) at(p string) map[string]any {
	o.t.Helper()
	var node any = o.doc
	for _, k := range strings.Split(strings.Trim(p, "/"), "/") {
		if k == "" {
			continue
		}
		k = strings.ReplaceAll(strings.ReplaceAll(k, "~1", "/"), "~0", "~")
		m, _ := node.(map[string]any)
		if m != nil {
			m = o.deref(m) // a $ref on the way
		}
		if node = m[k]; node == nil {
			o.t.Fatalf("%s: nothing at %s", openAPIFile, p)
		}
	}
	m, ok := node.(map[string]any)
	if !ok {
		o.t.Fatalf("%s: %s is not an object", openAPIFile, p)
	}
	return o.deref(m)
}

// deref follows a local $ref.
func (o *openAPI) deref(m map[string]any) map[string]any {
	o.t.Helper()
	for i := 0; i < 10; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		if !strings.HasPrefix(ref, "#/") {
			o.t.Fatalf("%s: non-local $ref %q", openAPIFile, ref)
		}
		m = o.at(ref[1:])
	}
	o.t.Fatalf("%s: $ref loop", openAPIFile)
	return nil
}

// schema is an object schema flattened: its properties (each resolved,
// the allOf parts merged) and its required properties.
type schema struct {
	props    map[string]map[string]any
	required []string
}

func (o *openAPI) schema(m map[string]any) schema {
	o.t.Helper()
	m = o.deref(m)
	s := schema{props: map[string]map[string]any{}}
	for _, part := range asList(m["allOf"]) {
		sub := o.schema(part.(map[string]any))
		for k, v := range sub.props {
			s.props[k] = mergeSchema(s.props[k], v)
		}
		s.required = append(s.required, sub.required...)
	}
	props, _ := m["properties"].(map[string]any)
	for k, v := range props {
		s.props[k] = mergeSchema(s.props[k], o.deref(v.(map[string]any)))
	}
	for _, r := range asList(m["required"]) {
		s.required = append(s.required, r.(string))
	}
	sort.Strings(s.required)
	s.required = slices.Compact(s.required)
	return s
}

// mergeSchema merges the keywords of b into a (b's win).
func mergeSchema(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// jsonFields are a Go struct type's JSON field names (but "-"), with the
// JSON Schema type each encodes to and whether it is omitted when empty.
func jsonFields(t reflect.Type) map[string]struct {
	typ       string
	omitempty bool
} {
	out := map[string]struct {
		typ       string
		omitempty bool
	}{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		var typ string
		switch {
		case f.Type == reflect.TypeFor[time.Time]():
			typ = "string"
		case f.Type.Kind() == reflect.String:
			typ = "string"
		case f.Type.Kind() == reflect.Int64 || f.Type.Kind() == reflect.Int:
			typ = "integer"
		case f.Type.Kind() == reflect.Bool:
			typ = "boolean"
		default:
			typ = f.Type.String()
		}
		out[name] = struct {
			typ       string
			omitempty bool
		}{typ, strings.Contains(opts, "omitempty")}
	}
	return out
}

// sameFields checks that schema s has exactly the JSON fields of Go type
// t, each of the type it encodes to.
func sameFields(t *testing.T, what string, s schema, goType reflect.Type) {
	t.Helper()
	fields := jsonFields(goType)
	for name, f := range fields {
		p, ok := s.props[name]
		if !ok {
			t.Errorf("%s: field %q of %s is not in the schema", what, name, goType)
			continue
		}
		if typ, _ := p["type"].(string); typ != f.typ {
			t.Errorf("%s: property %q is of type %q in the schema, %q in %s", what, name, typ, f.typ, goType)
		}
	}
	for name := range s.props {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s: property %q of the schema is no field of %s", what, name, goType)
		}
	}
}

// constants are the string constants of this package's opwallet.go whose
// names start with prefix, by value.
func constants(t *testing.T, prefix string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "opwallet.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					out = append(out, v)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func strs(l []any) []string {
	out := make([]string, 0, len(l))
	for _, v := range l {
		out = append(out, v.(string))
	}
	sort.Strings(out)
	return out
}

// requestSchema is operation op's request body schema.
func (o *openAPI) requestSchema(op string) schema {
	return o.schema(o.at("/paths/~1" + op + "/post/requestBody/content/application~1json/schema"))
}

// TestOpenAPIMatchesClient checks docs/operator-wallet.openapi.yaml
// against the client, so that they cannot drift: its paths are the
// operations; each request body schema has exactly the fields of the Go
// type the client sends, of their JSON types, requires those the client
// always sends, and holds every field of the requests the client actually
// sends (captured from the wire); the answers' schemas are Result and
// Refusal; the signature headers are in every operation and answer; the
// refusal codes and round statuses are the package's constants; and the
// examples decode into the Go types with no unknown field.
func TestOpenAPIMatchesClient(t *testing.T) {
	o := loadOpenAPI(t)

	// The paths are the operations.
	ops := constants(t, "Op")
	paths := o.at("/paths")
	var got []string
	for p := range paths {
		got = append(got, strings.TrimPrefix(p, "/"))
	}
	sort.Strings(got)
	if !slices.Equal(got, ops) {
		t.Fatalf("paths %v, operations %v", got, ops)
	}

	// What the client sends, captured from the wire: every field set,
	// then the fewest (omitempty fields empty).
	var mu sync.Mutex
	sent := map[string][]map[string]any{}
	srv, _ := fakeOperator(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("%s: %v", r.URL.Path, err)
		}
		mu.Lock()
		sent[path.Base(r.URL.Path)] = append(sent[path.Base(r.URL.Path)], m)
		mu.Unlock()
		id, _ := m["transaction_id"].(string)
		signed(w, r, http.StatusOK, Result{TransactionID: id, Balance: 1})
	})
	c := newClient(t, srv.URL, nil)
	ctx := context.Background()
	full := Transaction{TransactionID: "tx-1", PlayerID: "alice", RoundID: "r1", TableID: "t1", Amount: 5, Currency: "EUR",
		Reason: "bet", RolledBackID: "tx-0", Status: RoundCompleted, SessionID: "ls-1", Time: time.Now()}
	for _, tx := range []Transaction{full, {TransactionID: "tx-2"}} {
		for _, call := range []func(context.Context, Transaction) (Result, error){c.Debit, c.Credit, c.Rollback, c.RoundEnd} {
			if _, err := call(ctx, tx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, req := range []BalanceRequest{{PlayerID: "alice", Currency: "EUR"}, {}} {
		if _, err := c.Balance(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	jsonType := func(v any) string {
		switch v.(type) {
		case string:
			return "string"
		case float64:
			return "integer"
		case bool:
			return "boolean"
		}
		return reflect.TypeOf(v).String()
	}
	for _, op := range ops {
		s := o.requestSchema(op)
		goType := reflect.TypeFor[Transaction]()
		if op == OpBalance {
			goType = reflect.TypeFor[BalanceRequest]()
		}
		sameFields(t, op+" request", s, goType)
		if len(sent[op]) != 2 {
			t.Fatalf("%s: %d requests captured, want 2", op, len(sent[op]))
		}
		for _, body := range sent[op] {
			for k, v := range body {
				p, ok := s.props[k]
				if !ok {
					t.Errorf("%s: the client sends %q, not in the schema", op, k)
				} else if typ, _ := p["type"].(string); typ != jsonType(v) {
					t.Errorf("%s: the client sends %q as %s, the schema says %s", op, k, jsonType(v), typ)
				}
			}
		}
		// The schema's base requires exactly what the client always sends.
		always := sortedKeys(sent[op][1])
		base := s
		if op != OpBalance {
			base = o.schema(o.at("/components/schemas/Transaction"))
		}
		if !slices.Equal(base.required, always) {
			t.Errorf("%s: the schema requires %v, the client always sends %v", op, base.required, always)
		}
		for _, r := range s.required {
			if _, ok := sent[op][0][r]; !ok {
				t.Errorf("%s: the schema requires %q, which the client does not send", op, r)
			}
		}
	}
	if r := o.requestSchema(OpRollback).required; !slices.Contains(r, "rolled_back_transaction_id") {
		t.Errorf("a rollback does not require rolled_back_transaction_id: %v", r)
	}
	if r := o.requestSchema(OpRoundEnd).required; !slices.Contains(r, "status") {
		t.Errorf("a round_end does not require status: %v", r)
	}

	// The answers, the signature headers.
	for _, op := range ops {
		post := o.at("/paths/~1" + op + "/post")
		var params []string
		for _, p := range asList(post["parameters"]) {
			pm := o.deref(p.(map[string]any))
			if pm["in"] == "header" && pm["required"] == true {
				params = append(params, pm["name"].(string))
			}
		}
		sort.Strings(params)
		if want := []string{HeaderSignature, HeaderTimestamp}; !slices.Equal(params, want) {
			t.Errorf("%s: required header parameters %v, want %v", op, params, want)
		}
		responses := o.at("/paths/~1" + op + "/post/responses")
		if _, ok := responses["200"]; !ok {
			t.Errorf("%s: no 200 answer", op)
		}
		for status := range responses {
			code, err := strconv.Atoi(status)
			if err != nil || (code != 200 && (code < 400 || code > 499 || code == 408 || code == 429)) {
				t.Errorf("%s: answer %q: want 200 or a definite refusal (4xx but 408 and 429)", op, status)
				continue
			}
			resp := o.at("/paths/~1" + op + "/post/responses/" + status)
			headers, _ := resp["headers"].(map[string]any)
			if headers[HeaderTimestamp] == nil || headers[HeaderSignature] == nil {
				t.Errorf("%s %s: the answer's signature headers are not in the schema", op, status)
			}
			s := o.schema(o.at("/paths/~1" + op + "/post/responses/" + status + "/content/application~1json/schema"))
			if code != 200 {
				sameFields(t, op+" "+status, s, reflect.TypeFor[Refusal]())
				continue
			}
			if op == OpBalance {
				// A subset of Result: a balance names no transaction.
				for k := range s.props {
					if _, ok := jsonFields(reflect.TypeFor[Result]())[k]; !ok {
						t.Errorf("balance 200: property %q is no field of Result", k)
					}
				}
				continue
			}
			sameFields(t, op+" 200", s, reflect.TypeFor[Result]())
			if !slices.Contains(s.required, "transaction_id") {
				t.Errorf("%s 200: transaction_id (the echo chemmy checks) is not required", op)
			}
		}
	}
	if p := o.at("/components/parameters/Signature/schema"); p["pattern"] != "^v1=[0-9a-f]{64}$" {
		t.Errorf("signature pattern %v", p["pattern"])
	}
	if sig := Sign([]byte("k"), 1, "/x", nil); len(sig) != len("v1=")+64 || !strings.HasPrefix(sig, "v1=") {
		t.Errorf("Sign gives %q, not what the schema's pattern says", sig)
	}

	// The refusal codes and the round statuses are the constants.
	refusal := o.schema(o.at("/components/schemas/Refusal"))
	if codes := strs(asList(refusal.props["code"]["examples"])); !slices.Equal(codes, constants(t, "Code")) {
		t.Errorf("refusal codes %v in the schema, %v in the package", codes, constants(t, "Code"))
	}
	tx := o.schema(o.at("/components/schemas/Transaction"))
	if st := strs(asList(tx.props["status"]["enum"])); !slices.Equal(st, constants(t, "Round")) {
		t.Errorf("round statuses %v in the schema, %v in the package", st, constants(t, "Round"))
	}

	// Every example decodes into its Go type, no field unknown.
	strict := func(what string, ex any, into any) {
		b, _ := json.Marshal(ex)
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(into); err != nil {
			t.Errorf("%s: example %s: %v", what, b, err)
		}
	}
	for _, op := range ops {
		ex := o.at("/paths/~1" + op + "/post/requestBody/content/application~1json")["example"]
		if ex == nil {
			t.Errorf("%s: no request example", op)
			continue
		}
		if op == OpBalance {
			strict(op, ex, new(BalanceRequest))
		} else {
			strict(op, ex, new(Transaction))
		}
	}
	strict("balance 200", o.at("/paths/~1balance/post/responses/200/content/application~1json")["example"], new(Result))
	strict("Done", o.at("/components/responses/Done/content/application~1json")["example"], new(Result))
	strict("Refused", o.at("/components/responses/Refused/content/application~1json")["example"], new(Refusal))
}
