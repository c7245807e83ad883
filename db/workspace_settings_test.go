package db_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
)

// TestWorkspaceSettingsAreStoredAndShownMasked: settings round-trip, the
// workspace as shown has its storage's secrets masked while the settings
// the master launches with have them; the table's checks refuse root and
// half an agent user even past the service; deleting a workspace takes its
// settings and bindings with it.
func TestWorkspaceSettingsAreStoredAndShownMasked(t *testing.T) {
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	admin, _ := d.UserByUsername(ctx, resolute.AdminUsername)
	w, err := d.CreateWorkspace(ctx, "vision", admin.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(w.WorkspaceSettingsView, resolute.WorkspaceSettingsView{}) {
		t.Errorf("a new workspace has settings: %+v", w.WorkspaceSettingsView)
	}
	set := resolute.WorkspaceSettings{DefaultComputePool: "a100", DefaultAuxPool: "cpu", Namespace: "team-vision",
		CheckpointStorage: map[string]any{"type": "s3", "bucket": "b", "secret_key": "s3cret"},
		AgentUserGroup:    &resolute.AgentUserGroup{UID: 3000, GID: 3001, User: "vision", Group: "vision-team"}}
	if err := d.SetWorkspaceSettings(ctx, w.ID, set); err != nil {
		t.Fatal(err)
	}
	got, err := d.WorkspaceSettings(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(set, got); diff != "" {
		t.Errorf("settings (-set +got):\n%s", diff)
	}
	for _, shown := range []func() (resolute.Workspace, error){
		func() (resolute.Workspace, error) { return d.Workspace(ctx, w.ID) },
		func() (resolute.Workspace, error) { return d.WorkspaceByName(ctx, "vision") },
		func() (resolute.Workspace, error) {
			list, err := d.Workspaces(ctx, nil)
			for _, x := range list {
				if x.ID == w.ID {
					return x, err
				}
			}
			return resolute.Workspace{}, err
		},
	} {
		ws, err := shown()
		if err != nil {
			t.Fatal(err)
		}
		if ws.CheckpointStorageConfig["secret_key"] != resolute.Masked || ws.DefaultComputePool != "a100" || ws.AgentUserGroup.UID != 3000 {
			t.Errorf("shown %+v", ws.WorkspaceSettingsView)
		}
	}
	if ns, _ := d.WorkspaceNamespaces(ctx); !cmp.Equal(ns, []string{"team-vision"}) {
		t.Errorf("namespaces %v", ns)
	}

	for name, bad := range map[string]resolute.WorkspaceSettings{
		"root":               {AgentUserGroup: &resolute.AgentUserGroup{UID: 0, GID: 3000, User: "root", Group: "g"}},
		"an empty name":      {AgentUserGroup: &resolute.AgentUserGroup{UID: 3000, GID: 3000, User: "", Group: "g"}},
		"past the uid range": {AgentUserGroup: &resolute.AgentUserGroup{UID: 1 << 32, GID: 3000, User: "u", Group: "g"}},
	} {
		if err := d.SetWorkspaceSettings(ctx, w.ID, bad); err == nil {
			t.Errorf("the table took %s", name)
		}
	}

	if err := d.InTx(ctx, func(q *db.Queries) error { return q.BindPool(ctx, "a100", w.ID) }); err != nil {
		t.Fatal(err)
	}
	if err := d.InTx(ctx, func(q *db.Queries) error { return q.BindPool(ctx, "a100", w.ID) }); err != nil {
		t.Errorf("binding again: %v", err)
	}
	b, _ := d.PoolBindings(ctx)
	if diff := cmp.Diff([]resolute.PoolBinding{{PoolName: "a100", WorkspaceID: w.ID, WorkspaceName: "vision"}}, b); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	if err := d.DeleteWorkspace(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	if b, _ := d.PoolBindings(ctx); len(b) != 0 {
		t.Errorf("bindings of a deleted workspace: %v", b)
	}
	if s, err := d.WorkspaceSettings(ctx, w.ID); err != nil || s.DefaultComputePool != "" {
		t.Errorf("settings of a deleted workspace: %+v, %v", s, err)
	}
}
