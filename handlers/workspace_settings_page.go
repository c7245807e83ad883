package handlers

import (
	"net/http"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/views"
)

// The workspace's settings page: the same service method as PATCH
// /api/v1/workspaces/{id}.

// handleWorkspaceSettingsPage serves GET /workspaces/{id}/settings.
func (s *Server) handleWorkspaceSettingsPage(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	ws, err := s.svc.WorkspaceSettings.Get(r.Context(), actorFrom(r), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.renderWorkspaceSettings(w, r, http.StatusOK, ws, settingsFormOf(ws), nil)
}

// settingsFormOf is the settings form of a workspace as stored (its
// storage's secrets masked).
func settingsFormOf(ws resolute.Workspace) views.WorkspaceSettingsForm {
	f := views.WorkspaceSettingsForm{DefaultComputePool: ws.DefaultComputePool, DefaultAuxPool: ws.DefaultAuxPool,
		Agent: agentFormOf(ws.AgentUserGroup), Namespace: ws.Namespace}
	if ws.CheckpointStorageConfig != nil {
		f.CheckpointStorage = storageYAML(ws.CheckpointStorageConfig)
	}
	return f
}

// storageYAML writes a checkpoint_storage section as YAML with its type
// first, as people write it, then the other keys by name.
func storageYAML(storage map[string]any) string {
	keys := make([]string, 0, len(storage))
	for k := range storage {
		if k != "type" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := storage["type"]; ok {
		keys = append([]string{"type"}, keys...)
	}
	var b strings.Builder
	for _, k := range keys {
		data, err := yaml.Marshal(map[string]any{k: storage[k]})
		if err != nil {
			return ""
		}
		b.Write(data)
	}
	return b.String()
}

func (s *Server) renderWorkspaceSettings(w http.ResponseWriter, r *http.Request, status int, ws resolute.Workspace,
	form views.WorkspaceSettingsForm, errs views.FormErrors) {
	pools, err := s.svc.WorkspaceSettings.AvailablePools(r.Context(), actorFrom(r), ws.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var boundHere []string
	for _, p := range pools {
		if b, err := s.svc.WorkspaceSettings.PoolBindings(r.Context(), actorFrom(r), p); err == nil && len(b) > 0 {
			boundHere = append(boundHere, p)
		}
	}
	d := s.svc.WorkspaceSettings.Defaults()
	sh := s.shell(r, "Settings of "+ws.Name, "workspaces")
	sh.Crumbs = []views.Crumb{{Label: "Workspaces", Href: "/workspaces"}, {Label: ws.Name, Href: workspacePath(ws.ID)}}
	sh.Here = "Settings"
	s.render(w, r, status, views.WorkspaceSettingsView(views.WorkspaceSettingsPage{Shell: sh, Workspace: ws, Form: form,
		Errors: errs, Pools: pools, BoundHere: boundHere, ComputePool: d.ComputePool, AuxPool: d.AuxPool,
		CanAdminister: authz.Can(actorFrom(r), authz.Administer, authz.Cluster) == nil, Namespaces: d.Namespaces}))
}

// settingsFields are the service's field names as the form names them.
var settingsFields = map[string]string{"defaultComputePool": "default_compute_pool", "defaultAuxPool": "default_aux_pool",
	"checkpointStorageConfig": "checkpoint_storage", "namespace": "namespace", "agentUserGroup": "agent_uid",
	"agentUid": "agent_uid", "agentGid": "agent_gid", "agentUser": "agent_user", "agentGroup": "agent_group"}

// handleWorkspaceSettingsForm serves POST /workspaces/{id}/settings. The
// administrators' fields are sent only by administrators' forms; a form
// without them leaves them as they are.
func (s *Server) handleWorkspaceSettingsForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	ws, err := s.db.Workspace(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	v := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	form := views.WorkspaceSettingsForm{DefaultComputePool: v("default_compute_pool"), DefaultAuxPool: v("default_aux_pool"),
		CheckpointStorage: r.PostFormValue("checkpoint_storage"), Namespace: v("namespace"),
		Agent: views.AgentUserForm{UID: v("agent_uid"), GID: v("agent_gid"), User: v("agent_user"), Group: v("agent_group")}}
	p := control.SettingsPatch{DefaultComputePool: &form.DefaultComputePool, DefaultAuxPool: &form.DefaultAuxPool}
	errs := views.FormErrors{}
	storage := map[string]any{}
	if strings.TrimSpace(form.CheckpointStorage) != "" {
		if err := yaml.Unmarshal([]byte(form.CheckpointStorage), &storage); err != nil || storage == nil {
			errs["checkpoint_storage"] = "must be a YAML mapping, such as type: shared_fs and host_path: /mnt/checkpoints"
		}
	}
	p.CheckpointStorage = &storage
	if _, ok := r.PostForm["agent_uid"]; ok {
		link, agentErrs := parseAgentForm(form.Agent)
		for k, e := range agentErrs {
			errs[k] = e
		}
		p.AgentUserGroup = &link
	}
	if _, ok := r.PostForm["namespace"]; ok {
		p.Namespace = &form.Namespace
	}
	if len(errs) == 0 {
		_, err = s.svc.WorkspaceSettings.Set(r.Context(), actorFrom(r), id, p)
		switch code := resolute.ErrorCode(err); {
		case code == resolute.EInvalid:
			msg := resolute.ErrorMessage(err)
			field, _, _ := strings.Cut(msg, ":")
			field, _, _ = strings.Cut(field, ".")
			if name, ok := settingsFields[field]; ok && name == "checkpoint_storage" {
				errs[name] = strings.ReplaceAll(msg, "checkpointStorageConfig.", "")
			} else if ok {
				errs[name] = fieldMessage(err)
			} else {
				errs["form"] = msg
			}
		case err != nil:
			s.error(w, r, err)
			return
		}
	}
	if len(errs) > 0 {
		s.renderWorkspaceSettings(w, r, http.StatusUnprocessableEntity, ws, form, errs)
		return
	}
	redirect(w, r, workspacePath(id)+"/settings", "ok", "Saved the settings of "+ws.Name+".")
}
