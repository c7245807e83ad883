package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// TestEveryBodyTakesEitherSpelling sends each request body that
// Determined's clients (and the harness) send, once with its field names
// in camelCase as Determined's bindings write them and once in
// snake_case as the proto names them, to a real master; each has the
// same effect in both. Keys of user data (metrics, metadata, configs,
// hyperparameters, file names) stay exactly as sent. Every POST, PUT and
// PATCH route of the API is here or in bodiless, with why.
func TestEveryBodyTakesEitherSpelling(t *testing.T) {
	fx := newSpellingFixture(t)
	ctx := context.Background()
	m := fx.m
	tests := map[string]spelled{
		"a training metrics report, with metrics named like the report's fields": {
			route: "POST /api/v1/trials/{id}/metrics", path: "/api/v1/trials/{trial}/metrics", task: true,
			camel: `{"group":"training","metrics":{"trialId":{trial},"trialRunId":{run},"stepsCompleted":{step},"reportTime":"2026-11-25T22:00:00Z",` +
				`"metrics":{"avgMetrics":{"loss":0.5,"avg_metrics":1,"trialRunId":2,"stepsCompleted":3},"batchMetrics":[{"loss":0.75,"batch_idx":0}]}}}`,
			snake: `{"group":"training","metrics":{"trial_id":{trial},"trial_run_id":{run},"steps_completed":{step},"report_time":"2026-11-25T22:00:00Z",` +
				`"metrics":{"avg_metrics":{"loss":0.5,"avg_metrics":1,"trialRunId":2,"stepsCompleted":3},"batch_metrics":[{"loss":0.75,"batch_idx":0}]}}}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				stored := report(t, fx, "training", v["{step}"])
				want := `{"avg_metrics":{"avg_metrics":1,"loss":0.5,"stepsCompleted":3,"trialRunId":2},"batch_metrics":[{"batch_idx":0,"loss":0.75}]}`
				if !jsonEqual([]byte(stored), want) {
					t.Errorf("stored %s, want %s", stored, want)
				}
			},
		},
		"a validation metrics report": {
			route: "POST /api/v1/trials/{id}/metrics", path: "/api/v1/trials/{trial}/metrics", task: true,
			camel: `{"group":"validation","metrics":{"trialId":{trial},"trialRunId":{run},"stepsCompleted":{step},"metrics":{"avgMetrics":{"loss":0.25,"top_1":0.5}}}}`,
			snake: `{"group":"validation","metrics":{"trial_id":{trial},"trial_run_id":{run},"steps_completed":{step},"metrics":{"avg_metrics":{"loss":0.25,"top_1":0.5}}}}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if stored := report(t, fx, "validation", v["{step}"]); !jsonEqual([]byte(stored), `{"avg_metrics":{"loss":0.25,"top_1":0.5},"batch_metrics":null}`) {
					t.Errorf("stored %s", stored)
				}
			},
		},
		"a metrics report of another run is refused: the run id reached the master": {
			route: "POST /api/v1/trials/{id}/metrics", path: "/api/v1/trials/{trial}/metrics", task: true, status: 400,
			camel: `{"metrics":{"trialId":{trial},"trialRunId":99,"stepsCompleted":{step},"metrics":{"avgMetrics":{"loss":1}}}}`,
			snake: `{"metrics":{"trial_id":{trial},"trial_run_id":99,"steps_completed":{step},"metrics":{"avg_metrics":{"loss":1}}}}`,
			check: wantMessage("trial_run_id: trial"),
		},
		"progress": {
			route: "POST /api/v1/trials/{id}/progress", path: "/api/v1/trials/{trial}/progress", task: true,
			camel: `{"trialId":{trial},"progress":0.{n},"isRaw":true}`, snake: `{"trial_id":{trial},"progress":0.{n},"is_raw":true}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if tr, _ := m.DB.Trial(ctx, fx.trial); fmt.Sprint(tr.Progress) != "0."+v["{n}"] {
					t.Errorf("progress %v, want 0.%s", tr.Progress, v["{n}"])
				}
			},
		},
		"an early exit": {
			route: "POST /api/v1/trials/{id}/early_exit", path: "/api/v1/trials/{trial}/early_exit", task: true,
			camel: `{"trialId":{trial},"reason":"EXITED_REASON_UNSPECIFIED"}`, snake: `{"trial_id":{trial},"reason":"EXITED_REASON_UNSPECIFIED"}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if tr, _ := m.DB.Trial(ctx, fx.trial); tr.EarlyExit != "EXITED_REASON_UNSPECIFIED" {
					t.Errorf("early exit %q", tr.EarlyExit)
				}
			},
		},
		"the runner's state": {
			route: "POST /api/v1/trials/{id}/runner/metadata", path: "/api/v1/trials/{trial}/runner/metadata", task: true,
			camel: `{"trialId":{trial},"state":"validating {s}"}`, snake: `{"trial_id":{trial},"state":"validating {s}"}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if tr, _ := m.DB.Trial(ctx, fx.trial); tr.RunnerState != "validating "+v["{s}"] {
					t.Errorf("runner state %q", tr.RunnerState)
				}
			},
		},
		"run metadata, whose keys stay as written": {
			route: "POST /api/v1/runs/{id}/metadata", path: "/api/v1/runs/{trial}/metadata", task: true,
			camel: `{"runId":{trial},"metadata":{"best_lr":{n},"runId":{"a_b":[1,{"cD":2}]}}}`,
			snake: `{"run_id":{trial},"metadata":{"best_lr":{n},"runId":{"a_b":[1,{"cD":2}]}}}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				md, err := m.DB.RunMetadata(ctx, fx.trial)
				if want := `{"best_lr": ` + v["{n}"] + `, "runId": {"a_b": [1, {"cD": 2}]}}`; err != nil || !jsonEqual(md, want) {
					t.Errorf("metadata %s (%v), want %s", md, err, want)
				}
			},
		},
		"a checkpoint report": {
			route: "POST /api/v1/checkpoints", path: "/api/v1/checkpoints", task: true,
			camel: `{"uuid":"{uuid}","taskId":"trial-{trial}","allocationId":"{alloc}","reportTime":"2026-11-25T22:00:00Z",` +
				`"resources":{"model/state_dict.pt":"100","optimizer_state.pt":"20"},"metadata":{"steps_completed":{step},"framework":"torch","trialRunId":1},"state":"STATE_COMPLETED"}`,
			snake: `{"uuid":"{uuid}","task_id":"trial-{trial}","allocation_id":"{alloc}","report_time":"2026-11-25T22:00:00Z",` +
				`"resources":{"model/state_dict.pt":"100","optimizer_state.pt":"20"},"metadata":{"steps_completed":{step},"framework":"torch","trialRunId":1},"state":"STATE_COMPLETED"}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				return map[string]string{"{uuid}": map[string]string{"camel": "6a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", "snake": "7b2c3d4e-5f6a-4b7c-9d8e-9f0a1b2c3d4e"}[s]}
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				c, err := m.DB.Checkpoint(ctx, v["{uuid}"])
				if err != nil {
					t.Fatal(err)
				}
				if c.TrialID != fx.trial || fmt.Sprint(c.StepsCompleted) != v["{step}"] || c.Resources["model/state_dict.pt"] != 100 || c.Resources["optimizer_state.pt"] != 20 {
					t.Errorf("checkpoint %+v", c)
				}
				if !strings.Contains(string(c.Metadata), `"trialRunId": 1`) {
					t.Errorf("metadata %s", c.Metadata)
				}
			},
		},
		"a checkpoint's files after a partial delete": {
			route: "PATCH /api/v1/checkpoints", path: "/api/v1/checkpoints", task: true,
			camel: `{"checkpoints":[{"uuid":"{uuid}","resources":{"resources":{"model_{s}.pt":"{n}"}}}]}`,
			snake: `{"checkpoints":[{"uuid":"{uuid}","resources":{"resources":{"model_{s}.pt":"{n}"}}}]}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				uuid := map[string]string{"camel": "8c3d4e5f-6a7b-4c8d-8e9f-0a1b2c3d4e5f", "snake": "9d4e5f6a-7b8c-4d9e-9f0a-1b2c3d4e5f6a"}[s]
				if err := m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: uuid, TrialID: fx.trial, ExperimentID: fx.exp, AllocationID: fx.alloc,
					TaskID: resolute.TrialTaskID(fx.trial), StepsCompleted: 1, Resources: map[string]int64{"model_" + s + ".pt": 9, "other": 1}, Size: 10}); err != nil {
					t.Fatal(err)
				}
				return map[string]string{"{uuid}": uuid}
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				c, _ := m.DB.Checkpoint(ctx, v["{uuid}"])
				if fmt.Sprint(c.Resources) != "map[model_"+v["{s}"]+".pt:"+v["{n}"]+"]" {
					t.Errorf("resources %v", c.Resources)
				}
			},
		},
		"a preemption's acknowledgement": {
			route: "POST /api/v1/allocations/{id}/signals/ack_preemption", path: "/api/v1/allocations/{alloc}/signals/ack_preemption", task: true,
			camel: `{"allocationId":"{alloc}"}`, snake: `{"allocation_id":"{alloc}"}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if al, _ := m.DB.Allocation(ctx, fx.alloc); !al.PreemptAcked {
					t.Error("not acknowledged")
				}
			},
		},
		"a pod's rendezvous": {
			route: "POST /api/v1/allocations/{id}/rendezvous", path: "/api/v1/allocations/{alloc}/rendezvous", task: true,
			camel: `{"rank":0,"size":1,"addr":"10.0.0.{n}","slots":1}`, snake: `{"rank":0,"size":1,"addr":"10.0.0.{n}","slots":1}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var r resolute.RendezvousResponse
				if json.Unmarshal(answer, &r); !r.Ready || fmt.Sprint(r.ContainerAddrs) != "[10.0.0."+v["{n}"]+"]" {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"a login": {
			route: "POST /api/v1/auth/login", path: "/api/v1/auth/login",
			camel: `{"username":"admin","password":"","isHashed":false}`, snake: `{"username":"admin","password":"","is_hashed":false}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				if out := (resolute.LoginResponse{}); json.Unmarshal(answer, &out) != nil || out.Token == "" {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"a login with a hashed password is refused: isHashed reached the master": {
			route: "POST /api/v1/auth/login", path: "/api/v1/auth/login", status: 400,
			camel: `{"username":"admin","password":"x","isHashed":true}`, snake: `{"username":"admin","password":"x","is_hashed":true}`,
			check: wantMessage("isHashed: Resolute accepts only plain passwords"),
		},
		"a new user": {
			route: "POST /api/v1/users", path: "/api/v1/users",
			camel: `{"user":{"username":"ada-{s}","displayName":"Ada {s}","admin":false,"active":true,"agentUserGroup":null},"password":"s3cret-pw-1","isHashed":false}`,
			snake: `{"user":{"username":"ada-{s}","display_name":"Ada {s}","admin":false,"active":true,"agent_user_group":null},"password":"s3cret-pw-1","is_hashed":false}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if u, err := m.DB.UserByUsername(ctx, "ada-"+v["{s}"]); err != nil || u.DisplayName != "Ada "+v["{s}"] {
					t.Errorf("user %+v (%v)", u, err)
				}
			},
		},
		"a cluster message with its window": {
			route: "PUT /api/v1/master/cluster_message", path: "/api/v1/master/cluster_message",
			camel: `{"message":"m{n}","startTime":"2026-01-0{n}T00:00:00Z","endTime":"2030-01-0{n}T00:00:00Z"}`,
			snake: `{"message":"m{n}","start_time":"2026-01-0{n}T00:00:00Z","end_time":"2030-01-0{n}T00:00:00Z"}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				msg, err := m.DB.ClusterMessage(ctx)
				if err != nil || msg.Message != "m"+v["{n}"] || fmt.Sprint(msg.StartTime.UTC().Day()) != v["{n}"] ||
					msg.EndTime == nil || msg.EndTime.Year() != 2030 {
					t.Errorf("message %+v (%v)", msg, err)
				}
			},
		},
		"an edit of a user": {
			route: "PATCH /api/v1/users/{id}", path: "/api/v1/users/{user}",
			camel: `{"displayName":"Grace {s}","agentUserGroup":{"agentUid":20{n}0,"agentGid":30{n}0,"agentUser":"grace{n}","agentGroup":"staff{n}"}}`,
			snake: `{"display_name":"Grace {s}","agent_user_group":{"agent_uid":20{n}0,"agent_gid":30{n}0,"agent_user":"grace{n}","agent_group":"staff{n}"}}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				var u resolute.UserResponse
				fx.must(t, "POST", "/api/v1/users", `{"user":{"username":"grace-`+s+`"},"password":"s3cret-pw-1"}`, &u)
				return map[string]string{"{user}": fmt.Sprint(u.User.ID)}
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				u, err := m.DB.User(ctx, int64(atoi(v["{user}"])))
				want := &resolute.AgentUserGroup{UID: 2000 + 10*atoi(v["{n}"]), GID: 3000 + 10*atoi(v["{n}"]), User: "grace" + v["{n}"], Group: "staff" + v["{n}"]}
				if err != nil || u.DisplayName != "Grace "+v["{s}"] || !cmp.Equal(u.AgentUserGroup, want) {
					t.Errorf("user %+v (%v)", u, err)
				}
			},
		},
		"a change of one's own password, with the old one": {
			route: "POST /api/v1/users/{id}/password", path: "/api/v1/users/{user}/password",
			camel: `{"password":"new-password-{s}","oldPassword":"old-password-1"}`, snake: `{"password":"new-password-{s}","old_password":"old-password-1"}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				var u resolute.UserResponse
				fx.must(t, "POST", "/api/v1/users", `{"user":{"username":"linus-`+s+`"},"password":"old-password-1"}`, &u)
				return map[string]string{"{user}": fmt.Sprint(u.User.ID), "{token}": login(t, m, "linus-"+s, "old-password-1")}
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				login(t, m, "linus-"+v["{s}"], "new-password-"+v["{s}"])
			},
		},
		"a new workspace": {
			route: "POST /api/v1/workspaces", path: "/api/v1/workspaces",
			camel: `{"name":"ws-{s}","agentUserGroup":null,"defaultComputePool":""}`, snake: `{"name":"ws-{s}","agent_user_group":null,"default_compute_pool":""}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var w resolute.WorkspaceResponse
				if json.Unmarshal(answer, &w); w.Workspace.Name != "ws-"+v["{s}"] {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"a renamed workspace": {
			route: "PATCH /api/v1/workspaces/{id}", path: "/api/v1/workspaces/{ws}",
			camel: `{"name":"space {s}","defaultAuxPool":""}`, snake: `{"name":"space {s}","default_aux_pool":""}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if w, _ := m.DB.Workspace(ctx, fx.ws); w.Name != "space "+v["{s}"] {
					t.Errorf("workspace %+v", w)
				}
			},
		},
		"a workspace's settings, the storage's keys kept as written": {
			route: "PATCH /api/v1/workspaces/{id}", path: "/api/v1/workspaces/{ws}",
			camel: `{"defaultComputeResourcePool":"default","checkpointStorageConfig":{"type":"shared_fs","host_path":"/mnt/{s}"}}`,
			snake: `{"default_compute_resource_pool":"default","checkpoint_storage_config":{"type":"shared_fs","host_path":"/mnt/{s}"}}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				w, _ := m.DB.WorkspaceSettings(ctx, fx.ws)
				if w.DefaultComputePool != "default" || w.CheckpointStorage["host_path"] != "/mnt/"+v["{s}"] {
					t.Errorf("settings %+v", w)
				}
			},
		},
		"a pool bound to a workspace: the ids reached the rule for default pools": {
			route: "POST /api/v1/resource-pools/{name}/workspace-bindings", path: "/api/v1/resource-pools/default/workspace-bindings",
			camel: `{"resourcePoolName":"default","workspaceIds":[{ws}]}`, snake: `{"resource_pool_name":"default","workspace_ids":[{ws}]}`,
			status: 400, check: wantMessage("default pools cannot be bound"),
		},
		"a pool's bindings replaced": {
			route: "PUT /api/v1/resource-pools/{name}/workspace-bindings", path: "/api/v1/resource-pools/default/workspace-bindings",
			camel: `{"resourcePoolName":"default","workspaceIds":[{ws}]}`, snake: `{"resource_pool_name":"default","workspace_ids":[{ws}]}`,
			status: 400, check: wantMessage("default pools cannot be bound"),
		},
		"a workspace's namespace: it reached the rule for the local resource manager": {
			route: "POST /api/v1/workspaces/{id}/namespace-bindings", path: "/api/v1/workspaces/{ws}/namespace-bindings",
			camel:  `{"workspaceId":{ws},"clusterNamespaceMeta":{"":{"namespace":"ns-{s}"}}}`,
			snake:  `{"workspace_id":{ws},"cluster_namespace_meta":{"":{"namespace":"ns-{s}"}}}`,
			status: 400, check: wantMessage("runs no Kubernetes pods"),
		},
		"a new project": {
			route: "POST /api/v1/workspaces/{id}/projects", path: "/api/v1/workspaces/{ws}/projects",
			camel: `{"name":"p-{s}","description":"made {s}","workspaceId":{ws}}`, snake: `{"name":"p-{s}","description":"made {s}","workspace_id":{ws}}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var p resolute.ProjectResponse
				if json.Unmarshal(answer, &p); p.Project.Name != "p-"+v["{s}"] || p.Project.Description != "made "+v["{s}"] {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"an edited project": {
			route: "PATCH /api/v1/projects/{id}", path: "/api/v1/projects/{proj2}",
			camel: `{"name":"q-{s}","description":"edited {s}"}`, snake: `{"name":"q-{s}","description":"edited {s}"}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if p, _ := m.DB.Project(ctx, fx.proj2); p.Description != "edited "+v["{s}"] {
					t.Errorf("project %+v", p)
				}
			},
		},
		"a new template, whose config keeps its keys": {
			route: "POST /api/v1/templates", path: "/api/v1/templates",
			camel: `{"name":"tpl-{s}","config":{"description":"t","resources":{"slots_per_trial":1},"hyperparameters":{"learningRate":0.1,"batch_size":32}},"workspaceId":{ws2}}`,
			snake: `{"name":"tpl-{s}","config":{"description":"t","resources":{"slots_per_trial":1},"hyperparameters":{"learningRate":0.1,"batch_size":32}},"workspace_id":{ws2}}`,
			check: checkTemplate("tpl-{s}", `"learningRate"`),
		},
		"a template put in place": {
			route: "PUT /api/v1/templates/{name}", path: "/api/v1/templates/put-{s}",
			camel: `{"config":{"hyperparameters":{"dropoutRate":0.5,"n_layers":2}},"workspaceId":{ws2}}`,
			snake: `{"config":{"hyperparameters":{"dropoutRate":0.5,"n_layers":2}},"workspace_id":{ws2}}`,
			check: checkTemplate("put-{s}", `"dropoutRate"`),
		},
		"a template's new config": {
			route: "PATCH /api/v1/templates/{name}", path: "/api/v1/templates/patch-{s}",
			camel: `{"config":{"hyperparameters":{"warmupSteps":10}},"workspaceId":{ws2}}`,
			snake: `{"config":{"hyperparameters":{"warmupSteps":10}},"workspace_id":{ws2}}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				fx.must(t, "POST", "/api/v1/templates", fmt.Sprintf(`{"name":"patch-%s","yaml":"description: x\n","workspaceId":%d}`, s, fx.ws2), nil)
				return nil
			},
			check: checkTemplate("patch-{s}", `"warmupSteps"`),
		},
		"a new experiment with its context, paused": {
			route: "POST /api/v1/experiments", path: "/api/v1/experiments",
			camel: `{"config":"name: e-{s}\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n","projectId":{proj},"activate":false,"validateOnly":false,"parentId":0,"contextTgz":"{tgz}"}`,
			snake: `{"config":"name: e-{s}\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n","project_id":{proj},"activate":false,"validate_only":false,"parent_id":0,"context_tgz":"{tgz}"}`,
			setup: withContext,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var e resolute.ExperimentResponse
				json.Unmarshal(answer, &e)
				if e.Experiment.ProjectID != fx.proj || e.Experiment.State != resolute.StatePaused {
					t.Errorf("answer %s", answer)
				}
				ctxDir, _ := io.ReadAll(m.DB.ExperimentContext(ctx, e.Experiment.ID))
				if names := tarNames(t, string(ctxDir)); !slices.Contains(names, "marker-"+v["{s}"]+".txt") {
					t.Errorf("context holds %v", names)
				}
			},
		},
		"an experiment's config checked only": {
			route: "POST /api/v1/experiments", path: "/api/v1/experiments",
			camel: `{"config":"name: only-{s}\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n","validateOnly":true}`,
			snake: `{"config":"name: only-{s}\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n","validate_only":true}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				if !strings.Contains(string(answer), `"config"`) || strings.Contains(string(answer), `"experiment"`) {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"an experiment's edit": {
			route: "PATCH /api/v1/experiments/{id}", path: "/api/v1/experiments/{e}",
			camel: `{"id":{e},"name":"edited-{s}","notes":"n","labels":["a_b"],"resources":{"maxSlots":{n},"weight":{n},"priority":1{n}}}`,
			snake: `{"id":{e},"name":"edited-{s}","notes":"n","labels":["a_b"],"resources":{"max_slots":{n},"weight":{n},"priority":1{n}}}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				return map[string]string{"{e}": fmt.Sprint(fx.experiment(t, "patch-"+s, fx.proj))}
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				e, _ := m.DB.Experiment(ctx, int64(atoi(v["{e}"])))
				if e.Name != "edited-"+v["{s}"] || e.MaxSlots == nil || *e.MaxSlots != atoi(v["{n}"]) || e.Weight != float64(atoi(v["{n}"])) ||
					e.Priority == nil || *e.Priority != 10+atoi(v["{n}"]) || fmt.Sprint(e.Labels) != "[a_b]" {
					t.Errorf("experiment %+v", e)
				}
			},
		},
		"an experiment's move": {
			route: "POST /api/v1/experiments/{id}/move", path: "/api/v1/experiments/{e}/move",
			camel: `{"destinationProjectId":{proj2},"experimentId":{e}}`, snake: `{"destination_project_id":{proj2},"experiment_id":{e}}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				return map[string]string{"{e}": fmt.Sprint(fx.experiment(t, "move-"+s, fx.proj))}
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if e, _ := m.DB.Experiment(ctx, int64(atoi(v["{e}"]))); e.ProjectID != fx.proj2 {
					t.Errorf("experiment in project %d", e.ProjectID)
				}
			},
		},
		"a change to the job queue": {
			route: "POST /api/v1/job-queues", path: "/api/v1/job-queues",
			camel: `{"updates":[{"jobId":"experiment-{e}","priority":3{n},"resourcePool":"default"}]}`,
			snake: `{"updates":[{"job_id":"experiment-{e}","priority":3{n},"resource_pool":"default"}]}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				return map[string]string{"{e}": fmt.Sprint(fx.experiment(t, "queue-"+s, fx.proj))}
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if e, _ := m.DB.Experiment(ctx, int64(atoi(v["{e}"]))); e.Priority == nil || *e.Priority != 30+atoi(v["{n}"]) {
					t.Errorf("experiment %+v", e)
				}
			},
		},
		"a command from a template, with its context": {
			route: "POST /api/v1/commands", path: "/api/v1/commands",
			camel: `{"config":"description: cmd {s}\n","templateName":"cmd-{s}","entrypoint":["true"],"projectId":{proj},"contextTgz":"{tgz}"}`,
			snake: `{"config":"description: cmd {s}\n","template_name":"cmd-{s}","entrypoint":["true"],"project_id":{proj},"context_tgz":"{tgz}"}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				fx.must(t, "POST", "/api/v1/templates", `{"name":"cmd-`+s+`","yaml":"environment:\n  environment_variables: [FROM_TEMPLATE=`+s+`]\n"}`, nil)
				return withContext(t, fx, s)
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var task resolute.TaskResponse
				json.Unmarshal(answer, &task)
				if task.Task.ProjectID != fx.proj || !strings.Contains(string(task.Task.Config), "FROM_TEMPLATE="+v["{s}"]) {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"a TensorBoard of an experiment": {
			route: "POST /api/v1/tensorboards", path: "/api/v1/tensorboards",
			camel: `{"experimentIds":[{exp}],"trialIds":[]}`, snake: `{"experiment_ids":[{exp}],"trial_ids":[]}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var task resolute.TaskResponse
				if json.Unmarshal(answer, &task); task.Task.Type != resolute.TaskTensorBoard {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"a task's priority": {
			route: "POST /api/v1/{kind}/{id}/set_priority", path: "/api/v1/commands/{task}/set_priority",
			camel: `{"commandId":"{task}","priority":4{n}}`, snake: `{"command_id":"{task}","priority":4{n}}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				id, err := m.DB.CreateTask(ctx, db.NewTask{Type: resolute.TaskCommand, Config: []byte("{}"), UserID: 1, ProjectID: fx.proj, ResourcePool: "default"})
				if err != nil {
					t.Fatal(err)
				}
				return map[string]string{"{task}": id}
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if task, _ := m.DB.Task(ctx, v["{task}"]); task.Priority == nil || *task.Priority != 40+atoi(v["{n}"]) {
					t.Errorf("task %+v", task)
				}
			},
		},
		"a new model, whose metadata keeps its keys": {
			route: "POST /api/v1/models", path: "/api/v1/models",
			camel: `{"name":"model-{s}","description":"d","metadata":{"a_b":1,"cD":{"e_f":2}},"labels":["x_y"],"notes":"n","workspaceId":{ws2}}`,
			snake: `{"name":"model-{s}","description":"d","metadata":{"a_b":1,"cD":{"e_f":2}},"labels":["x_y"],"notes":"n","workspace_id":{ws2}}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				md, err := m.DB.Model(ctx, "model-"+v["{s}"])
				if err != nil || md.WorkspaceID != fx.ws2 || !jsonEqual(md.Metadata, `{"a_b":1,"cD":{"e_f":2}}`) || fmt.Sprint(md.Labels) != "[x_y]" {
					t.Errorf("model %+v (%v)", md, err)
				}
			},
		},
		"an edited model": {
			route: "PATCH /api/v1/models/{name}", path: "/api/v1/models/edit-{s}",
			camel: `{"description":"new {s}","metadata":{"g_h":{n}}}`, snake: `{"description":"new {s}","metadata":{"g_h":{n}}}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				fx.must(t, "POST", "/api/v1/models", `{"name":"edit-`+s+`"}`, nil)
				return nil
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if md, _ := m.DB.Model(ctx, "edit-"+v["{s}"]); md.Description != "new "+v["{s}"] || !jsonEqual(md.Metadata, `{"g_h":`+v["{n}"]+`}`) {
					t.Errorf("model %+v", md)
				}
			},
		},
		"a model's move": {
			route: "POST /api/v1/models/{name}/move", path: "/api/v1/models/move-{s}/move",
			camel: `{"destinationWorkspaceId":{ws2},"modelName":"move-{s}"}`, snake: `{"destination_workspace_id":{ws2},"model_name":"move-{s}"}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				fx.must(t, "POST", "/api/v1/models", fmt.Sprintf(`{"name":"move-%s","workspaceId":%d}`, s, fx.ws), nil)
				return nil
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if md, _ := m.DB.Model(ctx, "move-"+v["{s}"]); md.WorkspaceID != fx.ws2 {
					t.Errorf("model %+v", md)
				}
			},
		},
		"a registered version": {
			route: "POST /api/v1/models/{name}/versions", path: "/api/v1/models/reg-{s}/versions",
			camel: `{"modelName":"reg-{s}","checkpointUuid":"{ckpt}","name":"v-{s}","comment":"c","metadata":{"a_b":1},"labels":["l"],"notes":"n"}`,
			snake: `{"model_name":"reg-{s}","checkpoint_uuid":"{ckpt}","name":"v-{s}","comment":"c","metadata":{"a_b":1},"labels":["l"],"notes":"n"}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				fx.must(t, "POST", "/api/v1/models", `{"name":"reg-`+s+`"}`, nil)
				return nil
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var mv resolute.ModelVersionResponse
				json.Unmarshal(answer, &mv)
				if mv.ModelVersion.CheckpointUUID != fx.checkpoint || mv.ModelVersion.Name != "v-"+v["{s}"] || !jsonEqual(mv.ModelVersion.Metadata, `{"a_b":1}`) {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"an edited version": {
			route: "PATCH /api/v1/models/{name}/versions/{num}", path: "/api/v1/models/ver-{s}/versions/1",
			camel: `{"name":"w-{s}","comment":"c {s}","metadata":{"x_y":{n}}}`, snake: `{"name":"w-{s}","comment":"c {s}","metadata":{"x_y":{n}}}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				fx.modelWithVersion(t, "ver-"+s)
				return nil
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var mv resolute.ModelVersionResponse
				if json.Unmarshal(answer, &mv); mv.ModelVersion.Name != "w-"+v["{s}"] || !jsonEqual(mv.ModelVersion.Metadata, `{"x_y":`+v["{n}"]+`}`) {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"an alias": {
			route: "PUT /api/v1/models/{name}/aliases/{alias}", path: "/api/v1/models/alias-{s}/aliases/production",
			camel: `{"version":1}`, snake: `{"version":1}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				fx.modelWithVersion(t, "alias-"+s)
				return nil
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				if !strings.Contains(string(answer), `"aliases":["production"]`) {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"a new webhook, whose regex is user data": {
			route: "POST /api/v1/webhooks", path: "/api/v1/webhooks",
			camel: `{"name":"hook-{s}","url":"http://127.0.0.1:9/{s}","webhookType":"WEBHOOK_TYPE_SLACK","workspaceId":0,"mode":"WEBHOOK_MODE_WORKSPACE",` +
				`"triggers":[{"triggerType":"TRIGGER_TYPE_TASK_LOG","condition":{"regex":"trialId={n}"}}]}`,
			snake: `{"name":"hook-{s}","url":"http://127.0.0.1:9/{s}","webhook_type":"WEBHOOK_TYPE_SLACK","workspace_id":0,"mode":"WEBHOOK_MODE_WORKSPACE",` +
				`"triggers":[{"trigger_type":"TRIGGER_TYPE_TASK_LOG","condition":{"regex":"trialId={n}"}}]}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				hooks, _ := m.DB.Webhooks(ctx)
				for _, h := range hooks {
					if h.Name == "hook-"+v["{s}"] {
						if h.WebhookType != resolute.WebhookTypeSlack || len(h.Triggers) != 1 || h.Triggers[0].Regex() != "trialId="+v["{n}"] {
							t.Errorf("webhook %+v", h)
						}
						return
					}
				}
				t.Errorf("no webhook hook-%s in %+v", v["{s}"], hooks)
			},
		},
		"an experiment's log retention": {
			route: "PUT /api/v1/experiments/{id}/retain_logs", path: "/api/v1/experiments/{exp}/retain_logs",
			camel: `{"numDays":{n}}`, snake: `{"num_days":{n}}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
				if d, err := m.DB.ExperimentLogRetention(ctx, fx.exp); err != nil || d == nil || fmt.Sprint(*d) != v["{n}"] {
					t.Errorf("retention %v (%v), want %s days", d, err, v["{n}"])
				}
			},
		},
	}
	for name, tc := range rbacSpellings() {
		tests[name] = tc
	}
	tested := map[string]bool{}
	for name, tc := range tests {
		tested[tc.route] = true
		for i, s := range []string{"camel", "snake"} {
			t.Run(name+"/"+s, func(t *testing.T) {
				v := map[string]string{"{s}": s, "{n}": fmt.Sprint(i + 1), "{step}": fmt.Sprint(100 * (i + 1)),
					"{trial}": fmt.Sprint(fx.trial), "{run}": fmt.Sprint(fx.runID), "{exp}": fmt.Sprint(fx.exp), "{alloc}": fx.alloc,
					"{ckpt}": fx.checkpoint, "{ws}": fmt.Sprint(fx.ws), "{ws2}": fmt.Sprint(fx.ws2),
					"{proj}": fmt.Sprint(fx.proj), "{proj2}": fmt.Sprint(fx.proj2)}
				if tc.setup != nil {
					for k, x := range tc.setup(t, fx, s) {
						v[k] = x
					}
				}
				token := fx.admin
				if tc.task {
					token = fx.taskToken
				}
				if v["{token}"] != "" {
					token = v["{token}"]
				}
				body := map[string]string{"camel": tc.camel, "snake": tc.snake}[s]
				status, answer := sendAs(t, m, tc.method(), fill(tc.path, v), token, tc.task, fill(body, v))
				if want := max(tc.status, 200); status != want {
					t.Fatalf("status %d, want %d: %s", status, want, answer)
				}
				tc.check(t, fx, v, answer)
			})
		}
	}
	// Routes whose bodies have no field of two words, or no body.
	bodiless := map[string]string{
		"POST /api/v1/auth/logout":                        "no body",
		"POST /api/v1/experiments/{id}/activate":          "no body",
		"POST /api/v1/experiments/{id}/pause":             "no body",
		"POST /api/v1/experiments/{id}/cancel":            "no body",
		"POST /api/v1/experiments/{id}/kill":              "no body",
		"POST /api/v1/experiments/{id}/archive":           "no body",
		"POST /api/v1/experiments/{id}/unarchive":         "no body",
		"POST /api/v1/workspaces/{id}/archive":            "no body",
		"POST /api/v1/workspaces/{id}/unarchive":          "no body",
		"POST /api/v1/projects/{id}/archive":              "no body",
		"POST /api/v1/projects/{id}/unarchive":            "no body",
		"POST /api/v1/models/{name}/archive":              "no body",
		"POST /api/v1/models/{name}/unarchive":            "no body",
		"POST /api/v1/trials/{id}/kill":                   "no body",
		"POST /api/v1/{kind}/{id}/kill":                   "no body",
		"POST /api/v1/tasks/{id}/open":                    "its body is {path}, one word, and needs a running service",
		"POST /api/v1/preview-hp-search":                  "reads config, template and overrides, one word each (the experiments' body)",
		"POST /api/v1/notebooks":                          "the commands' and TensorBoards' body, CreateTaskRequest",
		"POST /api/v1/shells":                             "the commands' and TensorBoards' body, CreateTaskRequest",
		"POST /api/v1/roles/search":                       "its body is {offset, limit}, one word each",
		"POST /api/v1/agents/{id}/enable":                 "no body",
		"POST /api/v1/agents/{id}/disable":                "its body is {drain}, one word",
		"POST /api/v1/agents/{id}/slots/{slotId}/enable":  "no body",
		"POST /api/v1/agents/{id}/slots/{slotId}/disable": "its body is {drain}, one word",
		"PATCH /api/v1/webhooks/{id}":                     "its body is {url}, one word",
		"POST /api/v1/webhooks/{id}/test":                 "no body",
		"POST /api/v1/cleanup_logs":                       "no body",
	}
	for _, route := range mutatingRoutes(t) {
		if !strings.Contains(route, " /api/v1/") || strings.HasPrefix(route, "DELETE ") {
			continue
		}
		generic := route
		for _, kind := range []string{"commands", "notebooks", "shells", "tensorboards"} {
			generic = strings.Replace(generic, "/api/v1/"+kind+"/{id}/", "/api/v1/{kind}/{id}/", 1)
		}
		if !tested[route] && !tested[generic] && bodiless[route] == "" && bodiless[generic] == "" {
			t.Errorf("%s: no request of it here, nor a reason why not", route)
		}
	}
}
