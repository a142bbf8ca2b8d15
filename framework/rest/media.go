package rest

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Kafka Connect's resources declare @Consumes and @Produces
// application/json, and Jersey enforces both before a resource method
// runs: a request whose Content-Type is not JSON is a 415 (also when a
// body comes without any Content-Type, which Jersey reads as
// application/octet-stream), and one whose Accept admits no JSON is a 406.
// The 415 applies to every endpoint of the connectors, connector-plugins
// and admin/loggers resources whatever the method, as it does in Kafka
// Connect; GET /, /health and /openapi.json take no body and only
// negotiate Accept. Both checks come after authentication, so an anonymous
// client learns nothing from them.

const mediaJSON = "application/json"

// consumesJSON reports whether a route belongs to a resource that declares
// @Consumes(application/json) in Kafka Connect.
func consumesJSON(rt *route) bool {
	return strings.HasPrefix(rt.pattern, "/connectors") || strings.HasPrefix(rt.pattern, "/connector-plugins") ||
		strings.HasPrefix(rt.pattern, "/admin/")
}

// checkContentType refuses a declared Content-Type other than JSON
// (parameters such as charset are allowed). A malformed one is a 400, as
// Jetty answers it.
func checkContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if strings.TrimSpace(ct) == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && !strings.Contains(mt, "/") {
		err = errors.New("a media type is type/subtype")
	}
	if err != nil {
		return badRequest(fmt.Sprintf("malformed Content-Type header %q: %v", ct, err))
	}
	if mt != mediaJSON {
		return unsupportedMedia(mt)
	}
	return nil
}

// checkBodyType refuses a body sent without a Content-Type: Jersey does
// not guess that it is JSON.
func checkBodyType(r *http.Request, body []byte) error {
	if len(body) > 0 && strings.TrimSpace(r.Header.Get("Content-Type")) == "" {
		return unsupportedMedia("")
	}
	return nil
}

func unsupportedMedia(got string) error {
	if got == "" {
		got = "no Content-Type"
	}
	return &httpError{code: http.StatusUnsupportedMediaType,
		msg: fmt.Sprintf("HTTP 415 Unsupported Media Type: this endpoint consumes application/json (the request has %s)", got)}
}

// acceptsJSON reports whether an Accept header admits application/json.
// As in Jersey, a quality of 0 does not exclude a range, and an absent or
// empty header accepts anything.
func acceptsJSON(h http.Header) bool {
	return accepts(h, "application", "json")
}

// acceptsText reports whether an Accept header admits text/plain.
func acceptsText(h http.Header) bool {
	return accepts(h, "text", "plain")
}

func accepts(h http.Header, typ, sub string) bool {
	vals := h.Values("Accept")
	seen := false
	for _, v := range vals {
		for _, rng := range strings.Split(v, ",") {
			rng = strings.TrimSpace(rng)
			if rng == "" {
				continue
			}
			seen = true
			mt := strings.ToLower(strings.TrimSpace(strings.SplitN(rng, ";", 2)[0]))
			t, s, ok := strings.Cut(mt, "/")
			if !ok {
				continue
			}
			if (t == "*" && s == "*") || (t == typ && (s == "*" || s == sub)) {
				return true
			}
		}
	}
	return !seen
}

func notAcceptable(h http.Header) error {
	return &httpError{code: http.StatusNotAcceptable,
		msg: fmt.Sprintf("HTTP 406 Not Acceptable: this endpoint produces application/json (Accept: %s)", strings.Join(h.Values("Accept"), ", "))}
}

// allowed lists the methods served at an escaped path on a listener, in
// Jersey's OPTIONS form: HEAD with GET, and OPTIONS itself; nil if no
// route has the path.
func (s *Server) allowed(escapedPath string, withPublic, withAdmin bool) ([]string, bool) {
	var methods []string
	for _, rt := range s.routes {
		if (rt.admin && (!withAdmin || s.levels == nil)) || (!rt.admin && !withPublic) {
			continue
		}
		if r, _, _, _ := match([]*route{rt}, rt.method, escapedPath); r == nil {
			continue
		}
		methods = append(methods, rt.method)
		if rt.method == http.MethodGet {
			methods = append(methods, http.MethodHead)
		}
	}
	if methods == nil {
		return nil, false
	}
	methods = append(methods, http.MethodOptions)
	slices.Sort(methods)
	return slices.Compact(methods), true
}

// options answers OPTIONS as Jersey's default handler does: 200 with an
// Allow header and, when the client accepts text/plain, the same list as
// a text body (otherwise an empty JSON-typed one).
func options(w http.ResponseWriter, r *http.Request, methods []string) {
	w.Header().Set("Allow", strings.Join(methods, ","))
	if !acceptsText(r.Header) {
		w.Header().Set("Content-Type", mediaJSON)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return
	}
	body := strings.Join(methods, ", ")
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(body))
}

// absoluteLocation resolves a Location path against the request's base
// URI (scheme and Host), as JAX-RS does for Response.created.
func absoluteLocation(r *http.Request, path string) string {
	if r.Host == "" || strings.Contains(path, "://") {
		return path
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: r.Host}
	return u.String() + path
}
