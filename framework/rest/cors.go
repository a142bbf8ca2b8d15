package rest

import (
	"net/http"
	"strings"
)

// corsAllowedHeaders are Jetty CrossOriginFilter's defaults plus
// Authorization, which authenticated browser UIs need.
const corsAllowedHeaders = "X-Requested-With,Content-Type,Accept,Origin,Authorization"

// cors applies access.control.allow.origin / access.control.allow.methods.
// It answers preflight requests itself (returning true); for other
// requests it only adds headers.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || s.cfg.CORSAllowOrigin == "" {
		return false
	}
	if !originAllowed(s.cfg.CORSAllowOrigin, origin) {
		return false
	}
	w.Header().Add("Vary", "Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if preflight {
		m := r.Header.Get("Access-Control-Request-Method")
		if !listHas(s.cfg.CORSAllowMethods, m) {
			w.WriteHeader(http.StatusOK) // no CORS headers: the browser refuses
			return true
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Set("Access-Control-Allow-Methods", s.cfg.CORSAllowMethods)
		w.Header().Set("Access-Control-Allow-Headers", corsAllowedHeaders)
		w.Header().Set("Access-Control-Max-Age", "1800")
		w.WriteHeader(http.StatusOK)
		return true
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Allow-Credentials", "true")
	return false
}

func originAllowed(allowed, origin string) bool {
	for _, a := range strings.Split(allowed, ",") {
		if a = strings.TrimSpace(a); a == "*" || strings.EqualFold(a, origin) {
			return true
		}
	}
	return false
}

func listHas(list, v string) bool {
	for _, a := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(a), v) {
			return true
		}
	}
	return false
}
