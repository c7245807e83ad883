// Package web holds the static assets (CSS, small JS, icons, and the vendor
// libraries that `make web` copies from npm) and serves them embedded in the
// binary under cache-busting names: /static/app.3f2a9c1b.css never changes,
// so browsers may keep it forever.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var files embed.FS

// Assets maps asset names to their cache-busting URLs and serves them.
type Assets struct {
	fsys   fs.FS
	hashed map[string]string // "app.css" → "app.3f2a9c1b.css"
	plain  map[string]string // the reverse
}

// New hashes every embedded asset.
func New() *Assets {
	sub, _ := fs.Sub(files, "static")
	a := &Assets{fsys: sub, hashed: map[string]string{}, plain: map[string]string{}}
	fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		ext := path.Ext(p)
		h := strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:4]) + ext
		a.hashed[p], a.plain[h] = h, p
		return nil
	})
	return a
}

// URL returns the URL of the asset name (e.g. "app.css", "vendor/htmx.min.js").
// A missing asset gets its plain URL, which answers 404.
func (a *Assets) URL(name string) string {
	if h, ok := a.hashed[name]; ok {
		return "/static/" + h
	}
	return "/static/" + name
}

// Has reports whether the asset exists (vendor files exist only after `make web`).
func (a *Assets) Has(name string) bool {
	_, ok := a.hashed[name]
	return ok
}

// ServeHTTP serves /static/<hashed or plain name>.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	if plain, ok := a.plain[name]; ok {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		name = plain
	} else if _, ok := a.hashed[name]; ok {
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		http.NotFound(w, r)
		return
	}
	http.ServeFileFS(w, r, a.fsys, name)
}
