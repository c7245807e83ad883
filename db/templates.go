package db

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// Templates lists templates by name; workspaceID nil lists all.
func (q *Queries) Templates(ctx context.Context, workspaceID *int64) ([]resolute.Template, error) {
	return q.TemplatesFor(ctx, workspaceID, Viewer{})
}

// TemplatesFor lists the templates v sees, as Templates does.
func (q *Queries) TemplatesFor(ctx context.Context, workspaceID *int64, v Viewer) ([]resolute.Template, error) {
	id, roles := v.params()
	rows, err := q.q.ListTemplates(ctx, gen.ListTemplatesParams{WorkspaceID: workspaceID, ViewerID: id, ViewerRoles: roles})
	if err != nil {
		return nil, translate(err, "templates")
	}
	out := make([]resolute.Template, len(rows))
	for i, r := range rows {
		out[i] = toTemplate(r)
	}
	return out, nil
}

// Template returns the template called name.
func (q *Queries) Template(ctx context.Context, name string) (resolute.Template, error) {
	t, err := q.q.GetTemplate(ctx, name)
	return toTemplate(t), translate(err, "template %q", name)
}

// TemplateForUpdate locks the template called name until the transaction
// ends and returns it.
func (q *Queries) TemplateForUpdate(ctx context.Context, name string) (resolute.Template, error) {
	if _, err := q.q.LockTemplate(ctx, name); err != nil {
		return resolute.Template{}, translate(err, "template %q", name)
	}
	return q.Template(ctx, name)
}

// CreateTemplate stores a new template; the YAML was validated by the caller.
func (q *Queries) CreateTemplate(ctx context.Context, name, configYAML string, workspaceID, userID int64) (resolute.Template, error) {
	err := q.q.CreateTemplate(ctx, gen.CreateTemplateParams{Name: name, ConfigYaml: configYAML, WorkspaceID: workspaceID, UserID: userID})
	if err != nil {
		return resolute.Template{}, translate(err, "template %q", name)
	}
	return q.Template(ctx, name)
}

// UpdateTemplate replaces a template's YAML. Experiments created from it keep
// the config they were expanded with.
func (q *Queries) UpdateTemplate(ctx context.Context, name, configYAML string) (resolute.Template, error) {
	n, err := q.q.UpdateTemplate(ctx, gen.UpdateTemplateParams{Name: name, ConfigYaml: configYAML})
	if err != nil {
		return resolute.Template{}, translate(err, "template %q", name)
	} else if n == 0 {
		return resolute.Template{}, resolute.Errorf(resolute.ENotFound, "template %q not found", name)
	}
	return q.Template(ctx, name)
}

// DeleteTemplate removes a template.
func (q *Queries) DeleteTemplate(ctx context.Context, name string) error {
	n, err := q.q.DeleteTemplate(ctx, name)
	if err != nil {
		return translate(err, "template %q", name)
	} else if n == 0 {
		return resolute.Errorf(resolute.ENotFound, "template %q not found", name)
	}
	return nil
}

func toTemplate(t gen.TemplateView) resolute.Template {
	return resolute.Template{
		Name: t.Name, ConfigYAML: t.ConfigYaml, WorkspaceID: t.WorkspaceID, WorkspaceName: t.WorkspaceName,
		UserID: t.UserID, Username: t.Username, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
}
