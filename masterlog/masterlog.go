// Package masterlog keeps the master's recent log lines in memory, numbered,
// for the admin log page and `det master logs [-f]`. It is a slog.Handler
// that writes every record to the next handler too.
package masterlog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Line is one log record, flattened.
type Line struct {
	ID      int64     `json:"id"`
	Time    time.Time `json:"timestamp"`
	Level   string    `json:"level"`
	Message string    `json:"message"`
}

// Buffer holds the last Size lines and wakes followers on new ones.
type Buffer struct {
	mu      sync.Mutex
	lines   []Line // ring
	size    int
	next    int64 // ID of the next line
	changed chan struct{}
}

// NewBuffer keeps the last size lines.
func NewBuffer(size int) *Buffer {
	return &Buffer{size: size, next: 1, changed: make(chan struct{})}
}

// Add appends a line.
func (b *Buffer) Add(t time.Time, level, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := Line{ID: b.next, Time: t, Level: level, Message: msg}
	b.next++
	if len(b.lines) < b.size {
		b.lines = append(b.lines, l)
	} else {
		b.lines[int((l.ID-1)%int64(b.size))] = l
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// Since returns the lines with ID > after, oldest first, at most limit (0 =
// all), and a channel closed when more arrive.
func (b *Buffer) Since(after int64, limit int) ([]Line, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Line
	first := max(after+1, b.next-int64(len(b.lines)))
	for id := first; id < b.next; id++ {
		out = append(out, b.lines[int((id-1)%int64(b.size))])
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, b.changed
}

// Changed returns a channel closed when the next line arrives.
func (b *Buffer) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// Handler is a slog.Handler that records into a Buffer and passes records on.
type Handler struct {
	next  slog.Handler
	buf   *Buffer
	attrs string // pre-rendered attrs from WithAttrs
	group string
}

// NewHandler records into buf and forwards to next.
func NewHandler(next slog.Handler, buf *Buffer) *Handler {
	return &Handler{next: next, buf: buf}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	var sb strings.Builder
	sb.WriteString(r.Message)
	sb.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&sb, h.group, a)
		return true
	})
	h.buf.Add(r.Time, r.Level.String(), sb.String())
	return h.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var sb strings.Builder
	sb.WriteString(h.attrs)
	for _, a := range attrs {
		writeAttr(&sb, h.group, a)
	}
	return &Handler{next: h.next.WithAttrs(attrs), buf: h.buf, attrs: sb.String(), group: h.group}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	g := name
	if h.group != "" {
		g = h.group + "." + name
	}
	return &Handler{next: h.next.WithGroup(name), buf: h.buf, attrs: h.attrs, group: g}
}

func writeAttr(sb *strings.Builder, group string, a slog.Attr) {
	if a.Equal(slog.Attr{}) {
		return
	}
	sb.WriteByte(' ')
	if group != "" {
		sb.WriteString(group + ".")
	}
	sb.WriteString(a.Key)
	sb.WriteByte('=')
	sb.WriteString(a.Value.Resolve().String())
}
