package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// WorkspaceSettings returns the settings of workspace id, secrets and all;
// a workspace that never had any has the zero settings.
func (q *Queries) WorkspaceSettings(ctx context.Context, id int64) (resolute.WorkspaceSettings, error) {
	row, err := q.q.GetWorkspaceSettings(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return resolute.WorkspaceSettings{}, nil
	}
	if err != nil {
		return resolute.WorkspaceSettings{}, translate(err, "settings of workspace %d", id)
	}
	return toWorkspaceSettings(row)
}

// allWorkspaceSettings returns every workspace's settings by workspace id.
func (q *Queries) allWorkspaceSettings(ctx context.Context) (map[int64]resolute.WorkspaceSettings, error) {
	rows, err := q.q.ListWorkspaceSettings(ctx)
	if err != nil {
		return nil, translate(err, "workspace settings")
	}
	out := make(map[int64]resolute.WorkspaceSettings, len(rows))
	for _, r := range rows {
		if out[r.WorkspaceID], err = toWorkspaceSettings(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SetWorkspaceSettings replaces the settings of workspace id with s.
func (q *Queries) SetWorkspaceSettings(ctx context.Context, id int64, s resolute.WorkspaceSettings) error {
	p := gen.SetWorkspaceSettingsParams{WorkspaceID: id, DefaultComputePool: s.DefaultComputePool,
		DefaultAuxPool: s.DefaultAuxPool, Namespace: s.Namespace}
	if s.CheckpointStorage != nil {
		data, err := json.Marshal(s.CheckpointStorage)
		if err != nil {
			return fmt.Errorf("checkpoint storage of workspace %d: %w", id, err)
		}
		p.CheckpointStorage = data
	}
	if g := s.AgentUserGroup; g != nil {
		uid, gid := int64(g.UID), int64(g.GID)
		p.AgentUid, p.AgentGid, p.AgentUser, p.AgentGroup = &uid, &gid, &g.User, &g.Group
	}
	return translate(q.q.SetWorkspaceSettings(ctx, p), "settings of workspace %d", id)
}

// WorkspaceNamespaces lists the Kubernetes namespaces workspaces name.
func (q *Queries) WorkspaceNamespaces(ctx context.Context) ([]string, error) {
	out, err := q.q.ListWorkspaceNamespaces(ctx)
	return out, translate(err, "workspace namespaces")
}

// PoolBindings lists every resource-pool binding by pool, then workspace
// name.
func (q *Queries) PoolBindings(ctx context.Context) ([]resolute.PoolBinding, error) {
	rows, err := q.q.ListPoolBindings(ctx)
	if err != nil {
		return nil, translate(err, "resource pool bindings")
	}
	out := make([]resolute.PoolBinding, len(rows))
	for i, r := range rows {
		out[i] = resolute.PoolBinding{PoolName: r.PoolName, WorkspaceID: r.WorkspaceID, WorkspaceName: r.WorkspaceName}
	}
	return out, nil
}

// LockPoolBindings serializes changes to the bindings and the decisions
// that read them until the transaction ends.
func (q *Queries) LockPoolBindings(ctx context.Context) error {
	return translate(q.q.LockPoolBindings(ctx), "resource pool bindings")
}

// BindPool binds pool to workspace id; binding it again changes nothing.
func (q *Queries) BindPool(ctx context.Context, pool string, id int64) error {
	return translate(q.q.BindPool(ctx, gen.BindPoolParams{PoolName: pool, WorkspaceID: id}), "binding of pool %q", pool)
}

// UnbindPool removes pool's binding to workspace id and says whether there
// was one.
func (q *Queries) UnbindPool(ctx context.Context, pool string, id int64) (bool, error) {
	n, err := q.q.UnbindPool(ctx, gen.UnbindPoolParams{PoolName: pool, WorkspaceID: id})
	return n > 0, translate(err, "binding of pool %q", pool)
}

// UnbindPoolAll removes every binding of pool, making it everyone's.
func (q *Queries) UnbindPoolAll(ctx context.Context, pool string) error {
	_, err := q.q.UnbindPoolAll(ctx, pool)
	return translate(err, "bindings of pool %q", pool)
}

func toWorkspaceSettings(r gen.WorkspaceSetting) (resolute.WorkspaceSettings, error) {
	s := resolute.WorkspaceSettings{DefaultComputePool: r.DefaultComputePool, DefaultAuxPool: r.DefaultAuxPool, Namespace: r.Namespace}
	if len(r.CheckpointStorage) > 0 && string(r.CheckpointStorage) != "null" {
		if err := json.Unmarshal(r.CheckpointStorage, &s.CheckpointStorage); err != nil {
			return s, fmt.Errorf("checkpoint storage of workspace %d: %w", r.WorkspaceID, err)
		}
	}
	if r.AgentUid != nil && r.AgentGid != nil && r.AgentUser != nil && r.AgentGroup != nil {
		s.AgentUserGroup = &resolute.AgentUserGroup{UID: int(*r.AgentUid), GID: int(*r.AgentGid), User: *r.AgentUser, Group: *r.AgentGroup}
	}
	return s, nil
}

// LockPoolBindingsShared keeps the bindings from changing until the
// transaction ends, while others may read them too: a submission checks
// its pool under it.
func (q *Queries) LockPoolBindingsShared(ctx context.Context) error {
	return translate(q.q.LockPoolBindingsShared(ctx), "resource pool bindings")
}
