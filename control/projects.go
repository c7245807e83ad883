package control

import (
	"context"
	"log/slog"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Projects creates, edits, archives and deletes projects. The default
// project can be none of these.
type Projects struct {
	db     *db.DB
	logger *slog.Logger
}

// Create adds a project owned by the actor to a workspace that is not
// archived.
func (s *Projects) Create(ctx context.Context, a authz.Actor, workspaceID int64, name, description string) (resolute.Project, error) {
	if err := checkProject(name, description); err != nil {
		return resolute.Project{}, err
	}
	p, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.Project, error) {
		w, err := q.WorkspaceForUpdate(ctx, workspaceID)
		if err != nil {
			return resolute.Project{}, err
		}
		if err := authz.Can(a, authz.CreateProject, authz.Workspace(w)); err != nil {
			return resolute.Project{}, err
		}
		if w.Archived {
			return resolute.Project{}, resolute.Errorf(resolute.EConflict, "workspace %q is archived: unarchive it to add projects", w.Name)
		}
		return q.CreateProject(ctx, w, name, description, a.UserID())
	})
	if err == nil {
		s.logger.Info("project created", "project", p.Name, "workspace", p.WorkspaceName, "user", a.Username())
	}
	return p, err
}

// Edit renames a project and sets its description: its owner, its
// workspace's owner or an administrator.
func (s *Projects) Edit(ctx context.Context, a authz.Actor, id int64, name, description string) (resolute.Project, error) {
	if err := checkProject(name, description); err != nil {
		return resolute.Project{}, err
	}
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.Project, error) {
		if _, err := changeableProject(ctx, q, a, id, "edited"); err != nil {
			return resolute.Project{}, err
		}
		return q.UpdateProject(ctx, id, name, description)
	})
}

// SetArchived archives or unarchives a project: its owner, its workspace's
// owner or an administrator.
func (s *Projects) SetArchived(ctx context.Context, a authz.Actor, id int64, archived bool) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		if _, err := changeableProject(ctx, q, a, id, "archived"); err != nil {
			return err
		}
		return q.SetProjectArchived(ctx, id, archived)
	})
}

// Delete deletes a project without experiments: its owner, its workspace's
// owner or an administrator. It returns the deleted project.
func (s *Projects) Delete(ctx context.Context, a authz.Actor, id int64) (resolute.Project, error) {
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.Project, error) {
		p, err := changeableProject(ctx, q, a, id, "deleted")
		if err != nil {
			return p, err
		}
		if p.NumExperiments > 0 {
			return p, resolute.Errorf(resolute.EConflict, "project %q is not empty: it has %d experiment(s)", p.Name, p.NumExperiments)
		}
		return p, q.DeleteProject(ctx, id)
	})
}

// changeableProject locks project id for a change by a: it must be theirs
// (or their workspace's) to change and not the default project.
func changeableProject(ctx context.Context, q *db.Queries, a authz.Actor, id int64, verb string) (resolute.Project, error) {
	p, err := q.ProjectForUpdate(ctx, id)
	if err != nil {
		return p, err
	}
	w, err := q.Workspace(ctx, p.WorkspaceID)
	if err != nil {
		return p, err
	}
	if err := authz.Can(a, authz.ChangeProject, authz.Project(p, w.UserID)); err != nil {
		return p, err
	}
	if p.Immutable {
		return p, resolute.Errorf(resolute.EConflict, "the default project %q cannot be %s", p.Name, verb)
	}
	return p, nil
}

func checkProject(name, description string) error {
	if err := CheckName("name", name, MaxNameLen); err != nil {
		return err
	}
	return CheckDescription("description", description, MaxDescriptionLen)
}
