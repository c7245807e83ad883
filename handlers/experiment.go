package handlers

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
)

// experimentParam loads the experiment of {id}.
func (s *Server) experimentParam(r *http.Request) (resolute.Experiment, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return resolute.Experiment{}, err
	}
	return s.db.Experiment(r.Context(), id)
}

// mayChangeExperiment lets the owner and administrators change an experiment.
func mayChangeExperiment(r *http.Request, e resolute.Experiment) error {
	if me, _ := userFrom(r); me.Admin || me.ID == e.UserID {
		return nil
	}
	return resolute.Errorf(resolute.EForbidden, "experiment %d belongs to %s; only they or an administrator may change it", e.ID, e.Username)
}

// handleAPIExperimentGet serves GET /api/v1/experiments/{id}.
func (s *Server) handleAPIExperimentGet(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ExperimentResponse{Experiment: e})
}

// changeExperiment loads the experiment of {id} and applies a state action
// (activate, pause, cancel, kill) for the requester: the rules the API and
// the pages share.
func (s *Server) changeExperiment(r *http.Request, action string) (resolute.Experiment, error) {
	e, err := s.experimentParam(r)
	if err == nil {
		err = s.setExperimentState(r, e, action)
	}
	return e, err
}

// setExperimentState applies a state action to e for the requester.
func (s *Server) setExperimentState(r *http.Request, e resolute.Experiment, action string) error {
	if err := mayChangeExperiment(r, e); err != nil {
		return err
	}
	return s.exps.SetState(r.Context(), e.ID, action)
}

// archiveExperiment archives or unarchives the experiment of {id}; only
// finished experiments are archived.
func (s *Server) archiveExperiment(r *http.Request, archived bool) (resolute.Experiment, error) {
	e, err := s.experimentParam(r)
	if err == nil {
		err = s.setExperimentArchived(r, e, archived)
	}
	return e, err
}

// setExperimentArchived archives or unarchives e for the requester.
func (s *Server) setExperimentArchived(r *http.Request, e resolute.Experiment, archived bool) error {
	if err := mayChangeExperiment(r, e); err != nil {
		return err
	}
	if archived && !resolute.Terminal(e.State) {
		return resolute.Errorf(resolute.EConflict, "experiment %d is %s; only finished experiments can be archived", e.ID, e.State)
	}
	return s.db.SetExperimentArchived(r.Context(), e.ID, archived)
}

// deleteExperiment deletes the experiment of {id}: only a finished one, with
// everything it reported.
func (s *Server) deleteExperiment(r *http.Request) (resolute.Experiment, error) {
	e, err := s.experimentParam(r)
	if err == nil {
		err = mayChangeExperiment(r, e)
	}
	if err == nil && !resolute.Terminal(e.State) {
		err = resolute.Errorf(resolute.EConflict, "experiment %d is %s; cancel or kill it before deleting it", e.ID, e.State)
	}
	if err == nil {
		// Its checkpoints go with it: none may be a model version.
		var cps []resolute.Checkpoint
		if cps, err = s.db.ExperimentCheckpoints(r.Context(), e.ID); err == nil {
			uuids := make([]string, len(cps))
			for i, c := range cps {
				uuids[i] = c.UUID
			}
			err = s.refuseIfRegistered(r, uuids...)
		}
	}
	if err == nil {
		err = s.db.DeleteExperiment(r.Context(), e.ID)
	}
	return e, err
}

// handleAPIExperimentAction serves POST /api/v1/experiments/{id}/{activate,
// pause, cancel, kill}.
func (s *Server) handleAPIExperimentAction(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.changeExperiment(r, action); err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

// handleAPIExperimentArchive serves POST /api/v1/experiments/{id}/archive
// and /unarchive; only finished experiments are archived.
func (s *Server) handleAPIExperimentArchive(archived bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.archiveExperiment(r, archived); err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

// handleAPIExperimentDelete serves DELETE /api/v1/experiments/{id}: only
// finished experiments, with everything they reported.
func (s *Server) handleAPIExperimentDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := s.deleteExperiment(r); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleAPIExperimentMove serves POST /api/v1/experiments/{id}/move.
func (s *Server) handleAPIExperimentMove(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	var req resolute.MoveRequest
	if err == nil {
		err = decodeJSON(r, &req)
	}
	if err == nil {
		err = s.moveExperiment(r, e, req.DestinationProjectID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// moveExperiment puts e in another project, not an archived one, for the
// requester.
func (s *Server) moveExperiment(r *http.Request, e resolute.Experiment, projectID int64) error {
	if err := mayChangeExperiment(r, e); err != nil {
		return err
	}
	p, err := s.db.Project(r.Context(), projectID)
	if err == nil && p.Archived {
		err = resolute.Errorf(resolute.EConflict, "project %q is archived", p.Name)
	}
	if err != nil {
		return err
	}
	return s.db.MoveExperiment(r.Context(), e.ID, projectID)
}

// handleAPIExperimentPatch serves PATCH /api/v1/experiments/{id}.
func (s *Server) handleAPIExperimentPatch(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err == nil {
		err = mayChangeExperiment(r, e)
	}
	var req resolute.PatchExperimentRequest
	if err == nil {
		err = decodeJSON(r, &req)
	}
	if err == nil {
		err = patchExperiment(&e, req)
	}
	if err == nil {
		err = s.db.UpdateExperiment(r.Context(), e)
	}
	if err == nil {
		e, err = s.db.Experiment(r.Context(), e.ID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ExperimentResponse{Experiment: e})
}

// patchExperiment applies and checks an edit.
func patchExperiment(e *resolute.Experiment, req resolute.PatchExperimentRequest) error {
	if req.Name != nil {
		if err := control.CheckName("name", *req.Name, 512); err != nil {
			return err
		}
		e.Name = *req.Name
	}
	if req.Description != nil {
		e.Description = *req.Description
	}
	if req.Notes != nil {
		e.Notes = *req.Notes
	}
	if req.Labels != nil {
		e.Labels = *req.Labels
	}
	if res := req.Resources; res != nil {
		if res.Priority != nil && (*res.Priority < 1 || *res.Priority > 99) {
			return resolute.Errorf(resolute.EInvalid, "resources.priority: must be between 1 and 99, got %d", *res.Priority)
		}
		if res.Weight != nil && *res.Weight <= 0 {
			return resolute.Errorf(resolute.EInvalid, "resources.weight: must be more than 0, got %v", *res.Weight)
		}
		if res.MaxSlots != nil && *res.MaxSlots < 0 {
			return resolute.Errorf(resolute.EInvalid, "resources.max_slots: must not be negative, got %d", *res.MaxSlots)
		}
		if res.Priority != nil {
			e.Priority = res.Priority
		}
		if res.Weight != nil {
			e.Weight = *res.Weight
		}
		if res.MaxSlots != nil {
			e.MaxSlots = res.MaxSlots
		}
	}
	return nil
}

// handleAPIExperimentTrials serves GET /api/v1/experiments/{id}/trials.
func (s *Server) handleAPIExperimentTrials(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	trials, err := s.db.Trials(r.Context(), e.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.TrialsResponse{Trials: trials})
}

// handleAPIExperimentCheckpoints serves GET /api/v1/experiments/{id}/checkpoints.
func (s *Server) handleAPIExperimentCheckpoints(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list, err := s.db.ExperimentCheckpoints(r.Context(), e.ID)
	if err == nil {
		list, err = s.withValidation(r, list)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.CheckpointsResponse{Checkpoints: list})
}

func (s *Server) withValidation(r *http.Request, list []resolute.Checkpoint) ([]resolute.Checkpoint, error) {
	for i := range list {
		v, err := s.db.ValidationAtStep(r.Context(), list[i].TrialID, list[i].StepsCompleted)
		if err != nil {
			return nil, err
		}
		list[i].Validation = v
	}
	return list, nil
}

// handleAPIExperimentConfig serves GET /api/v1/experiments/{id}/config: the
// expanded config and the one submitted.
func (s *Server) handleAPIExperimentConfig(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	original, err := s.db.ExperimentOriginalConfig(r.Context(), e.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"config": e.Config, "originalConfig": original})
}

// handleAPIExperimentModelDef serves GET /api/v1/experiments/{id}/model_def:
// the context directory as uploaded (tar.gz).
func (s *Server) handleAPIExperimentModelDef(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	tgz, err := s.db.ExperimentContext(r.Context(), e.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", `attachment; filename="experiment-`+strconv.FormatInt(e.ID, 10)+`.tar.gz"`)
	w.Write(tgz)
}

// trialParam loads the trial of {id}; a task may load only its own.
func (s *Server) trialParam(r *http.Request) (resolute.Trial, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return resolute.Trial{}, err
	}
	if a, isTask := allocationFrom(r); isTask && (a.TrialID == nil || *a.TrialID != id) {
		return resolute.Trial{}, resolute.Errorf(resolute.EForbidden, "this allocation belongs to another trial")
	}
	return s.db.Trial(r.Context(), id)
}

// handleAPITrialGet serves GET /api/v1/trials/{id}.
func (s *Server) handleAPITrialGet(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	latest, err := s.db.LatestTrialMetrics(r.Context(), t.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if latest == nil {
		latest = []resolute.MetricsReport{}
	}
	writeJSON(w, http.StatusOK, resolute.TrialResponse{Trial: t, LatestMetrics: latest})
}

// handleAPITrialCheckpoints serves GET /api/v1/trials/{id}/checkpoints.
func (s *Server) handleAPITrialCheckpoints(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list, err := s.db.TrialCheckpoints(r.Context(), t.ID)
	if err == nil {
		list, err = s.withValidation(r, list)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.CheckpointsResponse{Checkpoints: list})
}

// handleAPITrialMetrics serves GET /api/v1/trials/{id}/metrics?group=
// validation[&max_points=N&metric=M&min_batches=A&max_batches=B]: with
// max_points the series comes downsampled for a chart of that width (see
// control.Downsample), with the batch range only that part of it.
func (s *Server) handleAPITrialMetrics(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	group := r.URL.Query().Get("group")
	if group == "" {
		group = "validation"
	}
	list, err := s.db.TrialMetrics(r.Context(), t.ID, group)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if list == nil {
		list = []resolute.MetricsReport{}
	}
	maxPoints, err := optInt(r.URL.Query().Get("max_points"), "max_points")
	if err != nil {
		s.error(w, r, err)
		return
	}
	within, err := batchRange(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	list = slices.DeleteFunc(list, func(m resolute.MetricsReport) bool { return !within(m.StepsCompleted) })
	if maxPoints > 0 {
		list = control.Downsample(list, maxPoints, r.URL.Query().Get("metric"))
	}
	writeJSON(w, http.StatusOK, resolute.MetricsResponse{Metrics: list})
}

// handleAPITrialKill serves POST /api/v1/trials/{id}/kill.
func (s *Server) handleAPITrialKill(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	var e resolute.Experiment
	if err == nil {
		e, err = s.db.Experiment(r.Context(), t.ExperimentID)
	}
	if err == nil {
		err = mayChangeExperiment(r, e)
	}
	if err == nil {
		err = s.exps.KillTrial(r.Context(), t.ID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleAPITrialLogs serves GET /api/v1/trials/{id}/logs[?follow=true&
// levels=&search=&limit=]: newline-delimited {"result": TaskLog}, following
// new lines while the trial runs.
func (s *Server) handleAPITrialLogs(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.streamLogs(w, r, t.TaskID(), func() bool {
		t, err := s.db.Trial(r.Context(), t.ID)
		return err == nil && resolute.Terminal(t.State)
	})
}

// streamLogs writes a task's logs as NDJSON; with follow it keeps going until
// done() says the task ended and no lines are left.
func (s *Server) streamLogs(w http.ResponseWriter, r *http.Request, taskID string, done func() bool) {
	q := r.URL.Query()
	limit, err := optInt(q.Get("limit"), "limit")
	if err != nil {
		s.error(w, r, err)
		return
	}
	f := db.LogFilter{Level: q.Get("level"), Search: q.Get("search"), Limit: 1000}
	for name, dst := range map[string]**time.Time{"timestamp_after": &f.Since, "timestamp_before": &f.Until} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				s.error(w, r, resolute.Errorf(resolute.EInvalid, "%s: expected a time like 2026-01-02T15:04:05Z, got %q", name, v))
				return
			}
			*dst = &t
		}
	}
	follow := q.Get("follow") == "true" || q.Get("follow") == "1"
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	sent := 0
	for {
		lines, err := s.db.TaskLogs(r.Context(), taskID, f)
		if err != nil {
			return
		}
		for _, l := range lines {
			enc.Encode(map[string]resolute.TaskLog{"result": l})
			f.After = l.ID
			sent++
			if limit > 0 && sent >= limit {
				return
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		if len(lines) == f.Limit {
			continue
		}
		if !follow || done() {
			// One last look: lines stored just before the task ended.
			if lines, _ := s.db.TaskLogs(r.Context(), taskID, f); len(lines) > 0 && follow {
				continue
			}
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
	}
}
