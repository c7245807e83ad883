package live

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channel is the PostgreSQL notification channel the triggers notify.
const Channel = "resolute_changes"

// Topics are the topics the triggers send: the names of the tables whose
// changes pages show. After the listener was disconnected, when changes may
// have been missed, it publishes all of them.
var Topics = []string{
	"allocations", "checkpoints", "experiments", "metrics", "model_versions", "models",
	"projects", "task_logs", "tasks", "trials", "workspaces",
}

// MasterLogs is the topic published when the master logs a line (see
// Follow and masterlog.Buffer.Changed); it is not a table.
const MasterLogs = "master_logs"

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

	mu      sync.Mutex
	subs    map[*Subscription]struct{}
	seq     uint64            // counts what was published
	changed map[string]uint64 // each topic's seq when it was last published
}

// Option tunes a Listener.
type Option func(*Listener)

// WithWindow sets how often a subscription delivers one topic at most
// (default 500 ms).
func WithWindow(d time.Duration) Option { return func(l *Listener) { l.window = d } }

// WithBackoff sets the wait before reconnecting after the connection failed
// (default 1 s).
func WithBackoff(d time.Duration) Option { return func(l *Listener) { l.backoff = d } }

// New returns a Listener on db's notifications; call Run to start it.
func New(db Connector, logger *slog.Logger, opts ...Option) *Listener {
	l := &Listener{db: db, logger: logger, window: 500 * time.Millisecond, backoff: time.Second,
		ready: make(chan struct{}), subs: map[*Subscription]struct{}{}, changed: map[string]uint64{}}
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
				for _, t := range Topics {
					l.Publish(t)
				}
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
		if n.Channel == Channel && n.Payload != "" {
			l.Publish(n.Payload)
		}
	}
}

// Ready returns a channel closed once the listener first listens: changes
// committed before then are not seen.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Publish tells every subscriber that topic changed.
func (l *Listener) Publish(topic string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.changed[topic] = l.seq
	for s := range l.subs {
		s.add(topic)
	}
}

// Seq numbers what was published so far. A page takes it before it reads
// what it shows, and ChangedSince then says which topics changed after.
func (l *Listener) Seq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// ChangedSince returns the topics published after Seq returned since,
// sorted. A since ahead of Seq came from another run of the master: then
// every topic, as anything may have changed.
func (l *Listener) ChangedSince(since uint64) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if since > l.seq {
		return AllTopics()
	}
	var out []string
	for t, seq := range l.changed {
		if seq > since {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
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

// Subscribe returns a subscription to every topic; Close it when done.
func (l *Listener) Subscribe() *Subscription {
	s := &Subscription{l: l, window: l.window, wake: make(chan struct{}, 1),
		pending: map[string]bool{}, last: map[string]time.Time{}}
	l.mu.Lock()
	l.subs[s] = struct{}{}
	l.mu.Unlock()
	return s
}

// Subscription receives the topics that changed, each at most once per
// window: the first change of a topic is delivered at once, and changes
// within the window after it are delivered together when it ends.
type Subscription struct {
	l      *Listener
	window time.Duration
	wake   chan struct{}

	mu      sync.Mutex
	pending map[string]bool      // changed, not delivered yet
	last    map[string]time.Time // when each topic was last delivered
}

func (s *Subscription) add(topic string) {
	s.mu.Lock()
	if s.pending != nil { // not closed
		s.pending[topic] = true
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
	delete(s.l.subs, s)
	s.l.mu.Unlock()
	s.mu.Lock()
	s.pending = nil
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// AllTopics is every topic a page may be told of, sorted: the tables'
// and the master log's.
func AllTopics() []string {
	return slices.Sorted(slices.Values(append(slices.Clone(Topics), MasterLogs)))
}
