package resolute_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
)

// browserResolve resolves ref against base as a browser does with a link
// or a Location header (the WHATWG URL parser, for http's special scheme):
// leading and trailing C0 controls and spaces are trimmed, tabs and
// newlines anywhere are dropped, and a backslash before the query is a
// slash; then the reference resolves as RFC 3986 says.
func browserResolve(base *url.URL, ref string) (*url.URL, error) {
	ref = strings.TrimFunc(ref, func(r rune) bool { return r <= 0x20 })
	ref = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(ref)
	end := len(ref)
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		end = i
	}
	ref = strings.ReplaceAll(ref[:end], `\`, "/") + ref[end:]
	u, err := url.Parse(ref)
	if err != nil {
		return nil, err
	}
	return base.ResolveReference(u), nil
}

// FuzzLocalPath: whatever LocalPath accepts, a browser resolves on this
// site, as written and as net/http's redirect writes it in Location.
func FuzzLocalPath(f *testing.F) {
	for _, seed := range []string{"/experiments?state=ACTIVE#top", "/", "//evil.example", "/\t/evil.example",
		"/\n/evil.example", `/\evil.example`, `\/evil.example`, " //evil.example", "https://evil.example",
		"javascript:alert(1)", "/%2F/evil.example", "/./..//evil.example", "/a/..//evil.example", "/\x00/x",
		"/\u3002/evil", "/@evil.example", "/a@evil.example:80/", "/?next=//evil.example", "/#//evil.example",
		"/\u0085/evil", "/%09/evil", "/ /evil", "/..\\evil"} {
		f.Add(seed)
	}
	base, _ := url.Parse("http://master.example:8080/login?redirect=x")
	f.Fuzz(func(t *testing.T, target string) {
		if !resolute.LocalPath(target) {
			return
		}
		onSite := func(what, ref string) {
			u, err := browserResolve(base, ref)
			if err != nil {
				t.Fatalf("LocalPath(%q) accepted what a browser would parse differently (%s %q): %v", target, what, ref, err)
			}
			if u.Scheme != base.Scheme || u.Host != base.Host || u.User != nil {
				t.Fatalf("LocalPath(%q): %s %q takes a browser to %s", target, what, ref, u)
			}
		}
		onSite("as written", target)
		w := httptest.NewRecorder()
		http.Redirect(w, httptest.NewRequest("POST", base.String(), nil), target, http.StatusSeeOther)
		onSite("in Location", w.Header().Get("Location"))
	})
}
