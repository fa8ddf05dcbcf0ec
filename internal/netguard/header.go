package netguard

import (
	"fmt"
	"net/http"
	"strings"
)

// stepHeaders is the allow-list of request headers a step may set: content
// negotiation, conditional and range requests, caching, and the few a
// campus page's own scripts send (X-Requested-With, a User-Agent naming
// the client; Referer and Origin,
// which the proxy accepts only for the request's own origin). Everything
// else is refused: credentials and the session (the proxy attaches them),
// framing and hop-by-hop headers (the HTTP stack sets them), and every
// header a server or its front end reads as another client address,
// another user or another path (X-Forwarded-For, X-Real-IP,
// X-Original-URL, Remote-User, CAS-User, ...), whatever their spelling.
var stepHeaders = map[string]bool{
	"Accept":              true,
	"Accept-Language":     true,
	"Content-Type":        true,
	"If-None-Match":       true,
	"If-Modified-Since":   true,
	"If-Match":            true,
	"If-Unmodified-Since": true,
	"If-Range":            true,
	"Range":               true,
	"Cache-Control":       true,
	"Pragma":              true,
	"X-Requested-With":    true,
	"User-Agent":          true,
	"Referer":             true,
	"Origin":              true,
}

// stackHeaders are headers only the proxy (credentials) or the HTTP
// stack (framing, hop-by-hop) set: refused with a message that says so.
var stackHeaders = map[string]bool{
	"Cookie": true, "Cookie2": true, "Authorization": true, "Proxy-Authorization": true, "Host": true,
	"Accept-Encoding": true, "Content-Length": true, "Transfer-Encoding": true, "Te": true, "Trailer": true,
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Upgrade": true, "Expect": true,
	"Set-Cookie": true, "Set-Cookie2": true, "Via": true, "Http2-Settings": true,
}

// StepHeaderNames lists the allow-list, sorted.
func StepHeaderNames() []string {
	return []string{"Accept", "Accept-Language", "Cache-Control", "Content-Type", "If-Match", "If-Modified-Since",
		"If-None-Match", "If-Range", "If-Unmodified-Since", "Origin", "Pragma", "Range", "Referer", "User-Agent", "X-Requested-With"}
}

// campusRefused are the allow-list's headers a campus request may not
// carry: a byte range of a page. A page that shows a session whole
// (redacted whole) would otherwise give a step the session a piece at a
// time, none of which is a credential the redactor could know; the step
// joins them. Web requests, which carry no session, take them.
var campusRefused = []string{"Range", "If-Range"}

// CampusRangeHeader returns the first header of h (canonical names) that a
// campus request may not carry, or "".
func CampusRangeHeader(h http.Header) string {
	for _, k := range campusRefused {
		if _, ok := h[k]; ok {
			return k
		}
	}
	return ""
}

// CampusRefusedHeader reports whether a step's header name (folded as a
// server reads it) is one a campus request may not carry.
func CampusRefusedHeader(name string) bool {
	f := FoldHeaderName(name)
	for _, k := range campusRefused {
		if f == k {
			return true
		}
	}
	return false
}

// FoldHeaderName is the name a server may read a header as: "_" folded to
// "-" (many front ends and CGI-style servers treat them alike) and the
// canonical letter case.
func FoldHeaderName(k string) string {
	return http.CanonicalHeaderKey(strings.ReplaceAll(k, "_", "-"))
}

// CheckStepHeader decides a header name a step sets: it returns the folded
// canonical name when the allow-list has it, else an error that says
// which headers a step may set.
func CheckStepHeader(name string) (string, error) {
	f := FoldHeaderName(name)
	if stackHeaders[f] {
		return "", fmt.Errorf("header %s is set by the proxy or the HTTP stack, not by a step", name)
	}
	if !stepHeaders[f] {
		return "", fmt.Errorf("header %s is not one a step may set; a step sets only %s",
			name, strings.Join(StepHeaderNames(), ", "))
	}
	return f, nil
}
