package handlers

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
)

// handleAPIMasterConfig serves GET /api/v1/master/config (administrators):
// {"config": ...}, the master's configuration with its secrets masked, as
// Determined's.
func (s *Server) handleAPIMasterConfig(w http.ResponseWriter, r *http.Request) {
	cfg := s.cfg.MasterConfig
	if cfg == nil {
		cfg = map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"config": cfg})
}

// handleAPIClusterMessageGet serves GET /api/v1/master/cluster_message:
// {"clusterMessage": ...}, null when there is none.
func (s *Server) handleAPIClusterMessageGet(w http.ResponseWriter, r *http.Request) {
	m, err := s.db.ClusterMessage(r.Context())
	switch {
	case resolute.ErrorCode(err) == resolute.ENotFound:
		writeJSON(w, http.StatusOK, resolute.ClusterMessageResponse{})
	case err != nil:
		s.error(w, r, err)
	default:
		writeJSON(w, http.StatusOK, resolute.ClusterMessageResponse{ClusterMessage: &m})
	}
}

// handleAPIClusterMessageSet serves PUT /api/v1/master/cluster_message
// (administrators): {message, startTime, endTime | duration}.
func (s *Server) handleAPIClusterMessageSet(w http.ResponseWriter, r *http.Request) {
	var req resolute.SetClusterMessageRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	m, err := s.svc.Cluster.SetMessage(r.Context(), actorFrom(r), req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ClusterMessageResponse{ClusterMessage: &m})
}

// handleAPIClusterMessageClear serves DELETE /api/v1/master/cluster_message
// (administrators).
func (s *Server) handleAPIClusterMessageClear(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.Cluster.ClearMessage(r.Context(), actorFrom(r)); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleAPIAgentEnable serves POST /api/v1/agents/{id}/enable
// (administrators).
func (s *Server) handleAPIAgentEnable(w http.ResponseWriter, r *http.Request) {
	out, err := s.svc.Cluster.EnableAgent(r.Context(), actorFrom(r), chi.URLParam(r, "id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPIAgentDisable serves POST /api/v1/agents/{id}/disable
// [{"drain": true}] (administrators).
func (s *Server) handleAPIAgentDisable(w http.ResponseWriter, r *http.Request) {
	var req resolute.DisableAgentRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			s.error(w, r, err)
			return
		}
	}
	out, err := s.svc.Cluster.DisableAgent(r.Context(), actorFrom(r), chi.URLParam(r, "id"), req.Drain)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPISlotEnable serves POST /api/v1/agents/{id}/slots/{slotId}/enable
// (administrators).
func (s *Server) handleAPISlotEnable(w http.ResponseWriter, r *http.Request) {
	slot, err := slotParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out, err := s.svc.Cluster.EnableSlot(r.Context(), actorFrom(r), chi.URLParam(r, "id"), slot)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPISlotDisable serves POST /api/v1/agents/{id}/slots/{slotId}/disable
// [{"drain": true}] (administrators).
func (s *Server) handleAPISlotDisable(w http.ResponseWriter, r *http.Request) {
	var req resolute.DisableSlotRequest
	slot, err := slotParam(r)
	if err == nil && r.ContentLength != 0 {
		err = decodeJSON(r, &req)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	out, err := s.svc.Cluster.DisableSlot(r.Context(), actorFrom(r), chi.URLParam(r, "id"), slot, req.Drain)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// slotParam reads a slot's number on its agent from the path.
func slotParam(r *http.Request) (int, error) {
	v := chi.URLParam(r, "slotId")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, resolute.Errorf(resolute.EInvalid, "slot id: expected a slot number (det slot list shows them), got %q", v)
	}
	return n, nil
}

// agentsWithStates are the agents with whether each is enabled, and
// draining when it is not.
func (s *Server) agentsWithStates(r *http.Request) ([]resolute.Agent, error) {
	agents, err := s.queue.AgentsFor(r.Context(), actorFrom(r))
	if err != nil {
		return nil, err
	}
	states, err := s.db.AgentStates(r.Context())
	if err != nil {
		return nil, err
	}
	for i, a := range agents {
		st, off := states[a.ID]
		agents[i].Enabled, agents[i].Draining = !off, off && st.Draining
	}
	return agents, nil
}

// handleAPIExperimentTensorBoardFilesDelete serves DELETE
// /api/v1/experiments/{id}/tensorboard-files (its owner or an
// administrator, once it ended): {"taskId": ...}, the task that deletes
// them.
func (s *Server) handleAPIExperimentTensorBoardFilesDelete(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	task, err := s.svc.Checkpoints.DeleteTensorBoardFiles(r.Context(), actorFrom(r), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"taskId": task})
}
