package handlers

import (
	"net/http"

	"github.com/resolute-ml/resolute"
)

// handleAPIJobQueue serves GET /api/v1/job-queues[?resource_pool=P]: the jobs
// in queue order, with jobs ahead and why each waits.
func (s *Server) handleAPIJobQueue(w http.ResponseWriter, r *http.Request) {
	pool := r.URL.Query().Get("resource_pool")
	if pool != "" && !s.poolExists(pool) {
		s.error(w, r, resolute.Errorf(resolute.ENotFound, "resource pool %q not found", pool))
		return
	}
	jobs, err := s.queue.JobsFor(r.Context(), actorFrom(r), pool)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.JobQueueResponse{Jobs: jobs})
}

// handleAPIJobQueueUpdate serves POST /api/v1/job-queues: priority, weight,
// pool, and moves ahead of or behind another job.
func (s *Server) handleAPIJobQueueUpdate(w http.ResponseWriter, r *http.Request) {
	var req resolute.UpdateJobQueueRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.svc.Queue.Update(r.Context(), actorFrom(r), req.Updates); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func (s *Server) poolExists(name string) bool {
	for _, p := range s.queue.Pools() {
		if p.Name == name {
			return true
		}
	}
	return false
}

// handleAPIAgents serves GET /api/v1/agents: the machines (Kubernetes
// nodes) with their slots and what holds each, and whether each is enabled.
func (s *Server) handleAPIAgents(w http.ResponseWriter, r *http.Request) {
	agents, err := s.agentsWithStates(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.AgentsResponse{Agents: agents})
}

// handleAPIResourcePools serves GET /api/v1/resource-pools: each pool with its
// scheduler and which allocation holds each slot.
func (s *Server) handleAPIResourcePools(w http.ResponseWriter, r *http.Request) {
	pools, err := s.queue.ResourcePoolsFor(r.Context(), actorFrom(r))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ResourcePoolsResponse{ResourcePools: pools})
}
