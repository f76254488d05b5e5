package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"sigs.k8s.io/yaml"
)

// openAPIDoc is the embedded OpenAPI document, decoded.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	return doc
}

// TestOpenAPIMatchesPolicy: the document has one operation for each public
// method of the policy and no other, each at the method's path, with the
// method's request and response messages and its roles; every schema it
// refers to is in it.
func TestOpenAPIMatchesPolicy(t *testing.T) {
	doc := openAPIDoc(t)
	if v := doc["openapi"]; v != "3.1.0" {
		t.Errorf("openapi %v", v)
	}
	paths, _ := doc["paths"].(map[string]any)
	var inDoc []string
	for p := range paths {
		inDoc = append(inDoc, p)
	}
	slices.Sort(inDoc)
	var public []string
	for _, pm := range PublicMethods() {
		public = append(public, pm.Full)
		op, _ := paths[pm.Full].(map[string]any)["post"].(map[string]any)
		if op == nil {
			t.Errorf("%s: no POST operation in the document", pm.Full)
			continue
		}
		svc, method, _ := splitMethod(pm.Full)
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc + "." + method))
		if err != nil {
			t.Fatal(err)
		}
		md := d.(protoreflect.MethodDescriptor)
		if got := schemaRef(op["requestBody"], "application/json"); got != string(md.Input().FullName()) {
			t.Errorf("%s: request schema %q, want %s", pm.Full, got, md.Input().FullName())
		}
		ct := "application/json"
		if md.IsStreamingServer() {
			ct = ndjsonContentType
		}
		ok, _ := op["responses"].(map[string]any)["200"]
		if got := schemaRef(ok, ct); got != string(md.Output().FullName()) {
			t.Errorf("%s: %s response schema %q, want %s", pm.Full, ct, got, md.Output().FullName())
		}
		var roles []string
		for _, r := range op["x-chemmy-roles"].([]any) {
			roles = append(roles, r.(string))
		}
		if !slices.Equal(roles, pm.Roles) {
			t.Errorf("%s: x-chemmy-roles %q, want %q", pm.Full, roles, pm.Roles)
		}
	}
	if !slices.Equal(inDoc, public) {
		t.Errorf("paths of the document %q\nare not the public methods %q: run make generate", inDoc, public)
	}
	// Every $ref resolves.
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				name, _ := strings.CutPrefix(ref, "#/components/schemas/")
				if _, ok := schemas[name]; !ok {
					t.Errorf("$ref %s: no such schema", ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
}

// schemaRef is the name of the schema a request body or response refers
// to for content type ct.
func schemaRef(v any, ct string) string {
	m, _ := v.(map[string]any)
	c, _ := m["content"].(map[string]any)
	s, _ := c[ct].(map[string]any)
	sch, _ := s["schema"].(map[string]any)
	ref, _ := sch["$ref"].(string)
	name, _ := strings.CutPrefix(ref, "#/components/schemas/")
	return name
}

// TestOpenAPIPathsServed: the gateway serves the document at
// OpenAPIPath without a token, and answers every path of it: POST
// without a token is the gateway's UNAUTHENTICATED (401), not the 404 of
// a path it does not serve (which a path outside the document gets).
func TestOpenAPIPathsServed(t *testing.T) {
	e := startEnv(t)
	base := "http://" + e.gw.HTTPAddr()
	resp, err := http.Get(base + OpenAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, openAPI) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/yaml") {
		t.Fatalf("GET %s: %d %s, %d bytes", OpenAPIPath, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	var doc map[string]any
	if err := yaml.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("no paths")
	}
	post := func(path string) (int, string) {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		b, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(b, &m)
		code, _ := m["code"].(string)
		return resp.StatusCode, code
	}
	for path := range paths {
		if status, code := post(path); status != http.StatusUnauthorized || code != "unauthenticated" {
			t.Errorf("POST %s without a token: %d %q, want 401 unauthenticated", path, status, code)
		}
	}
	if status, _ := post("/chemmy.table.v1.TableService/NoSuchMethod"); status != http.StatusNotFound {
		t.Errorf("a path outside the document: %d, want 404", status)
	}
}
