package gateway

import (
	"embed"
	"io/fs"
	"net/http"
)

// consoleFiles is the table console: plain HTML, JS and CSS, embedded in
// the binary, served on the HTTP side at / (index) and /console/. It
// calls the HTTP/JSON side with the token its user signs in with, so it
// has no trust of its own.
//
//go:embed console
var consoleFiles embed.FS

// registerConsole serves the table console on mux.
func registerConsole(mux *http.ServeMux) {
	sub, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	secure := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Referrer-Policy", "no-referrer")
			w.Header().Set("Cache-Control", "no-cache")
			h.ServeHTTP(w, r)
		})
	}
	mux.Handle("GET /{$}", secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, sub, "index.html")
	})))
	mux.Handle("GET /console/", secure(http.StripPrefix("/console/", files)))
}
