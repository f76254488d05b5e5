package gateway

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of the HTTP/JSON side: every public
// method of the policy at the path it is served on, with its request,
// response and error in JSON. make generate writes it
// (gateway/protoc-gen-openapi, buf.gen.openapi.yaml) and make
// check-generated keeps it up to date.
//
//go:embed openapi.yaml
var openAPI []byte

// OpenAPIPath is where the HTTP side serves the OpenAPI document, to
// anybody (no token: it tells nothing the contracts do not).
const OpenAPIPath = "/openapi.yaml"

// registerOpenAPI serves the OpenAPI document on mux at OpenAPIPath.
func registerOpenAPI(mux *http.ServeMux) {
	mux.HandleFunc("GET "+OpenAPIPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(openAPI)
	})
}
