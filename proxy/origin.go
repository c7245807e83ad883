package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/resolute-ml/resolute"
)

// IsWebSocket says whether r asks to switch protocols, as a websocket does.
func IsWebSocket(r *http.Request) bool {
	return r.Header.Get("Upgrade") != ""
}

// CheckOrigin refuses a request that a browser sent from a page of another
// origin than the one it is sent to, as net/http's CrossOriginProtection
// does for unsafe methods: Sec-Fetch-Site, when a browser sends it, must be
// same-origin (or none: a person's own navigation); else Origin, when sent,
// must name the request's Host. Clients that are not browsers send neither
// and pass. Websockets need it whatever their method (a GET): a browser
// lets any page open one to any site, with that site's cookies. The proxy
// asks it of every request that may change something too: tasks on hosts
// of their own under one domain are one site, whose SameSite cookies go
// with the forms and fetches a page of one task sends to another.
func CheckOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	switch r.Header.Get("Sec-Fetch-Site") {
	case "":
	case "same-origin", "none":
		return nil
	default:
		return crossOrigin(r, origin)
	}
	if origin == "" {
		return nil
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return nil
	}
	return crossOrigin(r, origin)
}

// isSafe says whether a request of method changes nothing, as HTTP means
// it: GET, HEAD, OPTIONS.
func isSafe(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// crossOrigin is the refusal of r, from a page of origin.
func crossOrigin(r *http.Request, origin string) error {
	if origin == "" {
		origin = "another site"
	}
	if IsWebSocket(r) {
		return resolute.Errorf(resolute.EForbidden, "cross-origin websocket refused: a page of %s may not open one to %s", origin, r.Host)
	}
	return resolute.Errorf(resolute.EForbidden, "cross-origin request refused: a page of %s may not %s to %s", origin, r.Method, r.Host)
}
