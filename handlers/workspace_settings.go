package handlers

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

// handleAPIAvailablePools serves GET
// /api/v1/workspaces/{id}/available-resource-pools: the pools the
// workspace may use.
func (s *Server) handleAPIAvailablePools(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	pools, err := s.svc.WorkspaceSettings.AvailablePools(r.Context(), actorFrom(r), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.AvailablePoolsResponse{ResourcePools: pools})
}

// handleAPIPoolBindings serves GET
// /api/v1/resource-pools/{name}/workspace-bindings: the workspaces the
// pool is bound to.
func (s *Server) handleAPIPoolBindings(w http.ResponseWriter, r *http.Request) {
	bindings, err := s.svc.WorkspaceSettings.PoolBindings(r.Context(), actorFrom(r), chi.URLParam(r, "name"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := resolute.PoolBindingsResponse{WorkspaceIDs: []int64{}, Bindings: bindings}
	for _, b := range bindings {
		out.WorkspaceIDs = append(out.WorkspaceIDs, b.WorkspaceID)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPIPoolBind serves POST (verb bind), DELETE (unbind) and PUT
// (replace)
// /api/v1/resource-pools/{name}/workspace-bindings.
func (s *Server) handleAPIPoolBind(verb string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		change := map[string]func(ctx context.Context, a authz.Actor, pool string, ids []int64) error{
			"bind": s.svc.WorkspaceSettings.BindPool, "unbind": s.svc.WorkspaceSettings.UnbindPool,
			"replace": s.svc.WorkspaceSettings.ReplacePoolBindings}[verb]
		var req resolute.PoolBindingsRequest
		if err := decodeJSON(r, &req); err != nil {
			s.error(w, r, err)
			return
		}
		pool := chi.URLParam(r, "name")
		if req.ResourcePoolName != "" && req.ResourcePoolName != pool {
			s.error(w, r, resolute.Errorf(resolute.EInvalid, "resourcePoolName: %q is not the path's pool %q", req.ResourcePoolName, pool))
			return
		}
		ids := append([]int64(nil), req.WorkspaceIDs...)
		for _, name := range req.WorkspaceNames {
			ws, err := s.db.WorkspaceByName(r.Context(), name)
			if err != nil {
				s.error(w, r, err)
				return
			}
			ids = append(ids, ws.ID)
		}
		if err := change(r.Context(), actorFrom(r), pool, ids); err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

// handleAPINamespaceBindingsGet serves GET
// /api/v1/workspaces/{id}/list-namespace-bindings.
func (s *Server) handleAPINamespaceBindingsGet(w http.ResponseWriter, r *http.Request) {
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
	writeJSON(w, http.StatusOK, namespaceBindings(ws))
}

// handleAPINamespaceBindingsSet serves POST
// /api/v1/workspaces/{id}/namespace-bindings: the workspace's namespace.
func (s *Server) handleAPINamespaceBindingsSet(w http.ResponseWriter, r *http.Request) {
	var req resolute.SetNamespaceBindingsRequest
	id, err := idAndJSON(r, &req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.setNamespace(w, r, id, req.ClusterNamespaceMeta)
}

// handleAPINamespaceBindingsDelete serves DELETE
// /api/v1/workspaces/{id}/namespace-bindings[?clusterNames=]: the
// workspace's pods go to their pools' namespaces again.
func (s *Server) handleAPINamespaceBindingsDelete(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	for _, c := range r.URL.Query()["clusterNames"] {
		if strings.TrimSpace(c) != "" {
			s.error(w, r, resolute.Errorf(resolute.EInvalid, "clusterNames: this master has one cluster; leave the cluster name out"))
			return
		}
	}
	none := ""
	ws, err := s.svc.WorkspaceSettings.Set(r.Context(), actorFrom(r), id, control.SettingsPatch{Namespace: &none})
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, namespaceBindings(ws))
}

func (s *Server) setNamespace(w http.ResponseWriter, r *http.Request, id int64, meta map[string]resolute.WorkspaceNamespaceMeta) {
	req := resolute.WorkspaceRequest{ClusterNamespaceMeta: meta}
	if len(meta) == 0 {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "clusterNamespaceMeta: name the namespace"))
		return
	}
	p, err := control.PatchOf(req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	ws, err := s.svc.WorkspaceSettings.Set(r.Context(), actorFrom(r), id, p)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, namespaceBindings(ws))
}

// namespaceBindings is a workspace's namespace as Determined's API gives
// it: by cluster name, "" for this master's; none when it has none.
func namespaceBindings(ws resolute.Workspace) resolute.NamespaceBindingsResponse {
	out := resolute.NamespaceBindingsResponse{NamespaceBindings: map[string]resolute.WorkspaceNamespaceBinding{}}
	if ws.Namespace != "" {
		out.NamespaceBindings[""] = resolute.WorkspaceNamespaceBinding{WorkspaceID: ws.ID, Namespace: ws.Namespace}
	}
	return out
}
