package auth

import (
	"sync"
	"time"
)

// Throttle slows down repeated failures per key: after Free failures each
// further attempt must wait twice as long as the one before, up to Max. A
// success clears the key; so does a quiet Forget (0: never) after the last
// failure.
type Throttle struct {
	Free   int
	Base   time.Duration
	Max    time.Duration
	Forget time.Duration
	now    func() time.Time

	mu    sync.Mutex
	state map[string]*attempts
}

type attempts struct {
	failures int
	last     time.Time // of the last failure
	until    time.Time // no attempt is accepted before this
}

// NewThrottle returns a throttle that lets 5 failures pass, then waits 1s,
// 2s, 4s… up to 5 minutes, and never forgets on its own. now is the clock
// (time.Now in production).
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
	now := t.now()
	a := t.state[key]
	if a == nil || t.forgotten(a, now) {
		a = &attempts{}
		t.state[key] = a
		if len(t.state) > 100000 {
			t.forgetIdleLocked()
		}
	}
	a.failures++
	a.last = now
	if over := a.failures - t.Free; over > 0 {
		d := t.Base << min(over-1, 30)
		if d > t.Max || d <= 0 {
			d = t.Max
		}
		a.until = now.Add(d)
	}
}

// Succeed forgets key's failures.
func (t *Throttle) Succeed(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.state, key)
}

func (t *Throttle) forgotten(a *attempts, now time.Time) bool {
	return t.Forget > 0 && now.Sub(a.last) >= t.Forget && !a.until.After(now)
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

// LoginThrottle slows down password guessing without letting one person's
// typos lock out others. Failures count per username and client address
// together, so people behind one address (an office, a VPN) do not lock
// each other out and nobody can lock a user out from elsewhere. A generous
// ceiling per address, forgotten after an hour without failures, slows
// down one address trying many usernames (password spraying); a success
// does not clear it, or an attacker would clear it with their own account.
type LoginThrottle struct {
	pairs *Throttle
	addrs *Throttle
}

// NewLoginThrottle returns the master's login throttle: 5 free failures
// per username and address, then waits from 1s doubling up to 5 minutes;
// 100 free failures per address within an hour, then the same waits for
// every login from it. now is the clock.
func NewLoginThrottle(now func() time.Time) *LoginThrottle {
	addrs := NewThrottle(now)
	addrs.Free, addrs.Forget = 100, time.Hour
	return &LoginThrottle{pairs: NewThrottle(now), addrs: addrs}
}

// Wait returns how long a login as username from addr must wait; 0 means
// it may try now.
func (l *LoginThrottle) Wait(username, addr string) time.Duration {
	return max(l.pairs.Wait(pairKey(username, addr)), l.addrs.Wait(addr))
}

// Fail records a failed login as username from addr.
func (l *LoginThrottle) Fail(username, addr string) {
	l.pairs.Fail(pairKey(username, addr))
	l.addrs.Fail(addr)
}

// Succeed records a login as username from addr: that pair's failures are
// forgotten.
func (l *LoginThrottle) Succeed(username, addr string) {
	l.pairs.Succeed(pairKey(username, addr))
}

// pairKey joins a username and an address; the NUL cannot occur in
// either, so two different pairs never share a key.
func pairKey(username, addr string) string { return username + "\x00" + addr }
