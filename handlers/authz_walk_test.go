package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// victim is what alice owns: one of each kind of object, for bob to try
// to change.
type victim struct {
	alice                   resolute.User
	workspace, project, exp int64
	trial                   int64
	checkpoint, task, model string
	// tasks are alice's tasks by kind of the API ("notebooks"); they wait
	// in a pool the master does not have, so none ever starts.
	tasks                    map[string]string
	group                    int64 // a user group with her in it, made by an administrator
	template, job, aliceID   string
	aliceToken, notebookLike string
}

// newVictim makes alice and everything she owns through the API, as she
// would; the checkpoint goes straight into the database (no trial runs).
func newVictim(t *testing.T, m *handlerstest.Master, adminToken string) victim {
	t.Helper()
	return newVictimNamed(t, m, adminToken, "alice", "0b0e5d5e-1c1a-4b7e-9a62-5c1d8e3f0a11")
}

// newVictimNamed makes a user called name and one of each thing she owns,
// named after her; checkpoint is her checkpoint's UUID.
func newVictimNamed(t *testing.T, m *handlerstest.Master, adminToken, name, checkpoint string) victim {
	t.Helper()
	ctx := context.Background()
	must := func(code int, what string) {
		t.Helper()
		if code != 200 {
			t.Fatalf("%s: status %d", what, code)
		}
	}
	// Made already (409), under RBAC, to be given roles first.
	if code := api(t, m, "POST", "/api/v1/users", adminToken, `{"user":{"username":"`+name+`"},"password":"s3cret-pw"}`, nil); code != 409 {
		must(code, "create "+name)
	}
	v := victim{aliceToken: login(t, m, name, "s3cret-pw")}
	var ws resolute.WorkspaceResponse
	must(api(t, m, "POST", "/api/v1/workspaces", v.aliceToken, `{"name":"`+name+`s"}`, &ws), "workspace")
	var p resolute.ProjectResponse
	must(api(t, m, "POST", fmt.Sprintf("/api/v1/workspaces/%d/projects", ws.Workspace.ID), v.aliceToken, `{"name":"vision"}`, &p), "project")
	// Three slots on a two-slot master: it waits in the queue for good.
	cfg, _ := json.Marshal(resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{ProjectID: p.Project.ID,
		Config: "name: " + name + "s\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 3}\n"}})
	var e resolute.ExperimentResponse
	must(api(t, m, "POST", "/api/v1/experiments", v.aliceToken, string(cfg), &e), "experiment")
	var trials resolute.TrialsResponse
	must(api(t, m, "GET", fmt.Sprintf("/api/v1/experiments/%d/trials", e.Experiment.ID), v.aliceToken, "", &trials), "trials")
	trial := trials.Trials[0]
	uuid := checkpoint
	if err := m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: uuid, TrialID: trial.ID, ExperimentID: e.Experiment.ID,
		AllocationID: trial.TaskID() + ".1", TaskID: trial.TaskID(), StepsCompleted: 10, Resources: map[string]int64{"state": 1}, Size: 1}); err != nil {
		t.Fatal(err)
	}
	model, template := name+"s-model", name+"s-template"
	must(api(t, m, "POST", "/api/v1/models", v.aliceToken, `{"name":"`+model+`"}`, nil), "model")
	must(api(t, m, "POST", "/api/v1/models/"+model+"/versions", v.aliceToken, `{"checkpointUuid":"`+uuid+`"}`, nil), "version")
	must(api(t, m, "PUT", "/api/v1/models/"+model+"/aliases/production", v.aliceToken, `{"version":1}`, nil), "alias")
	must(api(t, m, "POST", "/api/v1/templates", v.aliceToken, `{"name":"`+template+`","yaml":"description: mine\n"}`, nil), "template")
	var task resolute.TaskResponse
	must(api(t, m, "POST", "/api/v1/commands", v.aliceToken, `{"config":"resources: {slots: 0}\n","entrypoint":["sleep","60"]}`, &task), "command")
	me, err := m.DB.UserByUsername(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	v.alice, v.aliceID = me.User, itoa(me.ID)
	var g resolute.GroupResponse
	must(api(t, m, "POST", "/api/v1/groups", adminToken, fmt.Sprintf(`{"name":"%ss-group","addUsers":[%d]}`, name, me.ID), &g), "group")
	v.group = g.Group.GroupID
	v.workspace, v.project, v.exp, v.trial = ws.Workspace.ID, p.Project.ID, e.Experiment.ID, trial.ID
	v.checkpoint, v.task, v.model, v.template = uuid, task.Task.ID, model, template
	v.job = fmt.Sprintf("experiment-%d", e.Experiment.ID)
	v.tasks = map[string]string{}
	for kind, typ := range map[string]string{"commands": resolute.TaskCommand, "notebooks": resolute.TaskNotebook,
		"shells": resolute.TaskShell, "tensorboards": resolute.TaskTensorBoard} {
		id, err := m.DB.CreateTask(ctx, db.NewTask{Type: typ, Config: []byte("{}"), UserID: me.ID, ProjectID: p.Project.ID, ResourcePool: "retired"})
		if err != nil {
			t.Fatal(err)
		}
		v.tasks[kind] = id
	}
	return v
}

// attack is one request bob sends to a mutating route: the route's pattern
// with alice's objects in it, and a body the route would accept from her.
type attack struct {
	path      string
	form      url.Values        // a page's form; nil for the JSON API
	multipart map[string]string // a page's multipart form, instead
	body      string            // the API's JSON body
}

// attacks lists, for every mutating route of routes.go ("METHOD pattern"),
// bob's request against alice's objects. Routes anyone signed in may use
// (creating one's own things, one's own session and password) are in
// allowedToEveryone instead, each with why.
func attacks(v victim) map[string]attack {
	e, w, p, tr := itoa(v.exp), itoa(v.workspace), itoa(v.project), itoa(v.trial)
	form := func(kv ...string) url.Values {
		f := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	none := url.Values{}
	out := map[string]attack{
		// Experiments: pages.
		"POST /experiments/batch":                    {path: "/experiments/batch", form: form("action", "kill", "experiments", e)},
		"POST /experiments/{id}/activate":            {path: "/experiments/" + e + "/activate", form: none},
		"POST /experiments/{id}/pause":               {path: "/experiments/" + e + "/pause", form: none},
		"POST /experiments/{id}/cancel":              {path: "/experiments/" + e + "/cancel", form: none},
		"POST /experiments/{id}/kill":                {path: "/experiments/" + e + "/kill", form: none},
		"POST /experiments/{id}/archive":             {path: "/experiments/" + e + "/archive", form: none},
		"POST /experiments/{id}/unarchive":           {path: "/experiments/" + e + "/unarchive", form: none},
		"POST /experiments/{id}/delete":              {path: "/experiments/" + e + "/delete", form: none},
		"POST /experiments/{id}/notes":               {path: "/experiments/" + e + "/notes", form: form("notes", "mine now")},
		"POST /experiments/{id}/labels/add":          {path: "/experiments/" + e + "/labels/add", form: form("label", "bob")},
		"POST /experiments/{id}/labels/remove":       {path: "/experiments/" + e + "/labels/remove", form: form("label", "bob")},
		"POST /experiments/{id}/scheduling":          {path: "/experiments/" + e + "/scheduling", form: form("priority", "1", "weight", "5", "max_slots", "")},
		"POST /jobs/move":                            {path: "/jobs/move", form: form("job", v.job, "ahead_of", v.task)},
		"POST /jobs/update":                          {path: "/jobs/update", form: form("job", v.job, "priority", "1")},
		"POST /tasks/{id}/kill":                      {path: "/tasks/" + v.task + "/kill", form: form("next", "/tasks")},
		"POST /workspaces/{id}/rename":               {path: "/workspaces/" + w + "/rename", form: form("name", "bobs")},
		"POST /workspaces/{id}/settings":             {path: "/workspaces/" + w + "/settings", form: form("default_compute_pool", "default", "checkpoint_storage", "")},
		"POST /workspaces/{id}/archive":              {path: "/workspaces/" + w + "/archive", form: none},
		"POST /workspaces/{id}/unarchive":            {path: "/workspaces/" + w + "/unarchive", form: none},
		"POST /workspaces/{id}/delete":               {path: "/workspaces/" + w + "/delete", form: none},
		"POST /projects/{id}":                        {path: "/projects/" + p, form: form("name", "bobs", "description", "")},
		"POST /projects/{id}/archive":                {path: "/projects/" + p + "/archive", form: none},
		"POST /projects/{id}/unarchive":              {path: "/projects/" + p + "/unarchive", form: none},
		"POST /projects/{id}/delete":                 {path: "/projects/" + p + "/delete", form: none},
		"POST /models/register":                      {path: "/models/register", form: form("checkpoint_uuid", v.checkpoint, "model_name", v.model)},
		"POST /models/{name}/edit":                   {path: "/models/" + v.model + "/edit", form: form("description", "bob's now")},
		"POST /models/{name}/aliases":                {path: "/models/" + v.model + "/aliases", form: form("alias", "staging", "version", "1")},
		"POST /models/{name}/aliases/{alias}/delete": {path: "/models/" + v.model + "/aliases/production/delete", form: none},
		"POST /models/{name}/archive":                {path: "/models/" + v.model + "/archive", form: none},
		"POST /models/{name}/unarchive":              {path: "/models/" + v.model + "/unarchive", form: none},
		"POST /models/{name}/delete":                 {path: "/models/" + v.model + "/delete", form: none},
		"POST /models/{name}/versions/{num}/edit":    {path: "/models/" + v.model + "/versions/1/edit", form: form("name", "bobs")},
		"POST /models/{name}/versions/{num}/delete":  {path: "/models/" + v.model + "/versions/1/delete", form: none},
		"POST /templates/{name}":                     {path: "/templates/" + v.template, form: form("yaml", "description: bob's\n")},
		"POST /templates/{name}/delete":              {path: "/templates/" + v.template + "/delete", form: none},
		"POST /admin/users":                          {path: "/admin/users", form: form("username", "mallory", "password", "s3cret-pw")},
		"POST /admin/users/{id}":                     {path: "/admin/users/" + v.aliceID, form: form("display_name", "x", "active", "on")},
		"POST /admin/users/{id}/password":            {path: "/admin/users/" + v.aliceID + "/password", form: form("password", "bobknows")},
		"POST /admin/users/{id}/agent-user":          {path: "/admin/users/" + v.aliceID + "/agent-user", form: form("agent_uid", "1", "agent_gid", "1", "agent_user", "bin", "agent_group", "bin")},

		// The task API, which only a trial's own allocation may use.
		"POST /api/v1/trials/{id}/metrics": {path: "/api/v1/trials/" + tr + "/metrics",
			body: `{"metrics":{"trial_id":` + tr + `,"trial_run_id":1,"steps_completed":5,"metrics":{"avg_metrics":{"loss":0.1}}},"group":"training"}`},
		"POST /api/v1/trials/{id}/progress":        {path: "/api/v1/trials/" + tr + "/progress", body: `{"progress":0.5}`},
		"POST /api/v1/trials/{id}/early_exit":      {path: "/api/v1/trials/" + tr + "/early_exit", body: `{"reason":"EXITED_REASON_USER_REQUESTED_STOP"}`},
		"POST /api/v1/trials/{id}/runner/metadata": {path: "/api/v1/trials/" + tr + "/runner/metadata", body: `{"state":"bob was here"}`},
		"POST /api/v1/checkpoints": {path: "/api/v1/checkpoints", body: `{"uuid":"1b0e5d5e-1c1a-4b7e-9a62-5c1d8e3f0a11","taskId":"trial-` + tr +
			`","allocationId":"trial-` + tr + `.1","state":"STATE_COMPLETED","resources":{"a":1},"metadata":{"steps_completed":20}}`},
		"POST /api/v1/runs/{id}/metadata":                      {path: "/api/v1/runs/" + tr + "/metadata", body: `{"metadata":{"bob":true}}`},
		"PATCH /api/v1/checkpoints":                            {path: "/api/v1/checkpoints", body: `{"checkpoints":[{"uuid":"` + v.checkpoint + `","resources":{"resources":{}}}]}`},
		"DELETE /api/v1/checkpoints":                           {path: "/api/v1/checkpoints", body: `{"checkpointUuids":["` + v.checkpoint + `"]}`},
		"POST /api/v1/allocations/{id}/signals/ack_preemption": {path: "/api/v1/allocations/trial-" + tr + ".1/signals/ack_preemption", body: `{}`},
		"POST /api/v1/allocations/{id}/rendezvous":             {path: "/api/v1/allocations/trial-" + tr + ".1/rendezvous", body: `{"addr":"10.0.0.9","rank":0,"size":1,"slots":1}`},

		// The API.
		"POST /api/v1/users/{id}/password":                        {path: "/api/v1/users/" + v.aliceID + "/password", body: `{"password":"bobknows"}`},
		"PATCH /api/v1/workspaces/{id}":                           {path: "/api/v1/workspaces/" + w, body: `{"name":"bobs"}`},
		"POST /api/v1/workspaces/{id}/namespace-bindings":         {path: "/api/v1/workspaces/" + w + "/namespace-bindings", body: `{"clusterNamespaceMeta":{"":{"namespace":"bobs"}}}`},
		"DELETE /api/v1/workspaces/{id}/namespace-bindings":       {path: "/api/v1/workspaces/" + w + "/namespace-bindings"},
		"POST /api/v1/resource-pools/{name}/workspace-bindings":   {path: "/api/v1/resource-pools/default/workspace-bindings", body: `{"workspaceIds":[` + w + `]}`},
		"PUT /api/v1/resource-pools/{name}/workspace-bindings":    {path: "/api/v1/resource-pools/default/workspace-bindings", body: `{"workspaceIds":[` + w + `]}`},
		"DELETE /api/v1/resource-pools/{name}/workspace-bindings": {path: "/api/v1/resource-pools/default/workspace-bindings", body: `{"workspaceIds":[` + w + `]}`},
		"DELETE /api/v1/workspaces/{id}":                          {path: "/api/v1/workspaces/" + w},
		"POST /api/v1/workspaces/{id}/archive":                    {path: "/api/v1/workspaces/" + w + "/archive"},
		"POST /api/v1/workspaces/{id}/unarchive":                  {path: "/api/v1/workspaces/" + w + "/unarchive"},
		"PATCH /api/v1/projects/{id}":                             {path: "/api/v1/projects/" + p, body: `{"name":"bobs"}`},
		"DELETE /api/v1/projects/{id}":                            {path: "/api/v1/projects/" + p},
		"POST /api/v1/projects/{id}/archive":                      {path: "/api/v1/projects/" + p + "/archive"},
		"POST /api/v1/projects/{id}/unarchive":                    {path: "/api/v1/projects/" + p + "/unarchive"},
		"PUT /api/v1/templates/{name}":                            {path: "/api/v1/templates/" + v.template, body: `{"name":"` + v.template + `","yaml":"description: bob's\n"}`},
		"PATCH /api/v1/templates/{name}":                          {path: "/api/v1/templates/" + v.template, body: `{"yaml":"description: bob's\n"}`},
		"DELETE /api/v1/templates/{name}":                         {path: "/api/v1/templates/" + v.template},
		"PATCH /api/v1/experiments/{id}":                          {path: "/api/v1/experiments/" + e, body: `{"name":"bobs"}`},
		"DELETE /api/v1/experiments/{id}":                         {path: "/api/v1/experiments/" + e},
		"POST /api/v1/experiments/{id}/activate":                  {path: "/api/v1/experiments/" + e + "/activate"},
		"POST /api/v1/experiments/{id}/pause":                     {path: "/api/v1/experiments/" + e + "/pause"},
		"POST /api/v1/experiments/{id}/cancel":                    {path: "/api/v1/experiments/" + e + "/cancel"},
		"POST /api/v1/experiments/{id}/kill":                      {path: "/api/v1/experiments/" + e + "/kill"},
		"POST /api/v1/experiments/{id}/archive":                   {path: "/api/v1/experiments/" + e + "/archive"},
		"POST /api/v1/experiments/{id}/unarchive":                 {path: "/api/v1/experiments/" + e + "/unarchive"},
		"POST /api/v1/experiments/{id}/move":                      {path: "/api/v1/experiments/" + e + "/move", body: `{"destinationProjectId":1}`},
		"POST /api/v1/job-queues":                                 {path: "/api/v1/job-queues", body: `{"updates":[{"jobId":"` + v.job + `","priority":1}]}`},
		"PATCH /api/v1/models/{name}":                             {path: "/api/v1/models/" + v.model, body: `{"description":"bob's"}`},
		"DELETE /api/v1/models/{name}":                            {path: "/api/v1/models/" + v.model},
		"POST /api/v1/models/{name}/archive":                      {path: "/api/v1/models/" + v.model + "/archive"},
		"POST /api/v1/models/{name}/unarchive":                    {path: "/api/v1/models/" + v.model + "/unarchive"},
		"POST /api/v1/models/{name}/move":                         {path: "/api/v1/models/" + v.model + "/move", body: `{"destinationWorkspaceId":1}`},
		"POST /api/v1/models/{name}/versions":                     {path: "/api/v1/models/" + v.model + "/versions", body: `{"checkpointUuid":"` + v.checkpoint + `"}`},
		"PATCH /api/v1/models/{name}/versions/{num}":              {path: "/api/v1/models/" + v.model + "/versions/1", body: `{"name":"bobs"}`},
		"DELETE /api/v1/models/{name}/versions/{num}":             {path: "/api/v1/models/" + v.model + "/versions/1"},
		"PUT /api/v1/models/{name}/aliases/{alias}":               {path: "/api/v1/models/" + v.model + "/aliases/staging", body: `{"version":1}`},
		"DELETE /api/v1/models/{name}/aliases/{alias}":            {path: "/api/v1/models/" + v.model + "/aliases/production"},
		"POST /api/v1/trials/{id}/kill":                           {path: "/api/v1/trials/" + tr + "/kill"},
		"POST /api/v1/users":                                      {path: "/api/v1/users", body: `{"user":{"username":"mallory"},"password":"s3cret-pw"}`},
		"PATCH /api/v1/users/{id}":                                {path: "/api/v1/users/" + v.aliceID, body: `{"admin":true}`},
		"DELETE /api/v1/experiments/{id}/tensorboard-files":       {path: "/api/v1/experiments/" + e + "/tensorboard-files"},
		// The cluster as a whole: administrators only.
		"PUT /api/v1/master/cluster_message":              {path: "/api/v1/master/cluster_message", body: `{"message":"bob was here"}`},
		"DELETE /api/v1/master/cluster_message":           {path: "/api/v1/master/cluster_message"},
		"POST /api/v1/agents/{id}/disable":                {path: "/api/v1/agents/local/disable", body: `{"drain":true}`},
		"POST /api/v1/agents/{id}/enable":                 {path: "/api/v1/agents/local/enable", body: `{}`},
		"POST /api/v1/agents/{id}/slots/{slotId}/disable": {path: "/api/v1/agents/local/slots/0/disable", body: `{"drain":true}`},
		"POST /api/v1/agents/{id}/slots/{slotId}/enable":  {path: "/api/v1/agents/local/slots/0/enable", body: `{}`},
		// Webhooks and the log cleanup are the administrators'; an
		// experiment's log retention its owner's.
		"POST /admin/webhooks":                     {path: "/admin/webhooks", form: form("name", "bobs", "url", "http://127.0.0.1:9/", "experiment_state", "COMPLETED")},
		"POST /admin/webhooks/{id}/delete":         {path: "/admin/webhooks/999999/delete", form: none},
		"POST /admin/webhooks/{id}/test":           {path: "/admin/webhooks/999999/test", form: none},
		"POST /api/v1/webhooks":                    {path: "/api/v1/webhooks", body: `{"name":"bobs","url":"http://127.0.0.1:9/","triggers":[{"triggerType":"TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE","condition":{"state":"COMPLETED"}}]}`},
		"PATCH /api/v1/webhooks/{id}":              {path: "/api/v1/webhooks/999999", body: `{"url":"http://127.0.0.1:9/bob"}`},
		"DELETE /api/v1/webhooks/{id}":             {path: "/api/v1/webhooks/999999"},
		"POST /api/v1/webhooks/{id}/test":          {path: "/api/v1/webhooks/999999/test"},
		"POST /api/v1/cleanup_logs":                {path: "/api/v1/cleanup_logs"},
		"PUT /api/v1/experiments/{id}/retain_logs": {path: "/api/v1/experiments/" + e + "/retain_logs", body: `{"numDays":1}`},
	}
	// Only a task's owner and administrators get a ticket to its service
	// on the task origin (which TestATicketIsUsedOnceAndBoundToItsTaskAndUser
	// walks); the master proxies nothing.
	out["POST /api/v1/tasks/{id}/open"] = attack{path: "/api/v1/tasks/" + v.tasks["notebooks"] + "/open"}
	for _, kind := range []string{"commands", "notebooks", "shells", "tensorboards"} {
		out["POST /api/v1/"+kind+"/{id}/kill"] = attack{path: "/api/v1/" + kind + "/" + v.tasks[kind] + "/kill"}
		out["POST /api/v1/"+kind+"/{id}/set_priority"] = attack{path: "/api/v1/" + kind + "/" + v.tasks[kind] + "/set_priority", body: `{"priority":1}`}
	}
	// User groups and roles: administrators only under basic authorization
	// (adminOnly), so her own group and workspace are refused her too.
	g, name := itoa(v.group), v.alice.Username
	viewerHere := `{"userRoleAssignments":[{"userId":` + v.aliceID + `,"roleAssignment":{"role":{"name":"Viewer"},"scopeWorkspaceId":` + w + `}}]}`
	for route, a := range map[string]attack{
		"POST /api/v1/groups":                    {path: "/api/v1/groups", body: `{"name":"mallory-group"}`},
		"PUT /api/v1/groups/{groupId}":           {path: "/api/v1/groups/" + g, body: `{"name":"` + name + `s-group2"}`},
		"PATCH /api/v1/groups/{groupId}":         {path: "/api/v1/groups/" + g, body: `{"removeUsers":[` + v.aliceID + `]}`},
		"DELETE /api/v1/groups/{groupId}":        {path: "/api/v1/groups/" + g},
		"POST /api/v1/roles/add-assignments":     {path: "/api/v1/roles/add-assignments", body: viewerHere},
		"POST /api/v1/roles/remove-assignments":  {path: "/api/v1/roles/remove-assignments", body: viewerHere},
		"POST /workspaces/{id}/members":          {path: "/workspaces/" + w + "/members", form: form("kind", "user", "name", name, "role", "Editor")},
		"POST /workspaces/{id}/members/remove":   {path: "/workspaces/" + w + "/members/remove", form: form("role", "Editor", "user_id", v.aliceID)},
		"POST /admin/groups":                     {path: "/admin/groups", form: form("name", "mallory-group-page")},
		"POST /admin/groups/{id}":                {path: "/admin/groups/" + g, form: form("name", name+"s-group3")},
		"POST /admin/groups/{id}/members":        {path: "/admin/groups/" + g + "/members", form: form("username", "bob")},
		"POST /admin/groups/{id}/members/remove": {path: "/admin/groups/" + g + "/members/remove", form: form("username", name)},
		"POST /admin/groups/{id}/delete":         {path: "/admin/groups/" + g + "/delete", form: none},
		"POST /admin/groups/{id}/roles":          {path: "/admin/groups/" + g + "/roles", form: form("role", "Viewer")},
		"POST /admin/groups/{id}/roles/remove":   {path: "/admin/groups/" + g + "/roles/remove", form: form("role", "Viewer")},
	} {
		out[route] = a
	}
	return out
}

// allowedToEveryone are the mutating routes any signed-in user may call
// with what others own, and why; the walk checks they still exist.
var allowedToEveryone = map[string]string{
	"POST /static/*":                        "the embedded assets: it serves files and changes nothing",
	"PUT /static/*":                         "the embedded assets: it serves files and changes nothing",
	"PATCH /static/*":                       "the embedded assets: it serves files and changes nothing",
	"DELETE /static/*":                      "the embedded assets: it serves files and changes nothing",
	"POST /login":                           "signing in",
	"POST /logout":                          "one's own session",
	"POST /api/v1/auth/login":               "signing in",
	"POST /api/v1/auth/logout":              "one's own session",
	"POST /account/password":                "one's own password (the current one is asked)",
	"POST /experiments/new":                 "creates the caller's own experiment",
	"POST /experiments/new/validate":        "only checks a config",
	"POST /api/v1/experiments":              "creates the caller's own experiment",
	"POST /api/v1/preview-hp-search":        "only previews a search",
	"POST /experiments/{id}/fork":           "reads the experiment, creates the caller's own",
	"POST /experiments/{id}/tensorboard":    "reads the experiment, creates the caller's own TensorBoard",
	"POST /compare/tensorboard":             "reads the experiments, creates the caller's own TensorBoard",
	"POST /workspaces":                      "creates the caller's own workspace",
	"POST /api/v1/workspaces":               "creates the caller's own workspace",
	"POST /workspaces/{id}/projects":        "anyone may add a project to a workspace (Determined's rule)",
	"POST /api/v1/workspaces/{id}/projects": "anyone may add a project to a workspace (Determined's rule)",
	"POST /models":                          "creates the caller's own model",
	"POST /api/v1/models":                   "creates the caller's own model",
	"POST /models/register":                 "registers a checkpoint in a model the form checks (the caller's own or a new one)",
	"POST /templates":                       "creates the caller's own template",
	"POST /api/v1/templates":                "creates the caller's own template",
	"POST /tasks/launch-notebook":           "creates the caller's own notebook",
	"POST /tasks/launch-shell":              "creates the caller's own shell",
	"POST /tasks/run-command":               "creates the caller's own command",
	"POST /api/v1/commands":                 "creates the caller's own command",
	"POST /api/v1/notebooks":                "creates the caller's own notebook",
	"POST /api/v1/shells":                   "creates the caller's own shell",
	"POST /api/v1/tensorboards":             "creates the caller's own TensorBoard",
	"POST /api/v1/groups/search":            "only reads the user groups",
	"POST /api/v1/roles/search":             "only reads the roles",
	"POST /api/v1/roles/search/by-ids":      "only reads the roles and who holds them",
}

// mutatingRoutes lists "METHOD pattern" of every POST, PUT, PATCH and
// DELETE route of the router.
func mutatingRoutes(t *testing.T) []string {
	t.Helper()
	r := handlers.New(handlers.Config{}, handlers.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Routes()
	var out []string
	err := chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		switch method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			out = append(out, method+" "+strings.TrimSuffix(route, "/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
