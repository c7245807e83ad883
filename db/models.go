package db

import (
	"context"
	"encoding/json"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// ModelFilter selects models; zero fields select all.
type ModelFilter struct {
	Archived    *bool
	Search      string // in name or description
	Labels      []string
	WorkspaceID *int64
	Sort        string // name, updated, versions; default newest first
	Viewer      Viewer
}

// Models lists models.
func (q *Queries) Models(ctx context.Context, f ModelFilter) ([]resolute.Model, error) {
	p := gen.ListModelsParams{Archived: f.Archived, Labels: f.Labels, WorkspaceID: f.WorkspaceID, Sort: f.Sort}
	p.ViewerID, p.ViewerRoles = f.Viewer.params()
	if p.Labels == nil {
		p.Labels = []string{}
	}
	if f.Search != "" {
		p.Search = &f.Search
	}
	rows, err := q.q.ListModels(ctx, p)
	if err != nil {
		return nil, translate(err, "models")
	}
	out := make([]resolute.Model, len(rows))
	for i, r := range rows {
		out[i] = toModel(r)
	}
	return out, nil
}

// Model returns the model called name.
func (q *Queries) Model(ctx context.Context, name string) (resolute.Model, error) {
	m, err := q.q.GetModelByName(ctx, name)
	return toModel(m), translate(err, "model %q", name)
}

// ModelForUpdate locks the model called name until the transaction ends
// and returns it.
func (q *Queries) ModelForUpdate(ctx context.Context, name string) (resolute.Model, error) {
	if _, err := q.q.LockModelByName(ctx, name); err != nil {
		return resolute.Model{}, translate(err, "model %q", name)
	}
	return q.Model(ctx, name)
}

// CreateModel adds a model; metadata must be a JSON object.
func (q *Queries) CreateModel(ctx context.Context, m resolute.Model) (resolute.Model, error) {
	_, err := q.q.CreateModel(ctx, gen.CreateModelParams{Name: m.Name, Description: m.Description, Metadata: orEmpty(m.Metadata),
		Labels: orNone(m.Labels), Notes: m.Notes, WorkspaceID: m.WorkspaceID, UserID: m.UserID})
	if err != nil {
		return resolute.Model{}, translate(err, "model %q", m.Name)
	}
	return q.Model(ctx, m.Name)
}

// UpdateModel stores a model's editable fields.
func (q *Queries) UpdateModel(ctx context.Context, m resolute.Model) error {
	return translate(q.q.UpdateModel(ctx, gen.UpdateModelParams{ID: m.ID, Name: m.Name, Description: m.Description,
		Metadata: orEmpty(m.Metadata), Labels: orNone(m.Labels), Notes: m.Notes}), "model %q", m.Name)
}

// SetModelArchived archives or unarchives a model.
func (q *Queries) SetModelArchived(ctx context.Context, id int64, archived bool) error {
	return translate(q.q.SetModelArchived(ctx, gen.SetModelArchivedParams{ID: id, Archived: archived}), "model %d", id)
}

// MoveModel puts a model in another workspace.
func (q *Queries) MoveModel(ctx context.Context, id, workspaceID int64) error {
	return translate(q.q.MoveModel(ctx, gen.MoveModelParams{ID: id, WorkspaceID: workspaceID}), "model %d", id)
}

// DeleteModel removes a model with its versions and aliases.
func (q *Queries) DeleteModel(ctx context.Context, id int64) error {
	return translate(q.q.DeleteModel(ctx, id), "model %d", id)
}

// ModelVersions lists a model's versions, newest first.
func (q *Queries) ModelVersions(ctx context.Context, modelID int64) ([]resolute.ModelVersion, error) {
	rows, err := q.q.ListModelVersions(ctx, modelID)
	if err != nil {
		return nil, translate(err, "versions of model %d", modelID)
	}
	out := make([]resolute.ModelVersion, len(rows))
	for i, r := range rows {
		out[i] = toModelVersion(r)
	}
	return out, nil
}

// ModelVersion returns version n of a model.
func (q *Queries) ModelVersion(ctx context.Context, m resolute.Model, n int) (resolute.ModelVersion, error) {
	v, err := q.q.GetModelVersion(ctx, gen.GetModelVersionParams{ModelID: m.ID, Version: int32(n)})
	return toModelVersion(v), translate(err, "version %d of model %q", n, m.Name)
}

// LatestModelVersion returns a model's newest version.
func (q *Queries) LatestModelVersion(ctx context.Context, m resolute.Model) (resolute.ModelVersion, error) {
	v, err := q.q.LatestModelVersion(ctx, m.ID)
	return toModelVersion(v), translate(err, "a version of model %q", m.Name)
}

// ModelVersionByAlias returns the version an alias points at.
func (q *Queries) ModelVersionByAlias(ctx context.Context, m resolute.Model, alias string) (resolute.ModelVersion, error) {
	v, err := q.q.ModelVersionByAlias(ctx, gen.ModelVersionByAliasParams{ModelID: m.ID, Alias: alias})
	return toModelVersion(v), translate(err, "alias %q of model %q", alias, m.Name)
}

// CreateModelVersion registers a checkpoint as the model's next version.
// Run it in InTx: the model's row is locked so numbers never repeat.
func (q *Queries) CreateModelVersion(ctx context.Context, m resolute.Model, v resolute.ModelVersion) (resolute.ModelVersion, error) {
	if err := q.q.LockModel(ctx, m.ID); err != nil {
		return resolute.ModelVersion{}, translate(err, "model %q", m.Name)
	}
	n, err := q.q.CreateModelVersion(ctx, gen.CreateModelVersionParams{ModelID: m.ID, CheckpointUuid: v.CheckpointUUID,
		Name: v.Name, Comment: v.Comment, Notes: v.Notes, Metadata: orEmpty(v.Metadata), Labels: orNone(v.Labels), UserID: v.UserID})
	if err != nil {
		return resolute.ModelVersion{}, translate(err, "checkpoint %s", v.CheckpointUUID)
	}
	return q.ModelVersion(ctx, m, int(n))
}

// UpdateModelVersion stores a version's editable fields.
func (q *Queries) UpdateModelVersion(ctx context.Context, v resolute.ModelVersion) error {
	return translate(q.q.UpdateModelVersion(ctx, gen.UpdateModelVersionParams{ID: v.ID, Name: v.Name, Comment: v.Comment,
		Notes: v.Notes, Metadata: orEmpty(v.Metadata), Labels: orNone(v.Labels)}), "version %d", v.Version)
}

// DeleteModelVersion removes a version (and aliases pointing at it).
func (q *Queries) DeleteModelVersion(ctx context.Context, id int64) error {
	return translate(q.q.DeleteModelVersion(ctx, id), "model version %d", id)
}

// SetModelAlias points an alias of a model at a version, moving it if it
// pointed elsewhere.
func (q *Queries) SetModelAlias(ctx context.Context, modelID int64, alias string, versionID int64) error {
	return translate(q.q.SetModelAlias(ctx, gen.SetModelAliasParams{ModelID: modelID, Alias: alias, VersionID: versionID}), "alias %q", alias)
}

// DeleteModelAlias removes an alias.
func (q *Queries) DeleteModelAlias(ctx context.Context, m resolute.Model, alias string) error {
	n, err := q.q.DeleteModelAlias(ctx, gen.DeleteModelAliasParams{ModelID: m.ID, Alias: alias})
	if err != nil {
		return translate(err, "alias %q", alias)
	} else if n == 0 {
		return resolute.Errorf(resolute.ENotFound, "alias %q of model %q not found", alias, m.Name)
	}
	return nil
}

// Registration is where a checkpoint is registered.
type Registration struct {
	Model   string
	Version int
}

// CheckpointRegistrations says which of uuids are model versions, and of
// which model and version.
func (q *Queries) CheckpointRegistrations(ctx context.Context, uuids []string) (map[string]Registration, error) {
	out := map[string]Registration{}
	if len(uuids) == 0 {
		return out, nil
	}
	rows, err := q.q.RegisteredCheckpoints(ctx, uuids)
	if err != nil {
		return nil, translate(err, "registered checkpoints")
	}
	for _, r := range rows {
		out[r.CheckpointUuid] = Registration{Model: r.ModelName, Version: int(r.Version)}
	}
	return out, nil
}

func toModel(m gen.ModelView) resolute.Model {
	return resolute.Model{ID: m.ID, Name: m.Name, Description: m.Description, Metadata: json.RawMessage(m.Metadata),
		Labels: orNone(m.Labels), Notes: m.Notes, WorkspaceID: m.WorkspaceID, WorkspaceName: m.WorkspaceName, UserID: m.UserID,
		Username: m.Username, Archived: m.Archived, NumVersions: int(m.NumVersions), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

func toModelVersion(v gen.ModelVersionView) resolute.ModelVersion {
	return resolute.ModelVersion{ID: v.ID, ModelID: v.ModelID, ModelName: v.ModelName, Version: int(v.Version),
		CheckpointUUID: v.CheckpointUuid, Name: v.Name, Comment: v.Comment, Notes: v.Notes, Metadata: json.RawMessage(v.Metadata),
		Labels: orNone(v.Labels), Aliases: orNone(v.Aliases), UserID: v.UserID, Username: v.Username, ExperimentID: v.ExperimentID,
		TrialID: v.TrialID, StepsCompleted: v.StepsCompleted, CheckpointSize: v.CheckpointSize, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
}

func orEmpty(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
