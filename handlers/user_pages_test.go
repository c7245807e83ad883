package handlers_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestTheUserAndAccountFormsWork drives the administrators' user forms and
// a user's own password form, which call the same service as the API.
func TestTheUserAndAccountFormsWork(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := signInPages(t, m, "admin", "")
	form := url.Values{"username": {"ann"}, "display_name": {"Ann"}, "password": {"s3cret-pw"}}
	if resp, _ := post(t, admin, m, "/admin/users", form); resp.StatusCode != 303 {
		t.Fatalf("create a user: %d", resp.StatusCode)
	}
	if resp, body := post(t, admin, m, "/admin/users", form); resp.StatusCode != 422 || !strings.Contains(body, `id="e-username"`) {
		t.Fatalf("a duplicate user: %d", resp.StatusCode)
	}
	var u resolute.UserResponse
	api(t, m, "GET", "/api/v1/users/ann/by-username", login(t, m, "ann", "s3cret-pw"), "", &u)
	ann := itoa(u.User.ID)

	if resp, _ := post(t, admin, m, "/admin/users/"+ann, url.Values{"display_name": {"Ann B"}, "active": {"on"}}); resp.StatusCode != 303 {
		t.Fatalf("edit a user: %d", resp.StatusCode)
	}
	api(t, m, "GET", "/api/v1/users/"+ann, login(t, m, "ann", "s3cret-pw"), "", &u)
	if u.User.DisplayName != "Ann B" || !u.User.Active || u.User.Admin {
		t.Fatalf("edited user = %+v", u.User)
	}
	resp, body := post(t, admin, m, "/admin/users/1", url.Values{"display_name": {""}, "active": {"on"}})
	if resp.StatusCode != 422 || !strings.Contains(body, "is the last active administrator") {
		t.Fatalf("the last administrator steps down: %d", resp.StatusCode)
	}
	if resp, _ := post(t, admin, m, "/admin/users/"+ann+"/password", url.Values{"password": {"s3cret-pw2"}}); resp.StatusCode != 303 {
		t.Fatalf("reset a password: %d", resp.StatusCode)
	}

	c := signInPages(t, m, "ann", "s3cret-pw2")
	if resp, _ := post(t, c, m, "/admin/users/"+ann, url.Values{"display_name": {"Boss"}, "admin": {"on"}, "active": {"on"}}); resp.StatusCode != 403 {
		t.Fatalf("a user uses the admin form: %d", resp.StatusCode)
	}
	resp, body = post(t, c, m, "/account/password", url.Values{"old_password": {"wrong"}, "new_password": {"s3cret-pw3"}, "confirm": {"s3cret-pw3"}})
	if resp.StatusCode != 422 || !strings.Contains(body, `id="e-old_password"`) {
		t.Fatalf("a wrong current password: %d", resp.StatusCode)
	}
	if resp, _ := post(t, c, m, "/account/password", url.Values{"old_password": {"s3cret-pw2"}, "new_password": {"s3cret-pw3"}, "confirm": {"s3cret-pw3"}}); resp.StatusCode != 303 {
		t.Fatalf("change one's password: %d", resp.StatusCode)
	}
	if resp, _ := get(t, c, m, "/account"); resp.StatusCode != 200 {
		t.Fatalf("the session that changed the password ended: %d", resp.StatusCode)
	}
	login(t, m, "ann", "s3cret-pw3")
}
