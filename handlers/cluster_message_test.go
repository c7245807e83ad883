package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestTheClusterMessageIsABannerOnEveryPageWhileItIsActive: a message set
// through the API shows, escaped, on every signed-in page of every user
// from its start until its end or until it is cleared.
func TestTheClusterMessageIsABannerOnEveryPageWhileItIsActive(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"ana"},"password":"s3cret-pw"}`, nil)
	ana := signInPages(t, m, "ana", "s3cret-pw")
	banner := func() string {
		t.Helper()
		var shown string
		for _, path := range []string{"/dashboard", "/experiments", "/tasks", "/account"} {
			_, body := get(t, ana, m, path)
			i := strings.Index(body, `id="cluster-message"`)
			got := ""
			if i >= 0 {
				got = body[i : i+strings.Index(body[i:], "</div>")]
			}
			if path != "/dashboard" && got != shown {
				t.Errorf("%s shows %q, /dashboard %q", path, got, shown)
			}
			shown = got
		}
		return shown
	}
	if b := banner(); b != "" {
		t.Fatalf("a banner before any message: %s", b)
	}
	if code := api(t, m, "PUT", "/api/v1/master/cluster_message", admin, `{"message":"Down <b>tonight</b>","duration":"1h"}`, nil); code != 200 {
		t.Fatalf("set: %d", code)
	}
	if b := banner(); !strings.Contains(b, "Down &lt;b&gt;tonight&lt;/b&gt;") {
		t.Errorf("the banner: %q", b)
	}
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if code := api(t, m, "PUT", "/api/v1/master/cluster_message", admin, `{"message":"later","startTime":"`+later+`"}`, nil); code != 200 {
		t.Fatalf("set later: %d", code)
	}
	if b := banner(); b != "" {
		t.Errorf("a message that has not started shows: %q", b)
	}
	if code := api(t, m, "PUT", "/api/v1/master/cluster_message", login(t, m, "ana", "s3cret-pw"), `{"message":"mine"}`, nil); code != 403 {
		t.Errorf("a user sets the message: %d, want 403", code)
	}
	api(t, m, "PUT", "/api/v1/master/cluster_message", admin, `{"message":"now"}`, nil)
	if b := banner(); !strings.Contains(b, ">now") {
		t.Errorf("the banner: %q", b)
	}
	if code := api(t, m, "DELETE", "/api/v1/master/cluster_message", admin, "", nil); code != 200 {
		t.Fatalf("clear: %d", code)
	}
	if b := banner(); b != "" {
		t.Errorf("after clear: %q", b)
	}
}

// TestTheClusterPageNamesDisabledAgents: a disabled agent, and a disabled
// slot, is named on the Cluster page with what that means and how to
// enable it, until enabled.
func TestTheClusterPageNamesDisabledAgents(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	c := signInPages(t, m, "admin", "")
	if code := api(t, m, "POST", "/api/v1/agents/local/disable", admin, `{"drain":true}`, nil); code != 200 {
		t.Fatalf("disable: %d", code)
	}
	_, body := get(t, c, m, "/cluster")
	wants(t, "the cluster page", body, `id="disabled-agent-local"`, "what runs there finishes", "det agent enable local")
	api(t, m, "POST", "/api/v1/agents/local/enable", admin, "", nil)
	if _, body := get(t, c, m, "/cluster/pools"); strings.Contains(body, "disabled-agent-local") {
		t.Errorf("an enabled agent is still named disabled")
	}

	// A disabled slot likewise.
	if code := api(t, m, "POST", "/api/v1/agents/local/slots/0/disable", admin, "", nil); code != 200 {
		t.Fatalf("disable slot 0: %d", code)
	}
	_, body = get(t, c, m, "/cluster")
	wants(t, "the cluster page", body, `id="disabled-slot-local-0"`, "nothing runs there", "det slot enable local 0")
	api(t, m, "POST", "/api/v1/agents/local/slots/0/enable", admin, "", nil)
	if _, body := get(t, c, m, "/cluster/pools"); strings.Contains(body, "disabled-slot-local-0") {
		t.Errorf("an enabled slot is still named disabled")
	}
}
