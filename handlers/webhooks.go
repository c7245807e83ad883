package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/views"
)

// Webhooks (/api/v1/webhooks, Determined's paths and bodies; the page
// /admin/webhooks), and the log retention actions: PUT
// /api/v1/experiments/{id}/retain_logs and POST /api/v1/cleanup_logs.

// handleAPIWebhookList serves GET /api/v1/webhooks.
func (s *Server) handleAPIWebhookList(w http.ResponseWriter, r *http.Request) {
	hooks, err := s.svc.Webhooks.List(r.Context(), actorFrom(r))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.WebhooksResponse{Webhooks: hooks})
}

// handleAPIWebhookCreate serves POST /api/v1/webhooks: the body is the
// webhook, as Determined's PostWebhook takes it.
func (s *Server) handleAPIWebhookCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.Webhook
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	hook, err := s.svc.Webhooks.Create(r.Context(), actorFrom(r), req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.WebhookResponse{Webhook: hook})
}

// handleAPIWebhookDelete serves DELETE /api/v1/webhooks/{id}.
func (s *Server) handleAPIWebhookDelete(w http.ResponseWriter, r *http.Request) {
	s.apiByID(w, r, func(ctx context.Context, id int64) error { return s.svc.Webhooks.Delete(ctx, actorFrom(r), id) })
}

// handleAPIWebhookPatch serves PATCH /api/v1/webhooks/{id}: {"url": ...}.
func (s *Server) handleAPIWebhookPatch(w http.ResponseWriter, r *http.Request) {
	var req resolute.PatchWebhookRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	s.apiByID(w, r, func(ctx context.Context, id int64) error {
		return s.svc.Webhooks.SetURL(ctx, actorFrom(r), id, req.URL)
	})
}

// handleAPIWebhookTest serves POST /api/v1/webhooks/{id}/test.
func (s *Server) handleAPIWebhookTest(w http.ResponseWriter, r *http.Request) {
	s.apiByID(w, r, func(ctx context.Context, id int64) error { return s.svc.Webhooks.Test(ctx, actorFrom(r), id) })
}

// handleAPIExperimentRetainLogs serves PUT
// /api/v1/experiments/{id}/retain_logs: {"numDays": N}, -1 for ever.
func (s *Server) handleAPIExperimentRetainLogs(w http.ResponseWriter, r *http.Request) {
	var req resolute.RetainLogsRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	s.apiByID(w, r, func(ctx context.Context, id int64) error {
		return s.svc.LogRetention.SetExperiment(ctx, actorFrom(r), id, req.NumDays)
	})
}

// handleAPICleanupLogs serves POST /api/v1/cleanup_logs (administrators):
// the retention cleanup, now.
func (s *Server) handleAPICleanupLogs(w http.ResponseWriter, r *http.Request) {
	n, err := s.svc.LogRetention.Cleanup(r.Context(), actorFrom(r))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.CleanupLogsResponse{RemovedCount: n})
}

// handleWebhookListPage serves GET /admin/webhooks.
func (s *Server) handleWebhookListPage(w http.ResponseWriter, r *http.Request) {
	s.renderWebhookList(w, r, http.StatusOK, views.WebhookForm{})
}

func (s *Server) renderWebhookList(w http.ResponseWriter, r *http.Request, status int, form views.WebhookForm) {
	hooks, err := s.svc.Webhooks.List(r.Context(), actorFrom(r))
	if err != nil {
		s.error(w, r, err)
		return
	}
	archived := false
	spaces, err := s.db.Workspaces(r.Context(), &archived)
	if err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.render(w, r, status, views.WebhookListPage(views.WebhookList{Shell: s.shell(r, "Webhooks", "admin"),
		Webhooks: hooks, Workspaces: spaces, Form: form}))
}

// handleWebhookPage serves GET /admin/webhooks/{id}.
func (s *Server) handleWebhookPage(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	hook, deliveries, err := s.svc.Webhooks.Get(r.Context(), actorFrom(r), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	ws := "every workspace"
	if hook.WorkspaceID != 0 {
		if x, err := s.db.Workspace(r.Context(), hook.WorkspaceID); err == nil {
			ws = x.Name
		}
	}
	s.render(w, r, http.StatusOK, views.WebhookDetailPage(views.WebhookPage{Shell: s.shell(r, "Webhook "+hook.Name, "admin"),
		Webhook: hook, Deliveries: deliveries, Workspace: ws}))
}

// handleWebhookCreateForm serves POST /admin/webhooks.
func (s *Server) handleWebhookCreateForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	form := views.WebhookForm{Name: strings.TrimSpace(r.PostFormValue("name")), URL: strings.TrimSpace(r.PostFormValue("url")),
		Type: r.PostFormValue("type"), Mode: r.PostFormValue("mode"), Workspace: r.PostFormValue("workspace"),
		ExperimentStates: r.PostForm["experiment_state"], TaskStates: r.PostForm["task_state"],
		LogRegex: r.PostFormValue("log_regex")}
	hook := resolute.Webhook{Name: form.Name, URL: form.URL, WebhookType: form.Type, Mode: form.Mode}
	hook.WorkspaceID, _ = strconv.ParseInt(form.Workspace, 10, 64)
	for _, st := range form.ExperimentStates {
		hook.Triggers = append(hook.Triggers, resolute.Trigger{TriggerType: resolute.TriggerExperimentStateChange, Condition: map[string]any{"state": st}})
	}
	for _, st := range form.TaskStates {
		hook.Triggers = append(hook.Triggers, resolute.Trigger{TriggerType: resolute.TriggerTaskStateChange, Condition: map[string]any{"state": st}})
	}
	if form.LogRegex != "" {
		hook.Triggers = append(hook.Triggers, resolute.Trigger{TriggerType: resolute.TriggerTaskLog, Condition: map[string]any{"regex": form.LogRegex}})
	}
	created, err := s.svc.Webhooks.Create(r.Context(), actorFrom(r), hook)
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict || code == resolute.ENotFound {
		msg := resolute.ErrorMessage(err)
		field := "triggers"
		switch {
		case strings.HasPrefix(msg, "name"), code == resolute.EConflict:
			field = "name"
		case strings.Contains(msg, "url"):
			field = "url"
		case strings.Contains(msg, "regular expression"):
			field = "log_regex"
		}
		form.Errors = views.FormErrors{field: fieldMessage(err)}
		s.renderWebhookList(w, r, http.StatusUnprocessableEntity, form)
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/admin/webhooks", "ok", "Created webhook "+created.Name+".")
}

// handleWebhookDeleteForm serves POST /admin/webhooks/{id}/delete.
func (s *Server) handleWebhookDeleteForm(w http.ResponseWriter, r *http.Request) {
	back := func(int64) string { return "/admin/webhooks" }
	s.formByID(w, r, func(ctx context.Context, id int64) error { return s.svc.Webhooks.Delete(ctx, actorFrom(r), id) },
		back, back, "Deleted the webhook.")
}

// handleWebhookTestForm serves POST /admin/webhooks/{id}/test.
func (s *Server) handleWebhookTestForm(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.svc.Webhooks.Test(r.Context(), actorFrom(r), id); resolute.ErrorCode(err) == resolute.EInvalid {
		redirect(w, r, "/admin/webhooks", "error", resolute.ErrorMessage(err))
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/admin/webhooks", "ok", "The receiver accepted the test event.")
}
