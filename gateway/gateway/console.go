package gateway

import "net/http"

// registerConsole serves the table console (added later).
func registerConsole(mux *http.ServeMux) {}
