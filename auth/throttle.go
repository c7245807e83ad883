package auth

import (
	"sync"
	"time"
)

// Throttle slows down repeated failed logins per key (a username, and
// separately a client address): after Free failures each further attempt must
// wait twice as long as the one before, up to Max. A success clears the key.
type Throttle struct {
	Free int
	Base time.Duration
	Max  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	state map[string]*attempts
}

type attempts struct {
	failures int
	until    time.Time // no attempt is accepted before this
}

// NewThrottle returns a throttle that lets 5 failures pass, then waits 1s,
// 2s, 4s… up to 5 minutes. now is the clock (time.Now in production).
func NewThrottle(now func() time.Time) *Throttle {
	return &Throttle{Free: 5, Base: time.Second, Max: 5 * time.Minute, now: now, state: map[string]*attempts{}}
}

// Wait returns how long the caller must wait before trying key again; 0 means
// the attempt may proceed.
func (t *Throttle) Wait(key string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.state[key]
	if a == nil {
		return 0
	}
	if d := a.until.Sub(t.now()); d > 0 {
		return d
	}
	return 0
}

// Fail records a failed attempt for key.
func (t *Throttle) Fail(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.state[key]
	if a == nil {
		a = &attempts{}
		t.state[key] = a
		if len(t.state) > 100000 {
			t.forgetIdleLocked()
		}
	}
	a.failures++
	if over := a.failures - t.Free; over > 0 {
		d := t.Base << min(over-1, 30)
		if d > t.Max || d <= 0 {
			d = t.Max
		}
		a.until = t.now().Add(d)
	}
}

// Succeed forgets key's failures.
func (t *Throttle) Succeed(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.state, key)
}

// forgetIdleLocked drops keys whose wait has passed, so the map stays small
// under a flood of distinct keys.
func (t *Throttle) forgetIdleLocked() {
	now := t.now()
	for k, a := range t.state {
		if !a.until.After(now) {
			delete(t.state, k)
		}
	}
}
