package control_test

import (
	"context"
	"testing"

	"github.com/resolute-ml/resolute"
)

// TestAnotherUserCannotChangeSomeonesTemplate: bob may neither replace nor
// delete alice's template, through any of the service's methods, and his
// attempts change nothing; alice and an administrator may.
func TestAnotherUserCannotChangeSomeonesTemplate(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	const original = "max_restarts: 1\n"
	if _, err := p.svc.Templates.Create(ctx, p.alice, resolute.TemplateRequest{Name: "team", YAML: original}); err != nil {
		t.Fatal(err)
	}
	bobs := resolute.TemplateRequest{Name: "team", YAML: "max_restarts: 9\n"}
	refused := map[string]func() error{
		"replace it (PUT)":  func() error { _, err := p.svc.Templates.Set(ctx, p.bob, bobs); return err },
		"update it (PATCH)": func() error { _, err := p.svc.Templates.Update(ctx, p.bob, bobs); return err },
		"delete it":         func() error { return p.svc.Templates.Delete(ctx, p.bob, "team") },
	}
	for name, run := range refused {
		if got := code(run()); got != resolute.EForbidden {
			t.Errorf("bob may %s: code %q, want forbidden", name, got)
		}
	}
	if got, err := p.db.Template(ctx, "team"); err != nil || got.ConfigYAML != original {
		t.Fatalf("the refused changes changed the template: %+v, %v", got, err)
	}

	if _, err := p.svc.Templates.Update(ctx, p.alice, resolute.TemplateRequest{Name: "team", YAML: "max_restarts: 2\n"}); err != nil {
		t.Errorf("alice updates her template: %v", err)
	}
	got, err := p.svc.Templates.Set(ctx, p.admin, resolute.TemplateRequest{Name: "team", Config: map[string]any{"max_restarts": 3}})
	if err != nil || got.ConfigYAML != "max_restarts: 3\n" || got.UserID != p.alice.UserID() {
		t.Errorf("an administrator replaces it, alice still owns it: %+v, %v", got, err)
	}
	if err := p.svc.Templates.Delete(ctx, p.admin, "team"); err != nil {
		t.Errorf("an administrator deletes it: %v", err)
	}
}

func TestTemplateRulesAreCheckedByTheService(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	if _, err := p.svc.Templates.Create(ctx, p.alice, resolute.TemplateRequest{Name: "team", YAML: "max_restarts: 1\n"}); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		run  func() error
		code string
	}{
		"a duplicate name is a conflict": {func() error {
			_, err := p.svc.Templates.Create(ctx, p.bob, resolute.TemplateRequest{Name: "team", YAML: "max_restarts: 1\n"})
			return err
		}, resolute.EConflict},
		"an unknown key is invalid": {func() error {
			_, err := p.svc.Templates.Create(ctx, p.bob, resolute.TemplateRequest{Name: "x", YAML: "resources: {slot_per_trial: 2}\n"})
			return err
		}, resolute.EInvalid},
		"an empty template is invalid": {func() error {
			_, err := p.svc.Templates.Set(ctx, p.alice, resolute.TemplateRequest{Name: "team"})
			return err
		}, resolute.EInvalid},
		"a missing workspace is not found": {func() error {
			_, err := p.svc.Templates.Create(ctx, p.bob, resolute.TemplateRequest{Name: "x", YAML: "max_restarts: 1\n", WorkspaceID: 999})
			return err
		}, resolute.ENotFound},
		"updating a missing template is not found": {func() error {
			_, err := p.svc.Templates.Update(ctx, p.alice, resolute.TemplateRequest{Name: "nope", YAML: "max_restarts: 1\n"})
			return err
		}, resolute.ENotFound},
		"deleting a missing template is not found": {func() error { return p.svc.Templates.Delete(ctx, p.alice, "nope") }, resolute.ENotFound},
		"setting a new name creates it": {func() error {
			_, err := p.svc.Templates.Set(ctx, p.bob, resolute.TemplateRequest{Name: "bob", YAML: "max_restarts: 1\n"})
			return err
		}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := code(tc.run()); got != tc.code {
				t.Fatalf("code = %q, want %q", got, tc.code)
			}
		})
	}
	if bobs, err := p.db.Template(ctx, "bob"); err != nil || bobs.UserID != p.bob.UserID() {
		t.Fatalf("the template bob set = %+v, %v; want it his", bobs, err)
	}
}
