package control

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// The webhook outbox. A state change of an experiment or a task writes an
// event row in its own transaction (a trigger of migration 00025), so an
// event exists exactly when the change committed. The sender then, in a
// loop: (1) takes events from the outbox and, in the same transaction,
// stores one delivery per webhook that wants the event, with its body;
// (2) claims the deliveries that are due and sends them, signed; (3)
// records each outcome: delivered, or failed with the next attempt after an
// exponential backoff, or failed for good after the last attempt. A master
// that stops mid-send leaves its deliveries claimed; the next one releases
// them when it starts and sends them again (at least once; the event_id
// tells a receiver it saw one before).

// WebhookSender delivers webhook events from the outbox.
type WebhookSender struct {
	db     *db.DB
	logger *slog.Logger
	key    string // signing key; "" until Run reads the database's
	base   string // the web UI's address for links in messages
	client *http.Client
	now    func() time.Time

	interval    time.Duration // how often the outbox is looked at without a wake
	backoff     time.Duration // the wait after a first failed attempt, doubled after each
	maxBackoff  time.Duration
	maxAttempts int

	wake chan struct{}

	mu       sync.Mutex
	hooks    []resolute.Webhook // cached for the log watcher
	hooksAt  time.Time
	hooksOld bool
}

// WebhookOption tunes the sender.
type WebhookOption func(*WebhookSender)

// WithWebhookBackoff sets the wait after the first failed attempt (doubled
// after each further one, up to max) and how many attempts are made.
func WithWebhookBackoff(first, max time.Duration, attempts int) WebhookOption {
	return func(s *WebhookSender) { s.backoff, s.maxBackoff, s.maxAttempts = first, max, attempts }
}

// WithWebhookInterval sets how often the outbox is looked at when nothing
// wakes the sender.
func WithWebhookInterval(d time.Duration) WebhookOption {
	return func(s *WebhookSender) { s.interval = d }
}

// WithWebhookClock makes the sender read the time from now.
func WithWebhookClock(now func() time.Time) WebhookOption {
	return func(s *WebhookSender) { s.now = now }
}

// Defaults of the sender: 8 attempts over about 8.5 minutes.
const (
	DefaultWebhookBackoff     = 2 * time.Second
	DefaultWebhookMaxBackoff  = 5 * time.Minute
	DefaultWebhookMaxAttempts = 8
)

// NewWebhookSender returns a sender over database. signingKey signs
// requests (master webhooks.signing_key); "" uses the key kept in the
// database. baseURL (webhooks.base_url) is the address links in Slack
// messages use; "" leaves them out.
func NewWebhookSender(database *db.DB, signingKey, baseURL string, logger *slog.Logger, opts ...WebhookOption) *WebhookSender {
	s := &WebhookSender{db: database, logger: logger, key: signingKey, base: baseURL,
		client: &http.Client{Timeout: 15 * time.Second}, now: time.Now, interval: time.Second,
		backoff: DefaultWebhookBackoff, maxBackoff: DefaultWebhookMaxBackoff, maxAttempts: DefaultWebhookMaxAttempts,
		wake: make(chan struct{}, 1), hooksOld: true}
	for _, o := range opts {
		o(s)
	}
	return s
}

// SigningKey returns the key requests are signed with.
func (s *WebhookSender) SigningKey(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != "" {
		return s.key, nil
	}
	k, err := s.db.WebhookSigningKey(ctx)
	s.key = k
	return k, err
}

// Wake makes the sender look at the outbox now.
func (s *WebhookSender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// changed drops the cached webhooks (one was created, changed or deleted).
func (s *WebhookSender) changed() {
	s.mu.Lock()
	s.hooksOld = true
	s.mu.Unlock()
}

// webhooks returns every webhook, cached for a few seconds.
func (s *WebhookSender) webhooks(ctx context.Context) ([]resolute.Webhook, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hooksOld && time.Since(s.hooksAt) < 5*time.Second {
		return s.hooks, nil
	}
	hooks, err := s.db.Webhooks(ctx)
	if err != nil {
		return nil, err
	}
	s.hooks, s.hooksAt, s.hooksOld = hooks, time.Now(), false
	return hooks, nil
}

// Run sends until ctx ends: first it releases the claims of the master
// before, then it looks at the outbox when woken and every interval.
func (s *WebhookSender) Run(ctx context.Context) {
	if err := untilAvailable(ctx, func() error { return s.db.ReleaseWebhookClaims(ctx) }); err != nil {
		return
	}
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		start := time.Now()
		if err := s.Cycle(ctx); err != nil && !quiet(ctx, err) {
			s.logger.Error("webhook outbox", "err", err)
		}
		if d := time.Since(start); d > time.Second {
			s.logger.Debug("webhook outbox cycle", "took", d)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// Cycle turns the outbox's events into deliveries and sends those due.
func (s *WebhookSender) Cycle(ctx context.Context) error {
	for {
		n, err := s.expand(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	for ctx.Err() == nil {
		batch, err := s.db.ClaimWebhookDeliveries(ctx, s.now(), 8)
		if err != nil || len(batch) == 0 {
			return err
		}
		var wg sync.WaitGroup
		for _, d := range batch {
			wg.Go(func() { s.send(ctx, d) })
		}
		wg.Wait()
	}
	return ctx.Err()
}

// expand moves up to 100 events from the outbox into deliveries, in one
// transaction, and says how many it took.
func (s *WebhookSender) expand(ctx context.Context) (int, error) {
	hooks, err := s.webhooks(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.db.InTx(ctx, func(q *db.Queries) error {
		events, err := q.TakeWebhookEvents(ctx, 100)
		if err != nil {
			return err
		}
		n = len(events)
		for _, ev := range events {
			if err := s.deliveriesOf(ctx, q, hooks, ev); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// deliveriesOf stores the deliveries of one event.
func (s *WebhookSender) deliveriesOf(ctx context.Context, q *db.Queries, hooks []resolute.Webhook, ev db.WebhookEvent) error {
	now := s.now()
	switch ev.Kind {
	case "experiment":
		id, _ := strconv.ParseInt(ev.ObjectID, 10, 64)
		e, err := q.ExperimentForWebhook(ctx, id)
		if resolute.ErrorCode(err) == resolute.ENotFound {
			return nil // deleted since
		} else if err != nil {
			return err
		}
		cfg, _ := expconf.ParseExperiment(e.Config)
		var ic *expconf.WebhooksConfig
		if cfg != nil && cfg.Integrations != nil {
			ic = cfg.Integrations.Webhooks
		}
		for _, w := range hooks {
			if !webhookSelects(w, e.WorkspaceID, ic, false) || !hasStateTrigger(w, resolute.TriggerExperimentStateChange, ev.State) {
				continue
			}
			eventID := newEventID()
			body, err := experimentBody(w.WebhookType, eventID, e, cfg, ev.State, now, s.base)
			if err != nil {
				return err
			}
			if err := q.CreateWebhookDelivery(ctx, db.NewDelivery{WebhookID: w.ID, EventID: eventID,
				EventType: "EXPERIMENT_STATE_CHANGE", URL: w.URL, Payload: body, Due: now}); err != nil {
				return err
			}
		}
	case "task":
		t, err := q.TaskForWebhook(ctx, ev.ObjectID)
		if resolute.ErrorCode(err) == resolute.ENotFound {
			return nil
		} else if err != nil {
			return err
		}
		for _, w := range hooks {
			if !webhookSelects(w, t.WorkspaceID, nil, true) || !hasStateTrigger(w, resolute.TriggerTaskStateChange, ev.State) {
				continue
			}
			eventID := newEventID()
			body, err := taskBody(w.WebhookType, eventID, t, ev.State, now, s.base)
			if err != nil {
				return err
			}
			if err := q.CreateWebhookDelivery(ctx, db.NewDelivery{WebhookID: w.ID, EventID: eventID,
				EventType: "TASK_STATE_CHANGE", URL: w.URL, Payload: body, Due: now}); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasStateTrigger(w resolute.Webhook, typ, state string) bool {
	for _, t := range w.Triggers {
		if t.TriggerType == typ && stateMatches(t, state) {
			return true
		}
	}
	return false
}

// send makes one attempt at a delivery and records how it went.
func (s *WebhookSender) send(ctx context.Context, d db.Delivery) {
	err := s.post(ctx, d.URL, d.Payload)
	// The outcome is recorded even as the master stops.
	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping: not an attempt; the next master sends it.
		err = s.db.UnclaimWebhookDelivery(rec, d.ID)
	case err == nil:
		err = s.db.SetWebhookDelivered(rec, d.ID, s.now())
	default:
		attempts := d.Attempts + 1
		last := attempts >= s.maxAttempts
		next := s.now().Add(WebhookBackoff(s.backoff, s.maxBackoff, attempts))
		if last {
			s.logger.Warn("webhook delivery failed for good", "delivery", d.ID, "event", d.EventID, "attempts", attempts, "err", err)
		}
		err = s.db.SetWebhookAttemptFailed(rec, d.ID, err.Error(), next, last)
	}
	if err != nil && !quiet(rec, err) {
		s.logger.Error("record webhook delivery", "delivery", d.ID, "err", err)
	}
}

// WebhookBackoff is the wait after the attempts-th failed attempt: first,
// doubled after each further failure, at most max.
func WebhookBackoff(first, max time.Duration, attempts int) time.Duration {
	d := first
	for i := 1; i < attempts && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// post sends body to url, signed as Determined signs: the header
// X-Determined-AI-Signature is the hex HMAC-SHA256, keyed with the signing
// key, of "<timestamp>,<body>", and X-Determined-AI-Signature-Timestamp
// the Unix timestamp. A response other than 2xx is a failure.
func (s *WebhookSender) post(ctx context.Context, url string, body []byte) error {
	key, err := s.SigningKey(ctx)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := s.now().Unix()
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	req.Header.Set("X-Determined-AI-Signature-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Determined-AI-Signature", SignWebhook(key, ts, body))
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}

// SignWebhook is the signature of a webhook request: the hex HMAC-SHA256
// of "<timestamp>,<body>" keyed with key.
func SignWebhook(key string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(mac, "%d,", timestamp)
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}
