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
// lets any page open one to any site, with that site's cookies.
func CheckOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	switch r.Header.Get("Sec-Fetch-Site") {
	case "":
	case "same-origin", "none":
		return nil
	default:
		return crossOrigin(origin, r.Host)
	}
	if origin == "" {
		return nil
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return nil
	}
	return crossOrigin(origin, r.Host)
}

// crossOrigin is the refusal of a request from a page of origin.
func crossOrigin(origin, host string) error {
	if origin == "" {
		origin = "another site"
	}
	return resolute.Errorf(resolute.EForbidden, "cross-origin websocket refused: a page of %s may not open one to %s", origin, host)
}
