package handlers

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/views"
)

const flashCookie = "flash"

// render writes a component with status. It renders into a buffer first so
// a failing component gives a clean 500 instead of half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.logger.Error("render failed", "path", r.URL.Path, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// shell builds the view model every signed-in page shares. It reads (and
// clears) the flash message.
func (s *Server) shell(r *http.Request, title, nav string) views.Shell {
	u, _ := userFrom(r)
	sh := views.Shell{
		Title: title, Nav: nav, User: u, Asset: s.assets.URL,
		HTMX: s.assets.Has("vendor/htmx.min.js"), Version: s.cfg.Master.Version, LiveSince: liveSeqFrom(r),
	}
	if c, err := r.Cookie(flashCookie); err == nil {
		if v, err := url.QueryUnescape(c.Value); err == nil && len(v) > 2 {
			sh.Flash = &views.Flash{Kind: v[:2], Message: v[2:]}
			if sh.Flash.Kind == "er" {
				sh.Flash.Kind = "error"
			}
		}
	}
	if u.Admin { // only an administrator can do something about it
		sh.NoAdminPassword = s.adminHasNoPassword(r.Context())
	}
	if m, err := s.db.ClusterMessage(r.Context()); err == nil && m.ActiveAt(s.now()) {
		sh.ClusterMessage = m.Message
	}
	return sh
}

// adminHasNoPassword drives the warning banner.
func (s *Server) adminHasNoPassword(ctx context.Context) bool {
	admin, err := s.db.UserByUsername(ctx, resolute.AdminUsername)
	return err == nil && admin.Active && admin.PasswordHash == ""
}

// redirect answers a successful form post: 303 to target, with a flash
// message for the next page. htmx requests get HX-Redirect.
func redirect(w http.ResponseWriter, r *http.Request, target, flashKind, message string) {
	if message != "" {
		kind := "ok"
		if flashKind == "error" {
			kind = "er"
		}
		http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(kind + message), Path: "/",
			HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: 60, Secure: clientOf(r).https})
	}
	if r.Header.Get("HX-Request") != "" {
		w.Header().Set("HX-Redirect", target)
		w.WriteHeader(http.StatusOK)
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// clearFlash removes the flash cookie once a page has shown it.
func clearFlash(w http.ResponseWriter, r *http.Request) {
	if _, err := r.Cookie(flashCookie); err == nil {
		http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1, Expires: time.Unix(0, 0), Secure: clientOf(r).https})
	}
}

// page renders a signed-in page with 200 and clears the flash it showed.
func (s *Server) page(w http.ResponseWriter, r *http.Request, c templ.Component) {
	clearFlash(w, r)
	s.render(w, r, http.StatusOK, c)
}
