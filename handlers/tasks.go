package handlers

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// The task API: what Determined's harness calls from inside a trial, with
// its allocation token. The services let a task reach only its own trial.

// metricsBody is Determined's ReportTrialMetrics body.
type metricsBody struct {
	Metrics struct {
		TrialID        int64 `json:"trial_id"`
		TrialRunID     int   `json:"trial_run_id"`
		StepsCompleted int64 `json:"steps_completed"`
		// ReportTime is when the metrics were taken; the profiler's
		// system metrics (see handleSystemMetricsReport) have no step.
		ReportTime *time.Time `json:"report_time"`
		Metrics    struct {
			AvgMetrics   map[string]any `json:"avg_metrics"`
			BatchMetrics []any          `json:"batch_metrics"`
		} `json:"metrics"`
	} `json:"metrics"`
	Group string `json:"group"`
}

// handleTaskMetrics serves POST /api/v1/trials/{id}/metrics: stores the
// report and, for validation metrics, tells the searcher; a retried POST
// stores nothing and tells the searcher nothing again. NaN and ±Inf are
// stored as the strings "NaN", "Infinity", "-Infinity" (JSON has no such
// numbers); the searcher ranks NaN worst.
func (s *Server) handleTaskMetrics(w http.ResponseWriter, r *http.Request) {
	var body metricsBody
	id, err := idAndJSON(r, &body)
	if err != nil {
		s.error(w, r, err)
		return
	}
	group := body.Group
	switch group {
	case "":
		group = "training"
	case "GROUP_TRAINING":
		group = "training"
	case "GROUP_VALIDATION":
		group = "validation"
	}
	if resolute.IsSystemMetricGroup(group) {
		s.handleSystemMetricsReport(w, r, id, group, body)
		return
	}
	avg := body.Metrics.Metrics.AvgMetrics
	if avg == nil {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "metrics.metrics.avg_metrics: required"))
		return
	}
	for k, v := range avg {
		switch v.(type) {
		case float64, string, bool, nil:
		default:
			s.error(w, r, resolute.Errorf(resolute.EInvalid, "metrics.metrics.avg_metrics.%s: expected a number", k))
			return
		}
	}
	stored, _ := json.Marshal(map[string]any{"avg_metrics": avg, "batch_metrics": body.Metrics.Metrics.BatchMetrics})
	// A run id of 0 is the trial's current run.
	err = s.svc.Trials.ReportMetrics(r.Context(), actorFrom(r), resolute.MetricsReport{TrialID: id,
		TrialRunID: body.Metrics.TrialRunID, StepsCompleted: body.Metrics.StepsCompleted, Group: group, Metrics: stored}, numbers(avg))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// numbers turns the harness's "NaN"/"Infinity" strings back into floats.
func numbers(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch v {
		case "NaN":
			v = math.NaN()
		case "Infinity":
			v = math.Inf(1)
		case "-Infinity":
			v = math.Inf(-1)
		}
		out[k] = v
	}
	return out
}

// handleTaskProgress serves POST /api/v1/trials/{id}/progress.
func (s *Server) handleTaskProgress(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Progress float64 `json:"progress"`
	}
	s.apiByID(w, r, func(ctx context.Context, id int64) error {
		if err := decodeJSON(r, &body); err != nil {
			return err
		}
		return s.svc.Trials.ReportProgress(ctx, actorFrom(r), id, body.Progress)
	})
}

// handleTaskEarlyExit serves POST /api/v1/trials/{id}/early_exit.
func (s *Server) handleTaskEarlyExit(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reason string `json:"reason"`
	}
	s.apiByID(w, r, func(ctx context.Context, id int64) error {
		if err := decodeJSON(r, &body); err != nil {
			return err
		}
		return s.svc.Trials.EarlyExit(ctx, actorFrom(r), id, body.Reason)
	})
}

// handleTaskRunnerMetadata serves POST /api/v1/trials/{id}/runner/metadata.
func (s *Server) handleTaskRunnerMetadata(w http.ResponseWriter, r *http.Request) {
	var body struct {
		State string `json:"state"`
	}
	s.apiByID(w, r, func(ctx context.Context, id int64) error {
		if err := decodeJSON(r, &body); err != nil {
			return err
		}
		return s.svc.Trials.SetRunnerState(ctx, actorFrom(r), id, body.State)
	})
}

// handleBestValidation serves GET
// /api/v1/experiments/{id}/searcher/best_searcher_validation_metric: 404
// until a validation was reported.
func (s *Server) handleBestValidation(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	e, err := s.db.Experiment(r.Context(), id)
	if err == nil {
		err = authz.Can(actorFrom(r), authz.Read, authz.Experiment(e))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	if e.BestValidation == nil {
		s.error(w, r, resolute.Errorf(resolute.ENotFound, "experiment %d has no validation metrics yet", id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]float64{"metric": *e.BestValidation})
}

// handlePreemptionSignal serves GET
// /api/v1/allocations/{id}/signals/preemption?timeout_seconds=N: a long
// poll that answers {"preempt": true} as soon as the allocation should
// checkpoint and exit, or false after the timeout.
func (s *Server) handlePreemptionSignal(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	al, err := s.db.Allocation(r.Context(), id)
	if err == nil {
		err = authz.Can(actorFrom(r), authz.Report, authz.AllocationOf(al))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	timeout, err := longPollTimeout(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var preempt bool
	err = longPoll(r.Context(), timeout, 250*time.Millisecond, func() (bool, error) {
		preempt, err = s.admission.ShouldPreempt(r.Context(), id)
		return preempt, err
	})
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"preempt": preempt})
}

// handleRendezvous serves POST /api/v1/allocations/{id}/rendezvous
// [?timeout_seconds=N]: a pod of a multi-pod allocation posts its address
// and waits, up to N seconds (default 60, at most 600), until every pod has;
// the answer lists them by rank. Only the allocation itself may call it.
func (s *Server) handleRendezvous(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	var req resolute.RendezvousRequest
	err := decodeJSON(r, &req)
	switch {
	case err != nil:
	case req.Size < 1 || req.Size > 4096:
		err = resolute.Errorf(resolute.EInvalid, "size: expected 1 to 4096 pods, got %d", req.Size)
	case req.Rank < 0 || req.Rank >= req.Size:
		err = resolute.Errorf(resolute.EInvalid, "rank: expected 0 to %d, got %d", req.Size-1, req.Rank)
	case req.Addr == "" || len(req.Addr) > 255:
		err = resolute.Errorf(resolute.EInvalid, "addr: expected the pod's address, got %q", req.Addr)
	case req.Slots < 0:
		err = resolute.Errorf(resolute.EInvalid, "slots: expected 0 or more, got %d", req.Slots)
	}
	var timeout time.Duration
	if err == nil {
		timeout, err = longPollTimeout(r)
	}
	if err == nil {
		err = s.svc.Allocations.JoinRendezvous(r.Context(), actorFrom(r), id, db.RendezvousPod{Rank: req.Rank, Addr: req.Addr, Slots: req.Slots})
	}
	var resp resolute.RendezvousResponse
	if err == nil {
		err = longPoll(r.Context(), timeout, 100*time.Millisecond, func() (bool, error) {
			pods, err := s.db.Rendezvous(r.Context(), id)
			pods = slices.DeleteFunc(pods, func(p db.RendezvousPod) bool { return p.Rank >= req.Size })
			if err != nil || len(pods) < req.Size { // ranks are unique: 0 to size-1, in order
				return false, err
			}
			resp.Ready = true
			for _, p := range pods {
				resp.ContainerAddrs = append(resp.ContainerAddrs, p.Addr)
				resp.ContainerSlotCounts = append(resp.ContainerSlotCounts, p.Slots)
			}
			return true, nil
		})
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// longPollTimeout reads a long poll's ?timeout_seconds=: 60 s when absent,
// at most 600 s.
func longPollTimeout(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("timeout_seconds")
	if v == "" {
		return 60 * time.Second, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, resolute.Errorf(resolute.EInvalid, "timeout_seconds: expected a non-negative integer, got %q", v)
	}
	return time.Duration(min(n, 600)) * time.Second, nil
}

// longPoll calls done every interval until it says yes or fails, the
// timeout passes or the client leaves; the caller then answers with what
// done saw last (to nobody, when the client left).
func longPoll(ctx context.Context, timeout, interval time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := done()
		if ok || err != nil || !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// handleAckPreemption serves POST /api/v1/allocations/{id}/signals/ack_preemption.
func (s *Server) handleAckPreemption(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.Allocations.AckPreemption(r.Context(), actorFrom(r), chi.URLParam(r, "id")); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
