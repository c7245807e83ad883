package control

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Models keeps the model registry: models, their versions (checkpoints
// registered under them) and aliases. Anyone signed in creates a model;
// its owner and administrators change it, its versions and its aliases.
type Models struct {
	db     *db.DB
	logger *slog.Logger
}

var aliasPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// Create adds a model owned by the actor, in req's workspace or the
// default one.
func (s *Models) Create(ctx context.Context, a authz.Actor, req resolute.ModelRequest) (resolute.Model, error) {
	if req.Name == nil {
		return resolute.Model{}, resolute.Errorf(resolute.EInvalid, "name: is required")
	}
	if err := checkModel(req); err != nil {
		return resolute.Model{}, err
	}
	m, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.Model, error) { return createModel(ctx, q, a, req) })
	if err == nil {
		s.logger.Info("model created", "model", m.Name, "user", a.Username())
	}
	return m, err
}

// createModel adds the model req describes, checked, for a.
func createModel(ctx context.Context, q *db.Queries, a authz.Actor, req resolute.ModelRequest) (resolute.Model, error) {
	m := resolute.Model{Name: *req.Name, WorkspaceID: req.WorkspaceID, UserID: a.UserID()}
	if m.WorkspaceID == 0 {
		ws, err := q.WorkspaceByName(ctx, resolute.DefaultWorkspaceName)
		if err != nil {
			return m, err
		}
		m.WorkspaceID = ws.ID
	} else if _, err := q.Workspace(ctx, m.WorkspaceID); err != nil {
		return m, err
	}
	if err := authz.Can(a, authz.CreateModel, authz.InWorkspace(m.WorkspaceID)); err != nil {
		return resolute.Model{}, err
	}
	applyModel(&m, req)
	return q.CreateModel(ctx, m)
}

// Edit changes a model's name, description, metadata, labels and notes
// (what req names): its owner or an administrator.
func (s *Models) Edit(ctx context.Context, a authz.Actor, name string, req resolute.ModelRequest) (resolute.Model, error) {
	if err := checkModel(req); err != nil {
		return resolute.Model{}, err
	}
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.Model, error) {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return m, err
		}
		if req.Name != nil {
			m.Name = *req.Name
		}
		applyModel(&m, req)
		if err := q.UpdateModel(ctx, m); err != nil {
			return m, err
		}
		return q.Model(ctx, m.Name)
	})
}

// SetArchived archives or unarchives a model: its owner or an
// administrator. It returns the model.
func (s *Models) SetArchived(ctx context.Context, a authz.Actor, name string, archived bool) (resolute.Model, error) {
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.Model, error) {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return m, err
		}
		return m, q.SetModelArchived(ctx, m.ID, archived)
	})
}

// Delete deletes a model with its versions and aliases (the checkpoints
// stay): its owner or an administrator. It returns the deleted model.
func (s *Models) Delete(ctx context.Context, a authz.Actor, name string) (resolute.Model, error) {
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.Model, error) {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return m, err
		}
		return m, q.DeleteModel(ctx, m.ID)
	})
}

// Move puts a model in another workspace: its owner or an administrator.
func (s *Models) Move(ctx context.Context, a authz.Actor, name string, workspaceID int64) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return err
		}
		w, err := q.Workspace(ctx, workspaceID)
		if err != nil {
			return err
		}
		// Under RBAC the destination must be the mover's to add models to.
		if err := authz.Can(a, authz.CreateModel, authz.Workspace(w)); err != nil {
			return err
		}
		return q.MoveModel(ctx, m.ID, workspaceID)
	})
}

// RegisterVersion registers a checkpoint that was not deleted as the
// model's next version: the model's owner or an administrator (anyone may
// read the checkpoint).
func (s *Models) RegisterVersion(ctx context.Context, a authz.Actor, name string, req resolute.ModelVersionRequest) (resolute.ModelVersion, error) {
	if !ValidUUID(req.CheckpointUUID) {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EInvalid, "checkpointUuid: expected a UUID, got %q", req.CheckpointUUID)
	}
	if err := checkMetadata("metadata", req.Metadata); err != nil {
		return resolute.ModelVersion{}, err
	}
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.ModelVersion, error) {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return resolute.ModelVersion{}, err
		}
		return registerVersion(ctx, q, a, m, req)
	})
}

// RegisterCheckpoint registers a checkpoint as the next version of the
// model called name, creating that model first (for the actor) when it
// does not exist and create is set; all or nothing. It is the Register
// form of checkpoint rows.
func (s *Models) RegisterCheckpoint(ctx context.Context, a authz.Actor, uuid, name string, create bool) (resolute.ModelVersion, error) {
	if !ValidUUID(uuid) {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EInvalid, "checkpoint: expected a UUID, got %q", uuid)
	}
	if name == "" {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EInvalid, "model: choose a model or name a new one")
	}
	req := resolute.ModelRequest{Name: &name}
	if err := checkModel(req); err != nil {
		return resolute.ModelVersion{}, err
	}
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.ModelVersion, error) {
		if _, err := q.Checkpoint(ctx, uuid); err != nil {
			return resolute.ModelVersion{}, err
		}
		m, err := changeableModel(ctx, q, a, name)
		if resolute.ErrorCode(err) == resolute.ENotFound && create {
			if m, err = createModel(ctx, q, a, req); err == nil {
				m, err = changeableModel(ctx, q, a, name)
			}
		}
		if err != nil {
			return resolute.ModelVersion{}, err
		}
		return registerVersion(ctx, q, a, m, resolute.ModelVersionRequest{CheckpointUUID: uuid})
	})
}

// registerVersion adds req's checkpoint, which must not be deleted, as m's
// next version; m is locked.
func registerVersion(ctx context.Context, q *db.Queries, a authz.Actor, m resolute.Model, req resolute.ModelVersionRequest) (resolute.ModelVersion, error) {
	// Locked, so a checkpoint GC task being queued for it sees this
	// registration, or this sees that task.
	c, err := q.CheckpointForUpdate(ctx, req.CheckpointUUID)
	if err != nil {
		return resolute.ModelVersion{}, err
	}
	e, err := q.Experiment(ctx, c.ExperimentID)
	if err != nil {
		return resolute.ModelVersion{}, err
	}
	// Under RBAC, only a checkpoint one may read (anyone's under basic).
	if err := authz.Can(a, authz.Read, authz.Checkpoint(c, e)); err != nil {
		return resolute.ModelVersion{}, err
	}
	if c.State != "COMPLETED" {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EConflict, "checkpoint %s was deleted; it cannot be registered", c.UUID)
	}
	collecting, err := q.CheckpointsBeingCollected(ctx, []string{c.UUID})
	if err != nil {
		return resolute.ModelVersion{}, err
	}
	if collecting[c.UUID] {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EConflict, "checkpoint %s is being deleted by the experiment's checkpoint policy; it cannot be registered", c.UUID)
	}
	v := resolute.ModelVersion{CheckpointUUID: c.UUID, UserID: a.UserID()}
	applyVersion(&v, req)
	return q.CreateModelVersion(ctx, m, v)
}

// EditVersion changes version n's name, comment, notes, metadata and labels
// (what req names): the model's owner or an administrator.
func (s *Models) EditVersion(ctx context.Context, a authz.Actor, name string, n int, req resolute.ModelVersionRequest) (resolute.ModelVersion, error) {
	if err := checkMetadata("metadata", req.Metadata); err != nil {
		return resolute.ModelVersion{}, err
	}
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.ModelVersion, error) {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return resolute.ModelVersion{}, err
		}
		v, err := q.ModelVersion(ctx, m, n)
		if err != nil {
			return v, err
		}
		applyVersion(&v, req)
		if err := q.UpdateModelVersion(ctx, v); err != nil {
			return v, err
		}
		return q.ModelVersion(ctx, m, n)
	})
}

// DeleteVersion deletes version n (the checkpoint stays): the model's
// owner or an administrator. It returns the deleted version.
func (s *Models) DeleteVersion(ctx context.Context, a authz.Actor, name string, n int) (resolute.ModelVersion, error) {
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.ModelVersion, error) {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return resolute.ModelVersion{}, err
		}
		v, err := q.ModelVersion(ctx, m, n)
		if err != nil {
			return v, err
		}
		return v, q.DeleteModelVersion(ctx, v.ID)
	})
}

// SetAlias points alias at version n, moving it if it pointed elsewhere:
// the model's owner or an administrator. It returns the version.
func (s *Models) SetAlias(ctx context.Context, a authz.Actor, name, alias string, n int) (resolute.ModelVersion, error) {
	if !aliasPattern.MatchString(alias) {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EInvalid, "alias: use a letter then up to 63 letters, digits, '-' or '_', got %q", alias)
	}
	if alias == "latest" {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EInvalid, "alias: %q is reserved", alias)
	}
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.ModelVersion, error) {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return resolute.ModelVersion{}, err
		}
		v, err := q.ModelVersion(ctx, m, n)
		if err != nil {
			return v, err
		}
		if err := q.SetModelAlias(ctx, m.ID, alias, v.ID); err != nil {
			return v, err
		}
		return q.ModelVersion(ctx, m, n)
	})
}

// RemoveAlias removes one of a model's aliases: its owner or an
// administrator.
func (s *Models) RemoveAlias(ctx context.Context, a authz.Actor, name, alias string) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		m, err := changeableModel(ctx, q, a, name)
		if err != nil {
			return err
		}
		return q.DeleteModelAlias(ctx, m, alias)
	})
}

// changeableModel locks the model called name for a change by a.
func changeableModel(ctx context.Context, q *db.Queries, a authz.Actor, name string) (resolute.Model, error) {
	m, err := q.ModelForUpdate(ctx, name)
	if err != nil {
		return m, err
	}
	return m, authz.Can(a, authz.ChangeModel, authz.Model(m))
}

// checkModel validates what a request would set on a model.
func checkModel(req resolute.ModelRequest) error {
	if req.Name != nil {
		if err := CheckName("name", *req.Name, MaxNameLen); err != nil {
			return err
		}
		if strings.ContainsAny(*req.Name, "@/") {
			return resolute.Errorf(resolute.EInvalid, "name: must not contain '@' or '/'")
		}
	}
	if req.Description != nil {
		if err := CheckDescription("description", *req.Description, MaxDescriptionLen); err != nil {
			return err
		}
	}
	return checkMetadata("metadata", req.Metadata)
}

// checkMetadata insists on a JSON object.
func checkMetadata(field string, m *json.RawMessage) error {
	if m == nil {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(*m, &obj); err != nil || obj == nil {
		return resolute.Errorf(resolute.EInvalid, "%s: expected a JSON object", field)
	}
	return nil
}

func applyModel(m *resolute.Model, req resolute.ModelRequest) {
	if req.Description != nil {
		m.Description = *req.Description
	}
	if req.Metadata != nil {
		m.Metadata = *req.Metadata
	}
	if req.Labels != nil {
		m.Labels = *req.Labels
	}
	if req.Notes != nil {
		m.Notes = *req.Notes
	}
}

func applyVersion(v *resolute.ModelVersion, req resolute.ModelVersionRequest) {
	if req.Name != nil {
		v.Name = *req.Name
	}
	if req.Comment != nil {
		v.Comment = *req.Comment
	}
	if req.Notes != nil {
		v.Notes = *req.Notes
	}
	if req.Metadata != nil {
		v.Metadata = *req.Metadata
	}
	if req.Labels != nil {
		v.Labels = *req.Labels
	}
}
