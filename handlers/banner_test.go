package handlers_test

import (
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestOnlyAnAdministratorSeesTheNoPasswordBanner: while admin has no
// password, an administrator is warned (and can set one); a user who can do
// nothing about it is not.
func TestOnlyAnAdministratorSeesTheNoPasswordBanner(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"ana"},"password":"s3cret-pw"}`, nil)
	tests := map[string]struct {
		user, password string
		banner         bool
	}{
		"the administrator is warned":  {"admin", "", true},
		"a user without rights is not": {"ana", "s3cret-pw", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := signInPages(t, m, tc.user, tc.password)
			for _, path := range []string{"/dashboard", "/experiments"} {
				_, body := get(t, c, m, path)
				if got := strings.Contains(body, `id="no-password-banner"`); got != tc.banner {
					t.Errorf("%s: banner %t, want %t", path, got, tc.banner)
				}
			}
		})
	}
}
