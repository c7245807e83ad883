package handlers

import (
	"net/http"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
)

// handleAPIJobQueue serves GET /api/v1/job-queues[?resource_pool=P]: the jobs
// in queue order, with jobs ahead and why each waits.
func (s *Server) handleAPIJobQueue(w http.ResponseWriter, r *http.Request) {
	pool := r.URL.Query().Get("resource_pool")
	if pool != "" && !s.poolExists(pool) {
		s.error(w, r, resolute.Errorf(resolute.ENotFound, "resource pool %q not found", pool))
		return
	}
	jobs, err := s.queue.Jobs(r.Context(), pool)
	if err != nil {
		s.error(w, r, err)
		return
	}
	jobs = visibleJobs(r, jobs)
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
	writeJSON(w, http.StatusOK, resolute.ResourcePoolsResponse{ResourcePools: s.queue.ResourcePools()})
}

// visibleJobs keeps the jobs the requester sees: under RBAC, those of the
// workspaces where they hold a role that reads them (the queue is built in
// memory from the scheduler's last decision, so it is filtered here, by
// the same rule as the lists' SQL).
func visibleJobs(r *http.Request, jobs []resolute.Job) []resolute.Job {
	a := actorFrom(r)
	out := jobs[:0:0]
	for _, j := range jobs {
		taskType := j.Type
		if taskType == "EXPERIMENT" {
			taskType = ""
		}
		if a.Sees(authz.ViewPermission("job", taskType), j.WorkspaceID) {
			out = append(out, j)
		}
	}
	return out
}
