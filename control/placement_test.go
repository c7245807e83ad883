package control_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/expconf"
)

func TestWhichPoolWorkGoesTo(t *testing.T) {
	ws := resolute.WorkspaceSettings{DefaultComputePool: "team-gpu", DefaultAuxPool: "team-cpu"}
	tests := map[string]struct {
		asked string
		aux   bool
		ws    resolute.WorkspaceSettings
		want  string
	}{
		"the pool the config asks for wins over the workspace's":    {"big", false, ws, "big"},
		"a zero-slot task's asked pool wins too":                    {"big", true, ws, "big"},
		"work with slots goes to the workspace's compute pool":      {"", false, ws, "team-gpu"},
		"a zero-slot task goes to the workspace's aux pool":         {"", true, ws, "team-cpu"},
		"without workspace settings, to the master's compute pool":  {"", false, resolute.WorkspaceSettings{}, "default"},
		"without workspace settings, zero-slot to the master's aux": {"", true, resolute.WorkspaceSettings{}, "aux"},
		"a workspace with only an aux default sends compute to the master's": {"", false,
			resolute.WorkspaceSettings{DefaultAuxPool: "team-cpu"}, "default"},
		"a workspace with only a compute default sends zero-slot work to the master's aux": {"", true,
			resolute.WorkspaceSettings{DefaultComputePool: "team-gpu"}, "aux"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := control.RoutePool(tc.asked, tc.aux, tc.ws, "default", "aux"); got != tc.want {
				t.Errorf("RoutePool = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWhoMayUseABoundPool(t *testing.T) {
	bindings := []resolute.PoolBinding{
		{PoolName: "team-gpu", WorkspaceID: 2, WorkspaceName: "vision"},
		{PoolName: "team-gpu", WorkspaceID: 3, WorkspaceName: "speech"},
		{PoolName: "solo", WorkspaceID: 3, WorkspaceName: "speech"},
	}
	tests := map[string]struct {
		pool string
		ws   resolute.Workspace
		ok   bool
	}{
		"a pool bound to nobody is everyone's":               {"default", resolute.Workspace{ID: 9, Name: "other"}, true},
		"a pool bound to the workspace is its":               {"team-gpu", resolute.Workspace{ID: 2, Name: "vision"}, true},
		"a pool bound to two workspaces is the second's too": {"team-gpu", resolute.Workspace{ID: 3, Name: "speech"}, true},
		"a pool bound to others is refused":                  {"team-gpu", resolute.Workspace{ID: 9, Name: "other"}, false},
		"a pool bound to one other workspace is refused":     {"solo", resolute.Workspace{ID: 2, Name: "vision"}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := control.CheckPoolUse(tc.pool, tc.ws, bindings)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckPoolUse = %v, want ok %v", err, tc.ok)
			}
			if err != nil && resolute.ErrorCode(err) != resolute.EForbidden {
				t.Errorf("code %q, want forbidden", resolute.ErrorCode(err))
			}
		})
	}
	err := control.CheckPoolUse("team-gpu", resolute.Workspace{ID: 9, Name: "other"}, bindings)
	want := `resource pool "team-gpu" is bound to workspace(s) vision, speech; workspace "other" cannot use it`
	if msg := resolute.ErrorMessage(err); len(msg) < len(want) || msg[:len(want)] != want {
		t.Errorf("message %q, want it to start %q", msg, want)
	}
	got := control.AvailablePools([]string{"default", "team-gpu", "solo", "aux"}, 2, bindings)
	if diff := cmp.Diff([]string{"default", "team-gpu", "aux"}, got); diff != "" {
		t.Errorf("AvailablePools (-want +got):\n%s", diff)
	}
}

func TestWhichUnixUserAWorkspacesTaskRunsAs(t *testing.T) {
	const base = 2000000000
	linked := resolute.User{ID: 7, Username: "alice", AgentUserGroup: &resolute.AgentUserGroup{UID: 1001, GID: 1001, User: "alice", Group: "alice"}}
	plain := resolute.User{ID: 8, Username: "bob"}
	team := resolute.WorkspaceSettings{AgentUserGroup: &resolute.AgentUserGroup{UID: 3000, GID: 3001, User: "vision", Group: "vision-team"}}
	tests := map[string]struct {
		ws   resolute.WorkspaceSettings
		u    resolute.User
		want resolute.TaskUser
	}{
		"the workspace's agent user wins over the owner's link": {team, linked,
			resolute.TaskUser{UID: 3000, GID: 3001, User: "vision", Group: "vision-team", Linked: true}},
		"the workspace's agent user wins over the default ids": {team, plain,
			resolute.TaskUser{UID: 3000, GID: 3001, User: "vision", Group: "vision-team", Linked: true}},
		"without one, the owner's link": {resolute.WorkspaceSettings{}, linked,
			resolute.TaskUser{UID: 1001, GID: 1001, User: "alice", Group: "alice", Linked: true}},
		"without either, the owner's default ids": {resolute.WorkspaceSettings{}, plain,
			resolute.TaskUser{UID: base + 8, GID: base + 8, User: "bob", Group: "bob"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := control.TaskUserIn(base, tc.ws, tc.u)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TaskUserIn (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWhichCheckpointStorageAnExperimentGets(t *testing.T) {
	master := []byte("checkpoint_storage: {type: shared_fs, host_path: /mnt/master}\n")
	team := control.StorageLayer(resolute.WorkspaceSettings{CheckpointStorage: map[string]any{
		"type": "s3", "bucket": "team", "access_key": "AK", "secret_key": "SK", "save_trial_latest": 3}})
	base := "name: x\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\nhyperparameters: {}\n"
	tests := map[string]struct {
		layers [][]byte
		user   string
		want   map[string]any // of the expanded checkpoint_storage
	}{
		"without workspace storage, the master's": {[][]byte{master}, base,
			map[string]any{"type": "shared_fs", "host_path": "/mnt/master"}},
		"the workspace's storage replaces the master's": {[][]byte{master, team}, base,
			map[string]any{"type": "s3", "bucket": "team", "save_trial_latest": 3}},
		"a config of another type replaces the workspace's whole": {[][]byte{master, team},
			base + "checkpoint_storage: {type: shared_fs, host_path: /mnt/mine}\n",
			map[string]any{"type": "shared_fs", "host_path": "/mnt/mine", "save_trial_latest": 1}},
		"a config of the same type overrides it key by key": {[][]byte{master, team},
			base + "checkpoint_storage: {type: s3, bucket: mine}\n",
			map[string]any{"type": "s3", "bucket": "mine", "save_trial_latest": 3}},
		"a template's storage wins over the workspace's": {[][]byte{master, team,
			[]byte("checkpoint_storage: {type: shared_fs, host_path: /mnt/template}\n")}, base,
			map[string]any{"type": "shared_fs", "host_path": "/mnt/template"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := expconf.ParseExperimentLayers(append(tc.layers, []byte(tc.user)), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.CheckpointStorage.Map()
			for k, v := range tc.want {
				if g := got[k]; cmp.Diff(v, g) != "" && !(isNum(v) && isNum(g) && num(v) == num(g)) {
					t.Errorf("checkpoint_storage.%s = %v, want %v (all: %v)", k, g, v, got)
				}
			}
			if tc.want["type"] == "shared_fs" && got["bucket"] != nil {
				t.Errorf("storage of another type kept the workspace's bucket: %v", got)
			}
		})
	}
	if control.StorageLayer(resolute.WorkspaceSettings{}) != nil {
		t.Error("a workspace without storage adds a layer")
	}
}

func isNum(v any) bool {
	switch v.(type) {
	case int, int64, float64:
		return true
	}
	return false
}

func num(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

func TestWhatAWorkspaceRequestChanges(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := map[string]struct {
		req     resolute.WorkspaceRequest
		compute *string
		ns      *string
		err     string
	}{
		"Determined's POST names":                {resolute.WorkspaceRequest{DefaultComputePool: s("a")}, s("a"), nil, ""},
		"Determined's PATCH names mean the same": {resolute.WorkspaceRequest{DefaultComputeResourcePool: s("b")}, s("b"), nil, ""},
		"a namespace in clusterNamespaceMeta": {resolute.WorkspaceRequest{ClusterNamespaceMeta: map[string]resolute.WorkspaceNamespaceMeta{
			"": {Namespace: "team-a"}}}, nil, s("team-a"), ""},
		"namespaces made on demand are refused, not ignored": {resolute.WorkspaceRequest{ClusterNamespaceMeta: map[string]resolute.WorkspaceNamespaceMeta{
			"": {AutoCreateNamespace: true}}}, nil, nil, "not supported"},
		"a resource quota is refused": {resolute.WorkspaceRequest{ClusterNamespaceMeta: map[string]resolute.WorkspaceNamespaceMeta{
			"": {Namespace: "a", ResourceQuota: new(int)}}}, nil, nil, "not supported"},
		"another cluster is refused": {resolute.WorkspaceRequest{ClusterNamespaceMeta: map[string]resolute.WorkspaceNamespaceMeta{
			"east": {Namespace: "a"}}}, nil, nil, "one cluster"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := control.PatchOf(tc.req)
			if tc.err != "" {
				if err == nil || !strings.Contains(resolute.ErrorMessage(err), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.compute, p.DefaultComputePool); diff != "" {
				t.Errorf("compute pool (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.ns, p.Namespace); diff != "" {
				t.Errorf("namespace (-want +got):\n%s", diff)
			}
		})
	}
}
