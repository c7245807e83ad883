package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/storage"
)

// checkpointBody is Determined's ReportCheckpoint body.
type checkpointBody struct {
	UUID         string          `json:"uuid"`
	TaskID       string          `json:"taskId"`
	AllocationID string          `json:"allocationId"`
	Resources    map[string]any  `json:"resources"`
	Metadata     json.RawMessage `json:"metadata"`
	State        string          `json:"state"`
}

// resourceSizes reads {path: size}; sizes come as numbers or, from
// Determined's own clients, as strings.
func resourceSizes(m map[string]any) (map[string]int64, int64, error) {
	out := make(map[string]int64, len(m))
	var total int64
	for k, v := range m {
		var n int64
		switch x := v.(type) {
		case float64:
			n = int64(x)
		case string:
			var err error
			if n, err = strconv.ParseInt(x, 10, 64); err != nil {
				return nil, 0, resolute.Errorf(resolute.EInvalid, "resources.%s: expected a size in bytes, got %q", k, x)
			}
		default:
			return nil, 0, resolute.Errorf(resolute.EInvalid, "resources.%s: expected a size in bytes", k)
		}
		out[k] = n
		total += n
	}
	return out, total, nil
}

// handleTaskCheckpoint serves POST /api/v1/checkpoints: a trial reports a
// checkpoint it wrote; it becomes the trial's latest. The trial is the
// allocation's (the token's), else the one the body's taskId names.
func (s *Server) handleTaskCheckpoint(w http.ResponseWriter, r *http.Request) {
	var body checkpointBody
	if err := decodeJSON(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if !control.ValidUUID(body.UUID) {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "uuid: expected a UUID, got %q", body.UUID))
		return
	}
	var meta map[string]any
	if err := json.Unmarshal(body.Metadata, &meta); err != nil || meta == nil {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "metadata: expected an object"))
		return
	}
	steps, ok := meta["steps_completed"].(float64)
	if !ok {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "metadata.steps_completed: required, a number"))
		return
	}
	res, size, err := resourceSizes(body.Resources)
	if err != nil {
		s.error(w, r, err)
		return
	}
	c := resolute.Checkpoint{UUID: body.UUID, StepsCompleted: int64(steps), Resources: res, Size: size, Metadata: body.Metadata}
	if a, isTask := allocationFrom(r); isTask && a.TrialID != nil {
		c.TrialID, c.AllocationID, c.TaskID = *a.TrialID, a.ID, a.TaskID
	} else if c.TrialID, err = trialOfTask(body.TaskID); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.svc.Checkpoints.Report(r.Context(), actorFrom(r), c); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// trialOfTask reads the trial of a trial's task id, "trial-N".
func trialOfTask(taskID string) (int64, error) {
	n, ok := strings.CutPrefix(taskID, "trial-")
	id, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || id <= 0 {
		return 0, resolute.Errorf(resolute.EInvalid, "taskId: expected the task of a trial (trial-N), got %q", taskID)
	}
	return id, nil
}

// checkpointFor loads a checkpoint a task (its own experiment's) or a user
// may see.
func (s *Server) checkpointFor(r *http.Request) (resolute.Checkpoint, error) {
	uuid := chi.URLParam(r, "uuid")
	if !control.ValidUUID(uuid) {
		return resolute.Checkpoint{}, resolute.Errorf(resolute.EInvalid, "uuid: expected a UUID, got %q", uuid)
	}
	c, err := s.db.Checkpoint(r.Context(), uuid)
	if err != nil {
		return c, err
	}
	e, err := s.db.Experiment(r.Context(), c.ExperimentID)
	if err != nil {
		return c, err
	}
	if err := readable(r, authz.Checkpoint(c, e)); err != nil {
		return c, err
	}
	c.Validation, err = s.db.ValidationAtStep(r.Context(), c.TrialID, c.StepsCompleted)
	return c, err
}

// handleCheckpointGet serves GET /api/v1/checkpoints/{uuid}.
func (s *Server) handleCheckpointGet(w http.ResponseWriter, r *http.Request) {
	c, err := s.checkpointFor(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoint": c})
}

// handleAPICheckpointsDelete serves DELETE /api/v1/checkpoints
// {"checkpointUuids": [...]}: deletes the checkpoints and their files
// (Determined's DeleteCheckpoints).
func (s *Server) handleAPICheckpointsDelete(w http.ResponseWriter, r *http.Request) {
	var body struct {
		CheckpointUUIDs []string `json:"checkpointUuids"`
	}
	if err := decodeJSON(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.svc.Checkpoints.Delete(r.Context(), actorFrom(r), body.CheckpointUUIDs); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleTaskCheckpointPatch serves PATCH /api/v1/checkpoints: a task, the
// experiment's owner or an administrator, having deleted files of
// checkpoints, records what remains; no files left means deleted. All the
// checkpoints change, or none.
func (s *Server) handleTaskCheckpointPatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Checkpoints []struct {
			UUID      string `json:"uuid"`
			Resources struct {
				Resources map[string]any `json:"resources"`
			} `json:"resources"`
		} `json:"checkpoints"`
	}
	if err := decodeJSON(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	files := make([]control.CheckpointFiles, len(body.Checkpoints))
	for i, c := range body.Checkpoints {
		res, _, err := resourceSizes(c.Resources.Resources)
		if err != nil {
			s.error(w, r, err)
			return
		}
		files[i] = control.CheckpointFiles{UUID: c.UUID, Resources: res}
	}
	if err := s.svc.Checkpoints.SetFiles(r.Context(), actorFrom(r), files); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// checkpointStore is the storage of a checkpoint's experiment, each
// checkpoint under its UUID.
func (s *Server) checkpointStore(r *http.Request, c resolute.Checkpoint) (storage.Store, error) {
	e, err := s.db.Experiment(r.Context(), c.ExperimentID)
	if err != nil {
		return nil, err
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return nil, err
	}
	st, err := storage.New(r.Context(), cfg.CheckpointStorage)
	if err != nil {
		return nil, resolute.Errorf(resolute.EInvalid, "checkpoint %s: %v; this master cannot read it", c.UUID, resolute.ErrorMessage(err))
	}
	return st, nil
}

// handleCheckpointDownload serves GET /api/v1/checkpoints/{uuid}/download:
// the checkpoint's files as a tar archive, streamed from its storage as
// they are read (a local directory, or a bucket). A local directory is its
// task user's, so it is read only through storage.Local, which never
// follows that user's links: the master reads as root.
func (s *Server) handleCheckpointDownload(w http.ResponseWriter, r *http.Request) {
	c, err := s.checkpointFor(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if c.State != "COMPLETED" {
		s.error(w, r, resolute.Errorf(resolute.EGone, "checkpoint %s was deleted", c.UUID))
		return
	}
	st, err := s.checkpointStore(r, c)
	if err != nil {
		s.error(w, r, err)
		return
	}
	t := &checkpointTar{w: w, uuid: c.UUID}
	err = st.Walk(r.Context(), c.UUID, t.walk)
	if len(t.skipped) > 0 {
		s.logger.Warn("checkpoint download left out what is not a regular file or directory, changed while read, or is another user's hard link",
			"uuid", c.UUID, "entries", firstOf(t.skipped, 20))
	}
	switch {
	case err != nil && t.tw == nil && errors.Is(err, storage.ErrNotFound):
		s.error(w, r, resolute.Errorf(resolute.EGone, "the files of checkpoint %s are not in %s", c.UUID, st))
	case err != nil && t.tw == nil:
		s.logger.Error("checkpoint download", "uuid", c.UUID, "err", err)
		s.error(w, r, resolute.Errorf(resolute.EUnavailable, "checkpoint %s: %v", c.UUID, err))
	case err != nil:
		// Cut short: the archive stays unterminated, so the client fails.
		s.logger.Error("checkpoint download", "uuid", c.UUID, "err", err)
	default:
		t.close()
	}
}

// firstOf is at most n of names, for a log line.
func firstOf(names []string, n int) []string {
	if len(names) > n {
		return append(names[:n:n], "…")
	}
	return names
}
