package control_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/expconf"
)

// teams is a master with three pools (default, team-gpu, cpu), alice's
// workspace "vision" with a project, bob's "speech" with one, and the
// runner and services over them; log holds the master's log.
type teams struct {
	t                 *testing.T
	ctx               context.Context
	db                *db.DB
	rm                *fakeRM
	run               *control.Runner
	svc               *control.Services
	admin, alice, bob authz.Actor
	vision, speech    resolute.Workspace
	visionP, speechP  int64
	log               *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTeams(t *testing.T, namespaces bool) *teams {
	t.Helper()
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	root, err := d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	defaults, _ := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": t.TempDir()}, nil)
	log := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	rm := &fakeRM{total: 4, held: map[string][]int{}}
	var pools []control.Pool
	for _, name := range []string{"default", "team-gpu", "cpu"} {
		pools = append(pools, control.Pool{Name: name})
	}
	run := control.NewRunner(d, control.NewConfigs(d, defaults), rm, control.RunOptions{MasterURL: "http://m", ClusterID: "c",
		WorkRoot: t.TempDir(), Pools: pools, ComputePool: "default", AuxPool: "cpu", Namespaces: namespaces}, logger)
	tm := &teams{t: t, ctx: ctx, db: d, rm: rm, run: run, svc: control.NewServices(d, run, nil, logger), admin: authz.User(root.User), log: log}
	user := func(name string) authz.Actor {
		u, err := d.CreateUser(ctx, name, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		return authz.User(u)
	}
	tm.alice, tm.bob = user("alice"), user("bob")
	tm.vision, tm.visionP = tm.workspace(tm.alice, "vision")
	tm.speech, tm.speechP = tm.workspace(tm.bob, "speech")
	return tm
}

// workspace makes a's workspace called name with one project.
func (tm *teams) workspace(a authz.Actor, name string) (resolute.Workspace, int64) {
	tm.t.Helper()
	w, err := tm.svc.Workspaces.Create(tm.ctx, a, name)
	if err != nil {
		tm.t.Fatal(err)
	}
	p, err := tm.svc.Projects.Create(tm.ctx, a, w.ID, "main", "")
	if err != nil {
		tm.t.Fatal(err)
	}
	return w, p.ID
}

func (tm *teams) set(a authz.Actor, w resolute.Workspace, p control.SettingsPatch) (resolute.Workspace, error) {
	return tm.svc.WorkspaceSettings.Set(tm.ctx, a, w.ID, p)
}

func TestWhoMayChangeWhichWorkspaceSetting(t *testing.T) {
	tm := newTeams(t, false)
	group := &resolute.AgentUserGroup{UID: 3000, GID: 3000, User: "vision", Group: "vision"}
	tests := map[string]struct {
		who   func() authz.Actor
		patch control.SettingsPatch
		code  string // "" succeeds
	}{
		"the owner sets the default pools":  {func() authz.Actor { return tm.alice }, control.SettingsPatch{DefaultComputePool: ptr("team-gpu"), DefaultAuxPool: ptr("cpu")}, ""},
		"the owner sets checkpoint storage": {func() authz.Actor { return tm.alice }, control.SettingsPatch{CheckpointStorage: &map[string]any{"type": "shared_fs", "host_path": "/mnt/vision"}}, ""},
		"another user may not set pools":    {func() authz.Actor { return tm.bob }, control.SettingsPatch{DefaultComputePool: ptr("team-gpu")}, resolute.EForbidden},
		"another user may not set storage":  {func() authz.Actor { return tm.bob }, control.SettingsPatch{CheckpointStorage: &map[string]any{"type": "shared_fs", "host_path": "/tmp"}}, resolute.EForbidden},
		"the owner may not pick a Unix user": {func() authz.Actor { return tm.alice },
			control.SettingsPatch{AgentUserGroup: &resolute.AgentUserGroup{UID: 1001, GID: 1001, User: "alice", Group: "alice"}}, resolute.EForbidden},
		"an administrator picks the Unix user": {func() authz.Actor { return tm.admin }, control.SettingsPatch{AgentUserGroup: group}, ""},
		"not even an administrator picks root": {func() authz.Actor { return tm.admin }, control.SettingsPatch{AgentUserGroup: &resolute.AgentUserGroup{UID: 0, GID: 3000, User: "root", Group: "x"}}, resolute.EInvalid},
		"nor a system account": {func() authz.Actor { return tm.admin },
			control.SettingsPatch{AgentUserGroup: &resolute.AgentUserGroup{UID: 3000, GID: 106, User: "x", Group: "postgres"}}, resolute.EInvalid},
		"nor the ids of unlinked users' tasks": {func() authz.Actor { return tm.admin },
			control.SettingsPatch{AgentUserGroup: &resolute.AgentUserGroup{UID: 2000000005, GID: 3000, User: "x", Group: "x"}}, resolute.EInvalid},
		"a pool that does not exist":            {func() authz.Actor { return tm.alice }, control.SettingsPatch{DefaultComputePool: ptr("nope")}, resolute.EInvalid},
		"storage that experiments would refuse": {func() authz.Actor { return tm.alice }, control.SettingsPatch{CheckpointStorage: &map[string]any{"type": "shared_fs"}}, resolute.EInvalid},
		"a namespace on the local resource manager is refused, not ignored": {func() authz.Actor { return tm.admin },
			control.SettingsPatch{Namespace: ptr("team-a")}, resolute.EInvalid},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := tm.set(tc.who(), tm.vision, tc.patch)
			if got := code(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
		})
	}
	w, err := tm.db.Workspace(tm.ctx, tm.vision.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := resolute.WorkspaceSettingsView{DefaultComputePool: "team-gpu", DefaultAuxPool: "cpu",
		CheckpointStorageConfig: map[string]any{"type": "shared_fs", "host_path": "/mnt/vision"}, AgentUserGroup: group}
	if diff := cmp.Diff(want, w.WorkspaceSettingsView); diff != "" {
		t.Errorf("settings after the table (-want +got):\n%s", diff)
	}
	// The changes are in the master's log with who made them.
	for _, line := range []string{`msg="workspace settings changed" workspace=vision`, "by=alice", "by=admin", "agent_uid=3000"} {
		if !strings.Contains(tm.log.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, tm.log.String())
		}
	}
}

func TestAWorkspacesStorageSecretsStayHidden(t *testing.T) {
	tm := newTeams(t, false)
	s3 := map[string]any{"type": "s3", "bucket": "vision", "access_key": "AKIA", "secret_key": "s3cret"}
	w, err := tm.set(tm.alice, tm.vision, control.SettingsPatch{CheckpointStorage: &s3})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.CheckpointStorageConfig["secret_key"]; got != resolute.Masked {
		t.Errorf("the workspace shows secret_key %v, want it masked", got)
	}
	// Sent back as shown, with another bucket: the secret is kept.
	shown := w.CheckpointStorageConfig
	shown["bucket"] = "vision-2"
	if _, err := tm.set(tm.alice, tm.vision, control.SettingsPatch{CheckpointStorage: &shown}); err != nil {
		t.Fatal(err)
	}
	raw, err := tm.db.WorkspaceSettings(tm.ctx, tm.vision.ID)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CheckpointStorage["secret_key"] != "s3cret" || raw.CheckpointStorage["bucket"] != "vision-2" {
		t.Errorf("stored %v, want the secret kept and the bucket changed", raw.CheckpointStorage)
	}
	// The mask with storage of another type is not a secret.
	other := map[string]any{"type": "azure", "container": "c", "connection_string": resolute.Masked}
	if _, err := tm.set(tm.alice, tm.vision, control.SettingsPatch{CheckpointStorage: &other}); code(err) != resolute.EInvalid {
		t.Errorf("the mask as another storage's secret: %v, want invalid", err)
	}
	// {} clears it.
	w, err = tm.set(tm.alice, tm.vision, control.SettingsPatch{CheckpointStorage: &map[string]any{}})
	if err != nil || w.CheckpointStorageConfig != nil {
		t.Errorf("after {}: %v, %v; want no storage", w.CheckpointStorageConfig, err)
	}
}

func TestABoundPoolIsOnlyItsWorkspaces(t *testing.T) {
	tm := newTeams(t, false)
	ws := tm.svc.WorkspaceSettings
	if err := ws.BindPool(tm.ctx, tm.alice, "team-gpu", []int64{tm.vision.ID}); code(err) != resolute.EForbidden {
		t.Fatalf("alice binds: %v, want forbidden (administrators bind)", err)
	}
	for _, pool := range []string{"default", "cpu"} {
		if err := ws.BindPool(tm.ctx, tm.admin, pool, []int64{tm.vision.ID}); code(err) != resolute.EInvalid {
			t.Errorf("binding the master's default pool %s: %v, want invalid", pool, err)
		}
	}
	if err := ws.BindPool(tm.ctx, tm.admin, "nope", []int64{tm.vision.ID}); code(err) != resolute.ENotFound {
		t.Errorf("binding a pool that does not exist: %v, want not found", err)
	}
	if err := ws.BindPool(tm.ctx, tm.admin, "team-gpu", []int64{tm.vision.ID}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tm.log.String(), `msg="resource pool bound" pool=team-gpu workspaces=vision by=admin`) {
		t.Errorf("the log lacks the binding:\n%s", tm.log.String())
	}
	cfg := single + "resources: {resource_pool: team-gpu}\n"
	_, err := tm.run.Experiments.Create(tm.ctx, tm.bob, control.CreateRequest{ConfigYAML: cfg, ProjectID: tm.speechP})
	if code(err) != resolute.EForbidden || !strings.Contains(resolute.ErrorMessage(err), `resource pool "team-gpu" is bound to workspace(s) vision; workspace "speech" cannot use it`) {
		t.Fatalf("bob's experiment in speech: %v, want refused naming the pool and workspaces", err)
	}
	// Not even alice may use it from another workspace; she may from hers.
	if _, err := tm.run.Experiments.Create(tm.ctx, tm.alice, control.CreateRequest{ConfigYAML: cfg, ProjectID: tm.speechP}); code(err) != resolute.EForbidden {
		t.Errorf("alice's experiment in speech: %v, want forbidden", err)
	}
	e, err := tm.run.Experiments.Create(tm.ctx, tm.bob, control.CreateRequest{ConfigYAML: cfg, ProjectID: tm.visionP})
	if err != nil || e.ResourcePool != "team-gpu" {
		t.Fatalf("an experiment in vision: %v, pool %q", err, e.ResourcePool)
	}
	// Nor may it move to speech while it may still run there.
	if err := tm.run.Experiments.Move(tm.ctx, tm.bob, e.ID, tm.speechP); code(err) != resolute.EForbidden {
		t.Errorf("moving vision's team experiment to speech: %v, want forbidden", err)
	}
	// Tasks too: by config, and by the workspace's default.
	_, err = tm.run.Tasks.Create(tm.ctx, tm.bob, control.TaskRequest{Type: resolute.TaskCommand, ConfigYAML: "resources: {resource_pool: team-gpu}\n",
		Entrypoint: []string{"true"}, ProjectID: tm.speechP})
	if code(err) != resolute.EForbidden {
		t.Errorf("bob's command in speech: %v, want forbidden", err)
	}
	// A queued experiment of speech cannot move to the pool.
	mine, err := tm.run.Experiments.Create(tm.ctx, tm.bob, control.CreateRequest{ConfigYAML: single, ProjectID: tm.speechP, Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	err = tm.run.Queue.Update(tm.ctx, tm.bob, []resolute.QueueControl{{JobID: control.JobID(mine.ID), ResourcePool: ptr("team-gpu")}})
	if code(err) != resolute.EForbidden || !strings.Contains(resolute.ErrorMessage(err), "resourcePool: resource pool \"team-gpu\" is bound") {
		t.Errorf("moving speech's job to team-gpu: %v, want forbidden", err)
	}
	// What each workspace may use, and who the pool is bound to.
	avail, _ := ws.AvailablePools(tm.ctx, tm.admin, tm.speech.ID)
	if diff := cmp.Diff([]string{"default", "cpu"}, avail); diff != "" {
		t.Errorf("speech's pools (-want +got):\n%s", diff)
	}
	avail, _ = ws.AvailablePools(tm.ctx, tm.admin, tm.vision.ID)
	if diff := cmp.Diff([]string{"default", "team-gpu", "cpu"}, avail); diff != "" {
		t.Errorf("vision's pools (-want +got):\n%s", diff)
	}
	// Bound to speech as well (replace), then to nobody (unbind both).
	if err := ws.ReplacePoolBindings(tm.ctx, tm.admin, "team-gpu", []int64{tm.vision.ID, tm.speech.ID}); err != nil {
		t.Fatal(err)
	}
	b, _ := ws.PoolBindings(tm.ctx, tm.admin, "team-gpu")
	if len(b) != 2 {
		t.Errorf("bindings after replace: %v", b)
	}
	if err := tm.run.Queue.Update(tm.ctx, tm.bob, []resolute.QueueControl{{JobID: control.JobID(mine.ID), ResourcePool: ptr("team-gpu")}}); err != nil {
		t.Errorf("moving speech's job once team-gpu is bound to speech too: %v", err)
	}
	if err := ws.UnbindPool(tm.ctx, tm.admin, "team-gpu", []int64{tm.vision.ID, tm.speech.ID}); err != nil {
		t.Fatal(err)
	}
	if err := ws.UnbindPool(tm.ctx, tm.admin, "team-gpu", []int64{tm.vision.ID}); code(err) != resolute.ENotFound {
		t.Errorf("unbinding what is not bound: %v, want not found", err)
	}
	other, _ := tm.workspace(tm.admin, "other")
	_ = other
	if _, err := tm.run.Experiments.Create(tm.ctx, tm.bob, control.CreateRequest{ConfigYAML: cfg, ProjectID: tm.speechP}); err != nil {
		t.Errorf("after unbinding, the pool is everyone's again: %v", err)
	}
}

func TestAWorkspacesDefaultsReachItsWork(t *testing.T) {
	tm := newTeams(t, true)
	storage := map[string]any{"type": "shared_fs", "host_path": "/mnt/vision", "save_trial_best": 2}
	group := &resolute.AgentUserGroup{UID: 3000, GID: 3001, User: "vision", Group: "vision-team"}
	if _, err := tm.set(tm.alice, tm.vision, control.SettingsPatch{DefaultComputePool: ptr("team-gpu"), DefaultAuxPool: ptr("default"),
		CheckpointStorage: &storage}); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.set(tm.admin, tm.vision, control.SettingsPatch{AgentUserGroup: group, Namespace: ptr("team-vision")}); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.set(tm.admin, tm.vision, control.SettingsPatch{Namespace: ptr("Team_Vision")}); code(err) != resolute.EInvalid {
		t.Errorf("a namespace Kubernetes refuses: %v, want invalid", err)
	}
	// An experiment naming no pool and no storage gets the workspace's.
	e, err := tm.run.Experiments.Create(tm.ctx, tm.bob, control.CreateRequest{ConfigYAML: single, ProjectID: tm.visionP})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	if e.ResourcePool != "team-gpu" || cfg.CheckpointStorage.Map()["host_path"] != "/mnt/vision" || cfg.CheckpointStorage.SaveTrialBest != 2 {
		t.Errorf("experiment in vision: pool %q, storage %+v; want team-gpu and /mnt/vision", e.ResourcePool, cfg.CheckpointStorage)
	}
	// So does one placed by its config's workspace and project names.
	byName, err := tm.run.Experiments.Create(tm.ctx, tm.bob, control.CreateRequest{ConfigYAML: single + "workspace: vision\nproject: main\n"})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := expconf.ParseExperiment(byName.Config); byName.ResourcePool != "team-gpu" || c.CheckpointStorage.Map()["host_path"] != "/mnt/vision" {
		t.Errorf("placed by name: pool %q, storage %+v", byName.ResourcePool, c.CheckpointStorage)
	}
	// One in speech gets the master's.
	o, err := tm.run.Experiments.Create(tm.ctx, tm.bob, control.CreateRequest{ConfigYAML: single, ProjectID: tm.speechP})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := expconf.ParseExperiment(o.Config); o.ResourcePool != "default" || c.CheckpointStorage.Map()["host_path"] == "/mnt/vision" {
		t.Errorf("experiment in speech: pool %q, storage %+v; want the master's", o.ResourcePool, c.CheckpointStorage)
	}
	// A zero-slot task goes to the workspace's aux pool.
	task, err := tm.run.Tasks.Create(tm.ctx, tm.bob, control.TaskRequest{Type: resolute.TaskCommand, ConfigYAML: "resources: {slots: 0}\n",
		Entrypoint: []string{"true"}, ProjectID: tm.visionP})
	if err != nil || task.ResourcePool != "default" {
		t.Fatalf("a zero-slot command in vision: %v, pool %q; want default (the workspace's aux)", err, task.ResourcePool)
	}
	// Launched, bob's trial and task run as the workspace's Unix user, in
	// its namespace.
	if err := control.Cycle(tm.run.Admission, tm.ctx); err != nil {
		t.Fatal(err)
	}
	tm.rm.mu.Lock()
	launched := append([]resolute.LaunchSpec(nil), tm.rm.launched...)
	tm.rm.mu.Unlock()
	seen := map[string]bool{}
	for _, s := range launched {
		in := s.TaskID == task.ID || strings.HasPrefix(s.TaskID, "trial-") && s.Pool == "team-gpu"
		if !in {
			if s.RunAs.UID == 3000 || s.Namespace != "" {
				t.Errorf("%s outside vision runs as %+v in namespace %q", s.TaskID, s.RunAs, s.Namespace)
			}
			continue
		}
		seen[s.TaskType] = true
		want := resolute.TaskUser{UID: 3000, GID: 3001, User: "vision", Group: "vision-team", Linked: true}
		if diff := cmp.Diff(want, s.RunAs); diff != "" || s.Namespace != "team-vision" {
			t.Errorf("%s runs as (-want +got):\n%s namespace %q", s.TaskID, diff, s.Namespace)
		}
	}
	if !seen["TRIAL"] || !seen[resolute.TaskCommand] {
		t.Errorf("launched %d specs, saw %v; want vision's trial and command", len(launched), seen)
	}
}
