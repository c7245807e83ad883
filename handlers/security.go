package handlers

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/resolute-ml/resolute"
)

// ContentSecurityPolicy is what the master's own pages may load and do:
// scripts only from this origin (the templates load every script by src,
// none inline), styles from this origin plus inline style attributes (the
// templates and uPlot set some), images from here or data: URLs, fetches,
// event streams and websockets back to this origin; no plugins, no <base>
// elsewhere, forms posting only here, and no other site may frame a page.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; " +
	"base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders sets the headers every answer of the master's own gets:
// its Content-Security-Policy, no framing, no content sniffing, and no
// full URL in the Referer sent to other sites. (What tasks serve is on the
// task origin, TaskHandler, with the headers its services give.)
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		next.ServeHTTP(w, r)
	})
}

// refuseCrossOrigin refuses requests that change state (anything but GET,
// HEAD and OPTIONS) sent by a page of another origin, told by the browser's
// Sec-Fetch-Site header or, from older browsers, by an Origin that is not
// this Host. Clients that are not browsers (the CLI, the harness, curl)
// send neither header and pass; their credentials are tokens a page of
// another origin cannot attach.
func (s *Server) refuseCrossOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from := r.Header.Get("Origin")
		if from == "" {
			from = "a page of another site"
		}
		s.error(w, r, resolute.Errorf(resolute.EForbidden,
			"cross-origin request refused: %s may not %s %s here; use this site's own pages, or the API with a token (det)",
			from, r.Method, r.URL.Path))
	}))
	return p.Handler(next)
}

// client is what the master knows of who sent a request: the address to
// throttle logins by, and whether the browser reached it over HTTPS (its
// own TLS, or a trusted proxy's).
type client struct {
	addr  string
	https bool
}

type clientKey struct{}

// identifyClient finds the client behind a request. A request from one of
// cfg.TrustedProxies (a TLS-terminating load balancer) is believed about
// the scheme (X-Forwarded-Proto) and the client's address (the nearest
// address in X-Forwarded-For that is not itself a trusted proxy); from
// anywhere else those headers are ignored, since anyone can send them.
func (s *Server) identifyClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := client{addr: remoteHost(r.RemoteAddr), https: r.TLS != nil}
		if peer, err := netip.ParseAddr(c.addr); err == nil && trusted(s.cfg.TrustedProxies, peer) {
			if proto := lastValue(r.Header.Values("X-Forwarded-Proto")); proto != "" {
				c.https = strings.EqualFold(proto, "https")
			}
			if a, ok := forwardedFor(r.Header.Values("X-Forwarded-For"), s.cfg.TrustedProxies); ok {
				c.addr = a.String()
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
	})
}

// clientOf returns the client identifyClient found, or what the
// connection says when it did not run (tests of single handlers).
func clientOf(r *http.Request) client {
	if c, ok := r.Context().Value(clientKey{}).(client); ok {
		return c
	}
	return client{addr: remoteHost(r.RemoteAddr), https: r.TLS != nil}
}

// clientAddr is the address logins are throttled by.
func clientAddr(r *http.Request) string { return clientOf(r).addr }

// secureCookies says whether cookies set in answer to r must be Secure.
func (s *Server) secureCookies(r *http.Request) bool {
	return s.cfg.SecureCookies || clientOf(r).https
}

func remoteHost(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}

func trusted(proxies []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// lastValue is the last comma-separated value of a header's lines: what
// the nearest proxy added.
func lastValue(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	line := lines[len(lines)-1]
	return strings.TrimSpace(line[strings.LastIndex(line, ",")+1:])
}

// forwardedFor walks X-Forwarded-For from the right (the nearest hop)
// past the trusted proxies and returns the first address that is not one:
// the client, as far as anyone trusted can say. Addresses further left were
// written by the client itself and prove nothing.
func forwardedFor(lines []string, proxies []netip.Prefix) (netip.Addr, bool) {
	var hops []string
	for _, line := range lines {
		hops = append(hops, strings.Split(line, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return netip.Addr{}, false
		}
		if a = a.Unmap(); !trusted(proxies, a) {
			return a, true
		}
	}
	return netip.Addr{}, false
}
