package control

import (
	"context"
	"log/slog"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// Templates creates, replaces and deletes config templates. A template's
// YAML is validated before it is stored; experiments created from a
// template keep the config they were expanded with.
type Templates struct {
	db     *db.DB
	logger *slog.Logger
}

// Create adds a template owned by the actor, in the request's workspace or
// the default one. A template of that name must not exist.
func (s *Templates) Create(ctx context.Context, a authz.Actor, req resolute.TemplateRequest) (resolute.Template, error) {
	text, err := checkTemplateRequest(req)
	if err != nil {
		return resolute.Template{}, err
	}
	t, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.Template, error) {
		return createTemplate(ctx, q, a, req, text)
	})
	if err == nil {
		s.logger.Info("template created", "template", t.Name, "user", a.Username())
	}
	return t, err
}

// Set replaces a template's YAML (its owner or an administrator), or creates
// the template when there is none of that name (anyone signed in).
func (s *Templates) Set(ctx context.Context, a authz.Actor, req resolute.TemplateRequest) (resolute.Template, error) {
	text, err := checkTemplateRequest(req)
	if err != nil {
		return resolute.Template{}, err
	}
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.Template, error) {
		t, err := q.TemplateForUpdate(ctx, req.Name)
		switch {
		case resolute.ErrorCode(err) == resolute.ENotFound:
			return createTemplate(ctx, q, a, req, text)
		case err != nil:
			return t, err
		}
		if err := authz.Can(a, authz.ChangeTemplate, authz.Template(t)); err != nil {
			return t, err
		}
		// Edited from the masked YAML shown: the storage keys left masked stay.
		return q.UpdateTemplate(ctx, t.Name, expconf.UnmaskYAML(text, t.ConfigYAML))
	})
}

// Update replaces the YAML of an existing template: its owner or an
// administrator. A missing template is reported before a bad YAML, and a bad
// YAML before the permission, as the edit form shows them.
func (s *Templates) Update(ctx context.Context, a authz.Actor, req resolute.TemplateRequest) (resolute.Template, error) {
	return inTx(ctx, s.db, func(q *db.Queries) (resolute.Template, error) {
		t, err := q.TemplateForUpdate(ctx, req.Name)
		if err != nil {
			return t, err
		}
		text, err := checkTemplateRequest(req)
		if err != nil {
			return t, err
		}
		if err := authz.Can(a, authz.ChangeTemplate, authz.Template(t)); err != nil {
			return t, err
		}
		// Edited from the masked YAML shown: the storage keys left masked stay.
		return q.UpdateTemplate(ctx, t.Name, expconf.UnmaskYAML(text, t.ConfigYAML))
	})
}

// Delete deletes a template: its owner or an administrator.
func (s *Templates) Delete(ctx context.Context, a authz.Actor, name string) error {
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		t, err := q.TemplateForUpdate(ctx, name)
		if err != nil {
			return err
		}
		if err := authz.Can(a, authz.ChangeTemplate, authz.Template(t)); err != nil {
			return err
		}
		return q.DeleteTemplate(ctx, name)
	})
	if err == nil {
		s.logger.Info("template deleted", "template", name, "user", a.Username())
	}
	return err
}

// createTemplate adds the template of req with the checked YAML text.
func createTemplate(ctx context.Context, q *db.Queries, a authz.Actor, req resolute.TemplateRequest, text string) (resolute.Template, error) {
	var (
		w   resolute.Workspace
		err error
	)
	if req.WorkspaceID == 0 {
		w, err = q.WorkspaceByName(ctx, resolute.DefaultWorkspaceName)
	} else {
		w, err = q.Workspace(ctx, req.WorkspaceID)
	}
	if err != nil {
		return resolute.Template{}, err
	}
	if err := authz.Can(a, authz.CreateTemplate, authz.Workspace(w)); err != nil {
		return resolute.Template{}, err
	}
	return q.CreateTemplate(ctx, req.Name, text, w.ID, a.UserID())
}

// checkTemplateRequest validates a template's name and config and returns
// the config as YAML text.
func checkTemplateRequest(req resolute.TemplateRequest) (string, error) {
	if err := CheckName("name", req.Name, MaxNameLen); err != nil {
		return "", err
	}
	text, err := templateYAML(req)
	if err != nil {
		return "", err
	}
	return text, CheckTemplate(text)
}

// templateYAML returns the YAML of a request: the text, or the object
// rendered as YAML.
func templateYAML(req resolute.TemplateRequest) (string, error) {
	if req.YAML != "" {
		return req.YAML, nil
	}
	if req.Config == nil {
		return "", resolute.Errorf(resolute.EInvalid, "yaml: give the template as yaml (text) or config (object)")
	}
	data, err := yaml.Marshal(req.Config)
	return string(data), err
}
