package control

import (
	"context"
	"slices"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Resource-pool bindings (Determined's): a pool bound to workspaces is
// usable only by them; one bound to none is everyone's. Administrators
// bind and unbind; the master's default pools cannot be bound, so that
// every workspace has somewhere to run. Work already queued or running in
// a pool when it is bound elsewhere keeps its place; new submissions and
// moves in the queue are refused.

// BindPool binds pool to the workspaces named by id: administrators only.
func (s *WorkspaceSettings) BindPool(ctx context.Context, a authz.Actor, pool string, workspaceIDs []int64) error {
	return s.changeBindings(ctx, a, "bound", pool, workspaceIDs, func(q *db.Queries, ws []resolute.Workspace) error {
		for _, w := range ws {
			if err := q.BindPool(ctx, pool, w.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// UnbindPool removes pool's bindings to the workspaces named by id:
// administrators only. A workspace it is not bound to is an error.
func (s *WorkspaceSettings) UnbindPool(ctx context.Context, a authz.Actor, pool string, workspaceIDs []int64) error {
	return s.changeBindings(ctx, a, "unbound", pool, workspaceIDs, func(q *db.Queries, ws []resolute.Workspace) error {
		for _, w := range ws {
			ok, err := q.UnbindPool(ctx, pool, w.ID)
			if err != nil {
				return err
			}
			if !ok {
				return resolute.Errorf(resolute.ENotFound, "resource pool %q is not bound to workspace %q", pool, w.Name)
			}
		}
		return nil
	})
}

// ReplacePoolBindings binds pool to exactly the workspaces named by id
// (none: to no workspace, everyone's): administrators only.
func (s *WorkspaceSettings) ReplacePoolBindings(ctx context.Context, a authz.Actor, pool string, workspaceIDs []int64) error {
	return s.changeBindings(ctx, a, "rebound", pool, workspaceIDs, func(q *db.Queries, ws []resolute.Workspace) error {
		if err := q.UnbindPoolAll(ctx, pool); err != nil {
			return err
		}
		for _, w := range ws {
			if err := q.BindPool(ctx, pool, w.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// changeBindings checks and applies a change of pool's bindings under the
// bindings' lock, then logs it.
func (s *WorkspaceSettings) changeBindings(ctx context.Context, a authz.Actor, verb, pool string, ids []int64,
	change func(*db.Queries, []resolute.Workspace) error) error {
	if len(ids) == 0 && verb != "rebound" {
		return resolute.Errorf(resolute.EInvalid, "workspaceIds: name at least one workspace")
	}
	var names []string
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
			return resolute.Errorf(resolute.EForbidden, "only administrators may bind resource pools to workspaces")
		}
		if !slices.Contains(s.c.poolNames(), pool) {
			return resolute.Errorf(resolute.ENotFound, "resource pool %q does not exist; the pools are %s", pool, strings.Join(s.c.poolNames(), ", "))
		}
		if s.c.isDefaultPool(pool) && verb != "unbound" && len(ids) > 0 {
			return resolute.Errorf(resolute.EInvalid, "resource pool %q is the master's default compute or aux pool; default pools cannot be bound to workspaces", pool)
		}
		if err := q.LockPoolBindings(ctx); err != nil {
			return err
		}
		ws := make([]resolute.Workspace, 0, len(ids))
		for _, id := range ids {
			w, err := q.Workspace(ctx, id)
			if err != nil {
				return err
			}
			ws = append(ws, w)
			names = append(names, w.Name)
		}
		return change(q, ws)
	})
	if err == nil {
		s.logger.Info("resource pool "+verb, "pool", pool, "workspaces", strings.Join(names, ","), "by", a.Username())
	}
	return err
}

// PoolBindings lists the workspaces pool is bound to ("" every pool's);
// none: everyone's. Under RBAC only the workspaces a reads are listed.
func (s *WorkspaceSettings) PoolBindings(ctx context.Context, a authz.Actor, pool string) ([]resolute.PoolBinding, error) {
	if pool != "" && !slices.Contains(s.c.poolNames(), pool) {
		return nil, resolute.Errorf(resolute.ENotFound, "resource pool %q does not exist; the pools are %s", pool, strings.Join(s.c.poolNames(), ", "))
	}
	all, err := s.db.PoolBindings(ctx)
	if err != nil {
		return nil, err
	}
	out := []resolute.PoolBinding{}
	for _, b := range all {
		if (pool == "" || b.PoolName == pool) && a.Sees(authz.ViewWorkspace, b.WorkspaceID) {
			out = append(out, b)
		}
	}
	return out, nil
}

// AvailablePools lists the pools workspace id may use, to one who reads
// it: those bound to no workspace or to it.
func (s *WorkspaceSettings) AvailablePools(ctx context.Context, a authz.Actor, id int64) ([]string, error) {
	if _, err := s.Get(ctx, a, id); err != nil {
		return nil, err
	}
	bindings, err := s.db.PoolBindings(ctx)
	if err != nil {
		return nil, err
	}
	return AvailablePools(s.c.poolNames(), id, bindings), nil
}
