package handlers_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestAnAdministratorLinksAUserToAnAgentUserThroughTheAPI: PATCH
// /api/v1/users/{id} with agentUserGroup, as Determined's; the user shows
// it; an empty one unlinks; bad links and non-administrators are refused
// and change nothing.
func TestAnAdministratorLinksAUserToAnAgentUserThroughTheAPI(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	var created resolute.UserResponse
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"ann"},"password":"pw-secret1"}`, &created)
	ann := login(t, m, "ann", "pw-secret1")
	path := "/api/v1/users/" + itoa(created.User.ID)
	link := `{"agentUserGroup":{"agentUid":1001,"agentGid":1002,"agentUser":"ann","agentGroup":"ml"}}`
	want := &resolute.AgentUserGroup{UID: 1001, GID: 1002, User: "ann", Group: "ml"}

	var e resolute.ErrorResponse
	if code := api(t, m, "PATCH", path, ann, link, &e); code != 403 {
		t.Fatalf("ann links herself: %d %+v", code, e)
	}
	var u resolute.UserResponse
	if code := api(t, m, "PATCH", path, admin, link, &u); code != 200 || *u.User.AgentUserGroup != *want {
		t.Fatalf("the administrator links ann: %d %+v", code, u.User)
	}
	var byName resolute.UserResponse
	api(t, m, "GET", "/api/v1/users/ann/by-username", ann, "", &byName)
	var list resolute.UsersResponse
	api(t, m, "GET", "/api/v1/users", ann, "", &list)
	api(t, m, "GET", path, ann, "", &u)
	for what, got := range map[string]resolute.User{"GET by id": u.User, "GET by name": byName.User, "the list": list.Users[1]} {
		if got.AgentUserGroup == nil || *got.AgentUserGroup != *want {
			t.Errorf("%s shows %+v, want the link", what, got)
		}
	}
	if code := api(t, m, "PATCH", path, admin, `{"displayName":"Ann"}`, &u); code != 200 || u.User.AgentUserGroup == nil {
		t.Fatalf("an edit without agentUserGroup keeps the link: %d %+v", code, u.User)
	}

	bad := map[string]struct{ body, want string }{
		"uid 0":                         {`{"agentUid":0,"agentGid":5000,"agentUser":"a","agentGroup":"a"}`, "agentUid: 0 is root's; tasks never run as root"},
		"gid 0":                         {`{"agentUid":5000,"agentGid":0,"agentUser":"a","agentGroup":"a"}`, "agentGid: 0 is root's"},
		"a negative uid":                {`{"agentUid":-5,"agentGid":5000,"agentUser":"a","agentGroup":"a"}`, "agentUid: must be between 1000 and 4294967294 (got -5)"},
		"the uid of no one (-1)":        {`{"agentUid":4294967295,"agentGid":5000,"agentUser":"a","agentGroup":"a"}`, "agentUid: must be between 1000 and 4294967294"},
		"a system account's uid":        {`{"agentUid":101,"agentGid":5000,"agentUser":"postgres","agentGroup":"a"}`, "agentUid: 101 belongs to the system (ids below 1000)"},
		"a system group":                {`{"agentUid":5000,"agentGid":6,"agentUser":"a","agentGroup":"disk"}`, "agentGid: 6 belongs to the system"},
		"a default id of another user":  {fmt.Sprintf(`{"agentUid":%d,"agentGid":5000,"agentUser":"a","agentGroup":"a"}`, m.TaskUIDBase+1), fmt.Sprintf("agentUid: %d is at or above task_uid_base (%d)", m.TaskUIDBase+1, m.TaskUIDBase)},
		"a non-numeric uid":             {`{"agentUid":"1001","agentGid":5000,"agentUser":"a","agentGroup":"a"}`, "agentUid"},
		"a user name with a shell's ;":  {`{"agentUid":5000,"agentGid":5000,"agentUser":"a;rm","agentGroup":"a"}`, `agentUser: use 1-32 letters`},
		"a group name with a newline":   {`{"agentUid":5000,"agentGid":5000,"agentUser":"a","agentGroup":"a\nb"}`, "agentGroup: use 1-32 letters"},
		"a missing user name":           {`{"agentUid":5000,"agentGid":5000,"agentGroup":"a"}`, "agentUser: use 1-32 letters"},
		"a user name starting with '-'": {`{"agentUid":5000,"agentGid":5000,"agentUser":"-a","agentGroup":"a"}`, "agentUser: use 1-32 letters"},
	}
	for name, tc := range bad {
		var e resolute.ErrorResponse
		code := api(t, m, "PATCH", path, admin, `{"agentUserGroup":`+tc.body+`}`, &e)
		if code != 400 || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s: %d %q, want 400 saying %q", name, code, e.Error.Message, tc.want)
		}
	}
	api(t, m, "GET", path, admin, "", &u)
	if u.User.AgentUserGroup == nil || *u.User.AgentUserGroup != *want {
		t.Fatalf("refused links changed the link: %+v", u.User.AgentUserGroup)
	}

	var unlinked, after resolute.UserResponse
	if code := api(t, m, "PATCH", path, admin, `{"agentUserGroup":{}}`, &unlinked); code != 200 || unlinked.User.AgentUserGroup != nil {
		t.Fatalf("unlink: %d %+v", code, unlinked.User)
	}
	api(t, m, "GET", path, admin, "", &after)
	if after.User.AgentUserGroup != nil {
		t.Fatalf("after unlinking, GET shows %+v", after.User.AgentUserGroup)
	}
	lines, _ := m.Logs.Since(0, 1000)
	var log strings.Builder
	for _, l := range lines {
		log.WriteString(l.Message + "\n")
	}
	if !strings.Contains(log.String(), "user linked to an agent user") || !strings.Contains(log.String(), "user unlinked") {
		t.Errorf("the master's log does not say who linked whom:\n%s", log.String())
	}
}

// TestTheUserPageShowsAndEditsTheAgentUser: the administrators' user page
// shows what a user's tasks run as and links, refuses bad input on the
// field with a message, and unlinks.
func TestTheUserPageShowsAndEditsTheAgentUser(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := signInPages(t, m, "admin", "")
	if resp, _ := post(t, admin, m, "/admin/users", url.Values{"username": {"ann"}, "password": {"pw-secret1"}}); resp.StatusCode != 303 {
		t.Fatalf("create ann: %d", resp.StatusCode)
	}
	var u resolute.UserResponse
	api(t, m, "GET", "/api/v1/users/ann/by-username", login(t, m, "ann", "pw-secret1"), "", &u)
	page := "/admin/users/" + itoa(u.User.ID)
	_, body := get(t, admin, m, page)
	if want := fmt.Sprintf("run as uid and gid %d (task_uid_base + user id)", int64(m.TaskUIDBase)+u.User.ID); !strings.Contains(body, want) {
		t.Fatalf("the page of an unlinked user does not say %q:\n%s", want, section(body, "runs-as"))
	}

	link := url.Values{"agent_uid": {"1001"}, "agent_gid": {"1001"}, "agent_user": {"ann"}, "agent_group": {"ann"}}
	if resp, _ := post(t, admin, m, page+"/agent-user", link); resp.StatusCode != 303 {
		t.Fatalf("link ann: %d", resp.StatusCode)
	}
	_, body = get(t, admin, m, page)
	if !strings.Contains(section(body, "runs-as"), "Linked: ann's tasks run as ann (uid 1001), group ann (gid 1001).") ||
		!strings.Contains(body, `id="f-agent_uid" name="agent_uid" type="text" value="1001"`) {
		t.Fatalf("the page of a linked user:\n%s", section(body, "agent-user"))
	}

	bad := map[string]struct {
		form       url.Values
		field, msg string
	}{
		"uid 0":             {url.Values{"agent_uid": {"0"}, "agent_gid": {"5000"}, "agent_user": {"a"}, "agent_group": {"a"}}, "agent_uid", "0 is root&#39;s; tasks never run as root"},
		"a non-numeric gid": {url.Values{"agent_uid": {"5000"}, "agent_gid": {"five"}, "agent_user": {"a"}, "agent_group": {"a"}}, "agent_gid", "must be a whole number"},
		"a negative uid":    {url.Values{"agent_uid": {"-1"}, "agent_gid": {"5000"}, "agent_user": {"a"}, "agent_group": {"a"}}, "agent_uid", "must be between 1000 and"},
		"an odd user name":  {url.Values{"agent_uid": {"5000"}, "agent_gid": {"5000"}, "agent_user": {"$(id)"}, "agent_group": {"a"}}, "agent_user", "use 1-32 letters"},
		"a missing group":   {url.Values{"agent_uid": {"5000"}, "agent_gid": {"5000"}, "agent_user": {"a"}}, "agent_group", "is required"},
	}
	for name, tc := range bad {
		resp, body := post(t, admin, m, page+"/agent-user", tc.form)
		errLine := section(body, "e-"+tc.field)
		if resp.StatusCode != 422 || !strings.Contains(errLine, tc.msg) {
			t.Errorf("%s: %d, error %q; want 422 saying %q", name, resp.StatusCode, errLine, tc.msg)
		}
		if !strings.Contains(body, `value="`+tc.form.Get("agent_user")+`"`) && tc.form.Get("agent_user") != "$(id)" {
			t.Errorf("%s: the form lost what was typed", name)
		}
	}

	ann := signInPages(t, m, "ann", "pw-secret1")
	if resp, _ := post(t, ann, m, page+"/agent-user", url.Values{"agent_uid": {"1"}, "agent_gid": {"1"}, "agent_user": {"bin"}, "agent_group": {"bin"}}); resp.StatusCode != 403 {
		t.Fatalf("ann links herself through the form: %d", resp.StatusCode)
	}
	api(t, m, "GET", "/api/v1/users/"+itoa(u.User.ID), login(t, m, "admin", ""), "", &u)
	if g := u.User.AgentUserGroup; g == nil || g.UID != 1001 {
		t.Fatalf("refused forms changed the link: %+v", g)
	}

	if resp, _ := post(t, admin, m, page+"/agent-user", url.Values{}); resp.StatusCode != 303 {
		t.Fatalf("unlink: %d", resp.StatusCode)
	}
	var after resolute.UserResponse
	api(t, m, "GET", "/api/v1/users/"+itoa(u.User.ID), login(t, m, "admin", ""), "", &after)
	if after.User.AgentUserGroup != nil {
		t.Fatalf("after unlinking: %+v", after.User.AgentUserGroup)
	}
}

// section returns the element with id (its start tag and what follows it,
// up to 400 bytes), for assertions and failure messages.
func section(body, id string) string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	return body[i:min(len(body), i+400)]
}
