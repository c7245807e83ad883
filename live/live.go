package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channel is the PostgreSQL notification channel the triggers notify.
const Channel = "resolute_changes"

// Topics are the collection topics the triggers send: the names of the
// tables whose changes pages show (list pages subscribe to them). Each
// trigger also sends a topic per object that changed, kind:id (see
// Object). After the listener was disconnected, when changes may have been
// missed, every subscription is told all of its topics.
var Topics = []string{
	"allocations", "checkpoints", "experiments", "metrics", "model_versions", "models",
	"projects", "task_logs", "tasks", "trials", "workspaces",
}

// MasterLogs is the topic published when the master logs a line (see
// Follow and masterlog.Buffer.Changed); it is not a table.
const MasterLogs = "master_logs"

// Object is the topic of one object, kind:id, as the triggers send it
// (db/migrations/00016_object_topics.sql): trial:27 (its row, reports,
// checkpoints and allocations), experiment:3 (its row and its trials'),
// task:notebook-4, queue:default (the pool's experiments, tasks and
// allocations), logs:trial-27 (a task's log lines) and experiment-logs:3.
func Object(kind string, id any) string { return fmt.Sprintf("%s:%v", kind, id) }

// maxChanged bounds how many topics ChangedSince remembers; past it, it
// forgets them all and says every topic changed since before.
const maxChanged = 10000

// Connector opens a connection of its own (db.DB does).
type Connector interface {
	Connect(ctx context.Context) (*pgx.Conn, error)
}

// Listener listens for change notifications and hands them to its
// subscribers. Run does the listening; Publish adds topics of changes that
// are not in the database (the master's log).
type Listener struct {
	db      Connector
	logger  *slog.Logger
	window  time.Duration
	backoff time.Duration

	ready     chan struct{} // closed once LISTEN first took effect
	readyOnce sync.Once

	tables bool // publish only the collection topics (WithTableTopics)

	mu      sync.Mutex
	all     map[*Subscription]struct{}            // subscribed to every topic
	subs    map[string]map[*Subscription]struct{} // by the topic they asked for
	seq     uint64                                // counts what was published
	changed map[string]uint64                     // each topic's seq when it was last published
	floor   uint64                                // anything may have changed up to this seq
}

// Option tunes a Listener.
type Option func(*Listener)

// WithWindow sets how often a subscription delivers one topic at most
// (default 500 ms).
func WithWindow(d time.Duration) Option { return func(l *Listener) { l.window = d } }

// WithBackoff sets the wait before reconnecting after the connection failed
// (default 1 s).
func WithBackoff(d time.Duration) Option { return func(l *Listener) { l.backoff = d } }

// WithTableTopics makes the listener publish only the collection topics
// (the tables' names) and drop the objects', as Resolute did before pages
// subscribed to objects: the benchmark compares the two.
func WithTableTopics() Option { return func(l *Listener) { l.tables = true } }

// New returns a Listener on db's notifications; call Run to start it.
func New(db Connector, logger *slog.Logger, opts ...Option) *Listener {
	l := &Listener{db: db, logger: logger, window: 500 * time.Millisecond, backoff: time.Second,
		ready: make(chan struct{}), all: map[*Subscription]struct{}{}, subs: map[string]map[*Subscription]struct{}{},
		changed: map[string]uint64{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Run listens until ctx ends, reconnecting after a failure; after a
// reconnection it publishes every topic, as changes may have been missed.
func (l *Listener) Run(ctx context.Context) {
	failed := false
	for {
		err := l.listen(ctx, func() {
			l.readyOnce.Do(func() { close(l.ready) })
			if failed {
				l.logger.Info("change notifications: listening again")
				l.resync()
			}
			failed = false
		})
		if ctx.Err() != nil {
			return
		}
		if !failed {
			l.logger.Warn("change notifications: connection lost, reconnecting", "err", err)
		}
		failed = true
		select {
		case <-ctx.Done():
			return
		case <-time.After(l.backoff):
		}
	}
}

// listen holds one connection until it fails; listening is called once
// LISTEN took effect.
func (l *Listener) listen(ctx context.Context, listening func()) error {
	conn, err := l.db.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Channel == Channel && n.Payload != "" && (!l.tables || !strings.Contains(n.Payload, ":")) {
			l.Publish(n.Payload)
		}
	}
}

// Ready returns a channel closed once the listener first listens: changes
// committed before then are not seen.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Publish tells the subscribers of topic (and those of every topic) that
// it changed.
func (l *Listener) Publish(topic string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if len(l.changed) >= maxChanged {
		clear(l.changed)
		l.floor = l.seq - 1
	}
	l.changed[topic] = l.seq
	for s := range l.subs[topic] {
		s.add(topic)
	}
	for s := range l.all {
		s.add(topic)
	}
}

// resync tells every subscription that all its topics changed: changes
// may have been missed.
func (l *Listener) resync() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	clear(l.changed)
	l.floor = l.seq
	for s := range l.all {
		s.add(AllTopics()...)
	}
	for _, subs := range l.subs {
		for s := range subs {
			s.add(s.topics...)
		}
	}
}

// Seq numbers what was published so far. A page takes it before it reads
// what it shows, and ChangedSince then says which topics changed after.
func (l *Listener) Seq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// ChangedSince returns those of topics (every topic when none is given)
// published after Seq returned since, sorted. A since ahead of Seq came
// from another run of the master, and one from before the listener last
// reconnected or forgot what changed predates what it knows: then all of
// topics, as anything may have changed.
func (l *Listener) ChangedSince(since uint64, topics ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if since > l.seq || since < l.floor {
		if len(topics) == 0 {
			return AllTopics()
		}
		return slices.Sorted(slices.Values(slices.Clone(topics)))
	}
	var out []string
	if len(topics) == 0 {
		for t, seq := range l.changed {
			if seq > since {
				out = append(out, t)
			}
		}
	}
	for _, t := range topics {
		if l.changed[t] > since {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Follow publishes topic whenever the channel that changed returns is
// closed, until ctx ends: changed is called again after each, so it suits
// followers such as masterlog.Buffer's.
func (l *Listener) Follow(ctx context.Context, topic string, changed func() <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed():
			l.Publish(topic)
		}
	}
}

// Subscribe returns a subscription to topics, or to every topic when
// none is given; Close it when done.
func (l *Listener) Subscribe(topics ...string) *Subscription {
	topics = slices.Compact(slices.Sorted(slices.Values(topics)))
	s := &Subscription{l: l, topics: topics, window: l.window, wake: make(chan struct{}, 1),
		pending: map[string]bool{}, last: map[string]time.Time{}}
	l.mu.Lock()
	if len(topics) == 0 {
		l.all[s] = struct{}{}
	}
	for _, t := range topics {
		if l.subs[t] == nil {
			l.subs[t] = map[*Subscription]struct{}{}
		}
		l.subs[t][s] = struct{}{}
	}
	l.mu.Unlock()
	return s
}

// Subscription receives the topics that changed, each at most once per
// window: the first change of a topic is delivered at once, and changes
// within the window after it are delivered together when it ends.
type Subscription struct {
	l      *Listener
	topics []string // nil: every topic
	window time.Duration
	wake   chan struct{}

	mu      sync.Mutex
	pending map[string]bool      // changed, not delivered yet
	last    map[string]time.Time // when each topic was last delivered
}

func (s *Subscription) add(topics ...string) {
	s.mu.Lock()
	if s.pending != nil { // not closed
		for _, t := range topics {
			s.pending[t] = true
		}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// ErrClosed is returned by Next once the subscription is closed.
var ErrClosed = errors.New("subscription closed")

// Next waits for topics that changed and returns them, sorted.
func (s *Subscription) Next(ctx context.Context) ([]string, error) {
	for {
		s.mu.Lock()
		if s.pending == nil {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		now := time.Now()
		var ready []string
		wait := time.Duration(-1)
		for t := range s.pending {
			if d := s.last[t].Add(s.window).Sub(now); d <= 0 {
				ready = append(ready, t)
				delete(s.pending, t)
				s.last[t] = now
			} else if wait < 0 || d < wait {
				wait = d
			}
		}
		s.mu.Unlock()
		if len(ready) > 0 {
			slices.Sort(ready)
			return ready, nil
		}
		var timer *time.Timer
		var due <-chan time.Time
		if wait >= 0 {
			timer = time.NewTimer(wait)
			due = timer.C
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil, ctx.Err()
		case <-s.wake:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.l.mu.Lock()
	delete(s.l.all, s)
	for _, t := range s.topics {
		delete(s.l.subs[t], s)
		if len(s.l.subs[t]) == 0 {
			delete(s.l.subs, t)
		}
	}
	s.l.mu.Unlock()
	s.mu.Lock()
	s.pending = nil
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// AllTopics is every collection topic a page may be told of, sorted: the
// tables' and the master log's.
func AllTopics() []string {
	return slices.Sorted(slices.Values(append(slices.Clone(Topics), MasterLogs)))
}
