package auth

import (
	"fmt"
	"testing"
	"time"
)

func TestPasswords(t *testing.T) {
	tests := map[string]struct {
		stored, given string
		ok            bool
	}{
		"no password accepts the empty password": {"", "", true},
		"no password refuses any other password": {"", "x", false},
		"a password accepts itself":              {"hunter2", "hunter2", true},
		"a password refuses another one":         {"hunter2", "hunter3", false},
		"a password refuses the empty password":  {"hunter2", "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h, err := HashPassword(tc.stored)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stored != "" && h == tc.stored {
				t.Fatal("password stored in clear")
			}
			if got := CheckPassword(h, tc.given); got != tc.ok {
				t.Fatalf("CheckPassword = %v, want %v", got, tc.ok)
			}
		})
	}
}

func TestTokensAreRandomAndHashed(t *testing.T) {
	a, ha := NewToken()
	b, _ := NewToken()
	if a == b || len(a) < 40 {
		t.Fatalf("tokens %q and %q", a, b)
	}
	if string(HashToken(a)) != string(ha) {
		t.Fatal("hash of token differs from the one returned")
	}
}

func TestThrottleBacksOffAfterFreeFailures(t *testing.T) {
	now := time.Unix(1000, 0)
	th := NewThrottle(func() time.Time { return now })
	for i := 0; i < 5; i++ {
		if w := th.Wait("admin"); w != 0 {
			t.Fatalf("attempt %d must not wait, waits %v", i+1, w)
		}
		th.Fail("admin")
	}
	th.Fail("admin")
	if w := th.Wait("admin"); w != time.Second {
		t.Fatalf("after 6 failures wait %v, want 1s", w)
	}
	now = now.Add(time.Second)
	th.Fail("admin")
	if w := th.Wait("admin"); w != 2*time.Second {
		t.Fatalf("after 7 failures wait %v, want 2s", w)
	}
	if w := th.Wait("someone-else"); w != 0 {
		t.Fatalf("another key waits %v", w)
	}
	for i := 0; i < 40; i++ {
		th.Fail("admin")
	}
	if w := th.Wait("admin"); w != 5*time.Minute {
		t.Fatalf("wait is capped at 5m, got %v", w)
	}
	th.Succeed("admin")
	if w := th.Wait("admin"); w != 0 {
		t.Fatalf("after success wait %v", w)
	}
}

func TestLoginThrottle(t *testing.T) {
	const office, home = "192.0.2.7", "198.51.100.9"
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	tests := map[string]struct {
		fail       func(l *LoginThrottle)
		user, addr string
		wait       time.Duration
	}{
		"six failures as alice from the office make alice wait there": {
			fail: func(l *LoginThrottle) { failN(l, 6, "alice", office) }, user: "alice", addr: office, wait: time.Second},
		"alice's failures do not lock out bob at the same address": {
			fail: func(l *LoginThrottle) { failN(l, 20, "alice", office) }, user: "bob", addr: office},
		"alice's failures at the office do not lock her out at home": {
			fail: func(l *LoginThrottle) { failN(l, 20, "alice", office) }, user: "alice", addr: home},
		"a hundred failures from one address over many users slow every login from it": {
			fail: func(l *LoginThrottle) {
				for i := 0; i < 101; i++ {
					l.Fail(fmt.Sprintf("user%d", i), office)
				}
			}, user: "carol", addr: office, wait: time.Second},
		"a success clears the pair but not the address's ceiling": {
			fail: func(l *LoginThrottle) {
				for i := 0; i < 101; i++ {
					l.Fail(fmt.Sprintf("user%d", i), office)
				}
				l.Succeed("mallory", office)
			}, user: "mallory", addr: office, wait: time.Second},
		"the address's failures are forgotten after a quiet hour": {
			fail: func(l *LoginThrottle) {
				for i := 0; i < 101; i++ {
					l.Fail(fmt.Sprintf("user%d", i), office)
				}
				now = now.Add(time.Hour)
				l.Fail("dave", office)
			}, user: "carol", addr: office},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now = time.Unix(1000, 0)
			l := NewLoginThrottle(clock)
			tc.fail(l)
			if got := l.Wait(tc.user, tc.addr); got != tc.wait {
				t.Errorf("%s from %s waits %v, want %v", tc.user, tc.addr, got, tc.wait)
			}
		})
	}
}

func failN(l *LoginThrottle, n int, user, addr string) {
	for i := 0; i < n; i++ {
		l.Fail(user, addr)
	}
}
