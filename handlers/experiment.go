package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// experimentParam loads the experiment of {id}.
func (s *Server) experimentParam(r *http.Request) (resolute.Experiment, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return resolute.Experiment{}, err
	}
	e, err := s.db.Experiment(r.Context(), id)
	if err != nil {
		return e, err
	}
	return e, readable(r, authz.Experiment(e))
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

// handleAPIExperimentAction serves POST /api/v1/experiments/{id}/{activate,
// pause, cancel, kill}.
func (s *Server) handleAPIExperimentAction(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.apiByID(w, r, func(ctx context.Context, id int64) error {
			return s.svc.Experiments.SetState(ctx, actorFrom(r), id, action)
		})
	}
}

// handleAPIExperimentArchive serves POST /api/v1/experiments/{id}/archive
// and /unarchive; only finished experiments are archived.
func (s *Server) handleAPIExperimentArchive(archived bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.apiByID(w, r, func(ctx context.Context, id int64) error {
			return s.svc.Experiments.SetArchived(ctx, actorFrom(r), id, archived)
		})
	}
}

// handleAPIExperimentDelete serves DELETE /api/v1/experiments/{id}: only
// finished experiments, with everything they reported.
func (s *Server) handleAPIExperimentDelete(w http.ResponseWriter, r *http.Request) {
	s.apiByID(w, r, func(ctx context.Context, id int64) error { return s.svc.Experiments.Delete(ctx, actorFrom(r), id) })
}

// handleAPIExperimentMove serves POST /api/v1/experiments/{id}/move.
func (s *Server) handleAPIExperimentMove(w http.ResponseWriter, r *http.Request) {
	var req resolute.MoveRequest
	id, err := idAndJSON(r, &req)
	if err == nil {
		err = s.svc.Experiments.Move(r.Context(), actorFrom(r), id, req.DestinationProjectID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleAPIExperimentPatch serves PATCH /api/v1/experiments/{id}.
func (s *Server) handleAPIExperimentPatch(w http.ResponseWriter, r *http.Request) {
	var req resolute.PatchExperimentRequest
	id, err := idAndJSON(r, &req)
	var e resolute.Experiment
	if err == nil {
		e, err = s.svc.Experiments.Patch(r.Context(), actorFrom(r), id, req)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ExperimentResponse{Experiment: e})
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
	writeJSON(w, http.StatusOK, map[string]any{"config": resolute.MaskConfig(e.Config), "originalConfig": expconf.MaskYAML(original)})
}

// handleAPIExperimentModelDef serves GET /api/v1/experiments/{id}/model_def:
// the context directory as uploaded (tar.gz), streamed from the database a
// chunk at a time.
func (s *Server) handleAPIExperimentModelDef(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	tgz := bufio.NewReaderSize(s.db.ExperimentContext(r.Context(), e.ID), 64<<10)
	if _, err := tgz.Peek(1); err != nil && !errors.Is(err, io.EOF) {
		s.error(w, r, err) // nothing is sent yet: the error can still be told
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", `attachment; filename="experiment-`+strconv.FormatInt(e.ID, 10)+`.tar.gz"`)
	if _, err := io.Copy(w, tgz); err != nil && r.Context().Err() == nil {
		// Too late for a status: cut the response short, so that the
		// client sees it broken rather than a shorter archive.
		s.logger.Error("send the context directory", "experiment", e.ID, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// trialParam loads the trial of {id}; a task may load only its own.
func (s *Server) trialParam(r *http.Request) (resolute.Trial, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return resolute.Trial{}, err
	}
	t, err := s.db.Trial(r.Context(), id)
	if err != nil {
		return t, err
	}
	e, err := s.db.Experiment(r.Context(), t.ExperimentID)
	if err != nil {
		return t, err
	}
	return t, readable(r, authz.Trial(t, e))
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
// validation[&max_points=N&metric=M&min_batches=A&max_batches=B&
// after_step=S]: with max_points the series comes downsampled for a chart
// of that width (in SQL, see db.Series), with the batch range only that
// part of it, and with after_step only the reports past it (what a chart
// lacks). The reports are streamed as they are read, never held whole.
func (s *Server) handleAPITrialMetrics(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	series, err := seriesParams(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	if resolute.IsSystemMetricGroup(series.Group) {
		s.serveSystemMetrics(w, r, t, series.Group)
		return
	}
	out := bufio.NewWriterSize(w, 64<<10) // fewer, larger writes than the server's 4 KiB
	started := false
	err = s.db.EachTrialMetric(r.Context(), t.ID, series, func(m resolute.MetricsReport) error {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			out.WriteString(`{"metrics":[`)
		} else {
			out.WriteByte(',')
		}
		_, err = out.Write(b)
		return err
	})
	switch {
	case err != nil && !started:
		s.error(w, r, err)
	case err != nil:
		panic(http.ErrAbortHandler) // cut the answer short rather than end it as if whole
	case !started:
		writeJSON(w, http.StatusOK, resolute.MetricsResponse{Metrics: []resolute.MetricsReport{}})
	default:
		out.WriteString("]}\n")
		out.Flush()
	}
}

// handleAPITrialKill serves POST /api/v1/trials/{id}/kill.
func (s *Server) handleAPITrialKill(w http.ResponseWriter, r *http.Request) {
	s.apiByID(w, r, func(ctx context.Context, id int64) error { return s.svc.Experiments.KillTrial(ctx, actorFrom(r), id) })
}

// handleAPITrialLogs serves GET /api/v1/trials/{id}/logs[?follow=true&
// level=&search=&limit=&order_by=&timestamp_before=&timestamp_after=&
// rank_ids=&agent_ids=&container_ids=&sources=&stdtypes=] (parseLogQuery):
// newline-delimited {"result": TaskLog}, following new lines while the
// trial runs.
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

// streamLogs writes a task's logs as NDJSON under the request's filters
// (parseLogQuery), all in the database: the first lines, or the last ones
// read backwards; with follow it keeps going until done() says the task
// ended and no lines are left.
func (s *Server) streamLogs(w http.ResponseWriter, r *http.Request, taskID string, done func() bool) {
	lq, err := parseLogQuery(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	f := lq.filter
	f.Limit = 1000
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	if lq.tail > 0 {
		lines, err := s.db.TaskLogsTail(r.Context(), taskID, f, lq.tail)
		if err != nil {
			s.error(w, r, err)
			return
		}
		for _, l := range lines {
			enc.Encode(map[string]resolute.TaskLog{"result": l})
			f.After = l.ID
		}
		if !lq.follow {
			return
		}
		if len(lines) == 0 {
			// Nothing matched yet: follow from the newest line of any kind.
			if last, err := s.db.TaskLogsTail(r.Context(), taskID, db.LogFilter{}, 1); err == nil && len(last) == 1 {
				f.After = last[0].ID
			}
		}
	}
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
			if lq.head > 0 && sent >= lq.head {
				return
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		if len(lines) == f.Limit {
			continue
		}
		if !lq.follow || done() {
			// One last look: lines stored just before the task ended.
			if lines, _ := s.db.TaskLogs(r.Context(), taskID, f); len(lines) > 0 && lq.follow {
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
