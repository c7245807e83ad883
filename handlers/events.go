package handlers

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// handleEvents serves GET /events?topics=trial:27,experiment:3, the stream
// of server-sent events that keeps live pages current: `event: change`
// with a topic the page shows (an object, e.g. trial:27, or a collection,
// e.g. experiments or master_logs; see package live) as its data, each
// topic at most twice a second, and a comment every 15 s so that proxies
// keep it open. Without topics it tells every topic. Pages fetch their
// regions again on the topics they show (web/static/app.js); the stream
// tells nothing but what changed. A reconnecting browser (Last-Event-ID),
// or a page shown again (?resync), is told all its topics changed, as it
// may have missed some; ?since= (the page's data-live-since) tells the
// topics that changed since the page was rendered.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if s.changes == nil {
		s.error(w, r, resolute.Errorf(resolute.EUnavailable, "live updates are not available"))
		return
	}
	topics, err := eventTopics(r.URL.Query().Get("topics"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	sub := s.changes.Subscribe(topics...)
	s.sseClients.Add(1)
	defer s.sseClients.Add(-1)
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
	actor := actorFrom(r)
	send := func(topics []string) {
		// Under RBAC, only the objects of workspaces the user reads.
		topics, err := s.svc.Roles.VisibleTopics(ctx, actor, topics)
		if err != nil {
			s.logger.Warn("live topics not told", "err", err)
			return
		}
		for _, t := range topics {
			seq++
			fmt.Fprintf(w, "id: %d\nevent: change\ndata: %s\n\n", seq, t)
		}
	}
	switch since := r.URL.Query().Get("since"); {
	case r.Header.Get("Last-Event-ID") != "" || r.URL.Query().Has("resync"):
		if len(topics) == 0 {
			send(live.AllTopics())
		} else {
			send(slices.Sorted(slices.Values(topics)))
		}
	case since != "":
		// What changed between the page's render and now.
		n, err := strconv.ParseUint(since, 10, 64)
		if err != nil {
			n = 0
		}
		send(s.changes.ChangedSince(n, topics...))
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

// maxEventTopics bounds the topics one stream may ask for.
const maxEventTopics = 200

// topicPattern is what a topic looks like: kind, or kind:id (an id without
// spaces or commas).
var topicPattern = regexp.MustCompile(`^[a-z_-]+(:[^\s,]+)?$`)

// eventTopics reads /events' topics, comma-separated.
func eventTopics(param string) ([]string, error) {
	if param == "" {
		return nil, nil
	}
	topics := strings.Split(param, ",")
	if len(topics) > maxEventTopics {
		return nil, resolute.Errorf(resolute.EInvalid, "topics: at most %d, got %d", maxEventTopics, len(topics))
	}
	for _, t := range topics {
		if len(t) > 200 || !topicPattern.MatchString(t) {
			return nil, resolute.Errorf(resolute.EInvalid, "topics: %q is not a topic like trial:27 or experiments", t)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(topics))), nil
}

// noteLiveSeq remembers, before a page reads what it shows, how far the
// change notifications had come: the page carries it (data-live-since), so
// its stream tells it what changed while it was rendered and loaded.
func (s *Server) noteLiveSeq(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.changes != nil {
			r = r.WithContext(context.WithValue(r.Context(), liveSeqKey, s.changes.Seq()))
		}
		next.ServeHTTP(w, r)
	})
}

// liveSeqFrom returns what noteLiveSeq noted, or 0.
func liveSeqFrom(r *http.Request) uint64 {
	n, _ := r.Context().Value(liveSeqKey).(uint64)
	return n
}
