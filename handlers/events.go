package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/live"
)

// Timings of the live pages' events stream.
const (
	eventsPingEvery = 15 * time.Second
	// eventsStreamLife ends a stream now and then; browsers reconnect after
	// a second, and a master shutting down waits less for open streams.
	eventsStreamLife = 5 * time.Minute
)

// handleEvents serves GET /events, the stream of server-sent events that
// keeps live pages current: `event: change` with the topic (the table that
// changed, e.g. trials, or master_logs) as its data, each topic at most
// twice a second, and a comment every 15 s so that proxies keep it open.
// Pages fetch their regions again on the topics they show (web/static/app.js);
// the stream tells nothing but which table changed. A reconnecting browser
// (Last-Event-ID), or a page shown again (?resync), is told every topic
// changed, as it may have missed some.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if s.changes == nil {
		s.error(w, r, resolute.Errorf(resolute.EUnavailable, "live updates are not available"))
		return
	}
	sub := s.changes.Subscribe()
	defer sub.Close()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc.SetWriteDeadline(time.Time{}) // a server-wide write timeout would cut the stream
	ctx, cancel := context.WithTimeout(r.Context(), eventsStreamLife)
	defer cancel()

	// The id makes a browser send Last-Event-ID when it reconnects.
	fmt.Fprint(w, "retry: 1000\nid: 0\n\n")
	seq := 0
	send := func(topics []string) {
		for _, t := range topics {
			seq++
			fmt.Fprintf(w, "id: %d\nevent: change\ndata: %s\n\n", seq, t)
		}
	}
	if r.Header.Get("Last-Event-ID") != "" || r.URL.Query().Has("resync") {
		send(slices.Concat(live.Topics, []string{live.MasterLogs}))
	}
	if rc.Flush() != nil {
		return
	}
	changes := make(chan []string)
	go func() {
		defer close(changes)
		for {
			topics, err := sub.Next(ctx)
			if err != nil {
				return
			}
			select {
			case changes <- topics:
			case <-ctx.Done():
				return
			}
		}
	}()
	ping := time.NewTicker(eventsPingEvery)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
		case topics, ok := <-changes:
			if !ok {
				return
			}
			send(topics)
		}
		if rc.Flush() != nil {
			return
		}
	}
}
