package control

import (
	"context"
	"log/slog"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Workspaces creates, renames, archives and deletes workspaces. The default
// workspace can be none of these.
type Workspaces struct {
	db     *db.DB
	logger *slog.Logger
	// rbac makes a workspace's creator its WorkspaceAdmin (as Determined
	// does), since under RBAC owning it gives nothing.
	rbac bool
}

// Create adds a workspace owned by the actor.
func (s *Workspaces) Create(ctx context.Context, a authz.Actor, name string) (resolute.Workspace, error) {
	if err := CheckName("name", name, MaxNameLen); err != nil {
		return resolute.Workspace{}, err
	}
	if err := authz.Can(a, authz.CreateWorkspace, authz.Cluster); err != nil {
		return resolute.Workspace{}, err
	}
	w, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.Workspace, error) {
		w, err := q.CreateWorkspace(ctx, name, a.UserID())
		if err != nil || !s.rbac || a.UserID() == 0 {
			return w, err
		}
		uid := a.UserID()
		_, err = q.CreateRoleAssignment(ctx, string(authz.WorkspaceAdmin), &uid, nil, &w.ID)
		return w, err
	})
	if err == nil {
		s.logger.Info("workspace created", "workspace", w.Name, "user", a.Username())
		if s.rbac {
			s.logger.Info("role assigned", "role", authz.WorkspaceAdmin, "to", "user "+a.Username(),
				"scope", "workspace \""+w.Name+"\"", "by", a.Username())
		}
	}
	return w, err
}

// Rename renames a workspace: its owner or an administrator.
func (s *Workspaces) Rename(ctx context.Context, a authz.Actor, id int64, name string) (resolute.Workspace, error) {
	if err := CheckName("name", name, MaxNameLen); err != nil {
		return resolute.Workspace{}, err
	}
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.Workspace, error) {
		w, err := changeableWorkspace(ctx, q, a, id, "renamed")
		if err != nil {
			return w, err
		}
		return q.RenameWorkspace(ctx, id, name)
	})
}

// SetArchived archives or unarchives a workspace: its owner or an
// administrator.
func (s *Workspaces) SetArchived(ctx context.Context, a authz.Actor, id int64, archived bool) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		if _, err := changeableWorkspace(ctx, q, a, id, "archived"); err != nil {
			return err
		}
		return q.SetWorkspaceArchived(ctx, id, archived)
	})
}

// Delete deletes an empty workspace: its owner or an administrator.
func (s *Workspaces) Delete(ctx context.Context, a authz.Actor, id int64) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		w, err := changeableWorkspace(ctx, q, a, id, "deleted")
		if err != nil {
			return err
		}
		if w.NumProjects > 0 {
			return resolute.Errorf(resolute.EConflict, "workspace %q is not empty: it has %d project(s); delete or move them first", w.Name, w.NumProjects)
		}
		return q.DeleteWorkspace(ctx, id)
	})
}

// changeableWorkspace locks workspace id for a change by a: it must be
// theirs to change and not the default one.
func changeableWorkspace(ctx context.Context, q *db.Queries, a authz.Actor, id int64, verb string) (resolute.Workspace, error) {
	w, err := q.WorkspaceForUpdate(ctx, id)
	if err != nil {
		return w, err
	}
	if err := authz.Can(a, authz.ChangeWorkspace, authz.Workspace(w)); err != nil {
		return w, err
	}
	if w.Immutable {
		return w, resolute.Errorf(resolute.EConflict, "the default workspace %q cannot be %s", w.Name, verb)
	}
	return w, nil
}
