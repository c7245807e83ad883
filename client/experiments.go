package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"

	"github.com/resolute-ml/resolute"
)

// CreateExperiment submits an experiment (POST /api/v1/experiments) as
// multipart/form-data: the fields of req, and contextTgz (a tar.gz of the
// context directory, size bytes long; nil for none) as the file part
// "context". The body is streamed, never held in memory whole; progress,
// when not nil, is called with the bytes of the context sent so far.
// req.ContextTgz is ignored.
func (c *Client) CreateExperiment(ctx context.Context, req resolute.CreateExperimentRequest, contextTgz io.Reader, size int64, progress func(sent int64)) (resolute.ExperimentResponse, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeCreateForm(mw, req, contextTgz, progress))
	}()
	// The writer stops with this error when the master answers before
	// reading the whole body (an early 413, say).
	defer pr.CloseWithError(io.ErrClosedPipe)

	var out resolute.ExperimentResponse
	resp, err := c.sendBody(ctx, c.stream, http.MethodPost, "/api/v1/experiments", nil, mw.FormDataContentType(), pr)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("POST /api/v1/experiments: decode answer: %w", err)
	}
	return out, nil
}

// writeCreateForm writes the parts of an experiment submission; the context
// goes last so that the master has read the small fields when it arrives.
func writeCreateForm(mw *multipart.Writer, req resolute.CreateExperimentRequest, tgz io.Reader, progress func(int64)) error {
	fields := [][2]string{{"config", req.Config}}
	if req.Template != "" {
		fields = append(fields, [2]string{"template", req.Template})
	}
	for _, o := range req.Overrides {
		fields = append(fields, [2]string{"override", o})
	}
	if req.ProjectID != 0 {
		fields = append(fields, [2]string{"project_id", strconv.FormatInt(req.ProjectID, 10)})
	}
	if req.ParentID != 0 {
		fields = append(fields, [2]string{"parent_id", strconv.FormatInt(req.ParentID, 10)})
	}
	if req.Activate != nil && !*req.Activate {
		fields = append(fields, [2]string{"paused", "true"})
	}
	if req.ValidateOnly {
		fields = append(fields, [2]string{"validate_only", "true"})
	}
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	if tgz != nil {
		part, err := mw.CreateFormFile("context", "context.tar.gz")
		if err != nil {
			return err
		}
		if progress != nil {
			tgz = &countingReader{r: tgz, fn: progress}
		}
		if _, err := io.Copy(part, tgz); err != nil {
			return fmt.Errorf("read context archive: %w", err)
		}
	}
	return mw.Close()
}

// countingReader reports how many bytes were read through it.
type countingReader struct {
	r  io.Reader
	n  int64
	fn func(int64)
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.n += int64(n)
		r.fn(r.n)
	}
	return n, err
}

// ExperimentFilter narrows Experiments; the zero value lists all of them.
type ExperimentFilter struct {
	ProjectID int64    // 0 means every project
	Archived  *bool    // only archived (true) or unarchived (false) ones
	States    []string // e.g. ACTIVE, PAUSED; none means any
	Limit     int      // 0 means no limit
	Offset    int
}

// Experiments lists experiments (GET /api/v1/experiments).
func (c *Client) Experiments(ctx context.Context, f ExperimentFilter) ([]resolute.Experiment, error) {
	q := url.Values{}
	if f.ProjectID != 0 {
		q.Set("project_id", strconv.FormatInt(f.ProjectID, 10))
	}
	boolQuery(q, "archived", f.Archived)
	for _, s := range f.States {
		q.Add("states", s)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Offset > 0 {
		q.Set("offset", strconv.Itoa(f.Offset))
	}
	var out resolute.ExperimentsResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/experiments", q, nil, &out)
	return out.Experiments, err
}

// Experiment returns one experiment (GET /api/v1/experiments/{id}).
func (c *Client) Experiment(ctx context.Context, id int64) (resolute.Experiment, error) {
	var out resolute.ExperimentResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/experiments/%d", id), nil, nil, &out)
	return out.Experiment, err
}

// ExperimentConfig returns an experiment's expanded config (JSON) and the
// YAML as submitted (GET /api/v1/experiments/{id}/config).
func (c *Client) ExperimentConfig(ctx context.Context, id int64) (expanded json.RawMessage, original string, err error) {
	var out struct {
		Config         json.RawMessage `json:"config"`
		OriginalConfig string          `json:"originalConfig"`
	}
	err = c.do(ctx, http.MethodGet, idPath("/api/v1/experiments/%d/config", id), nil, nil, &out)
	return out.Config, out.OriginalConfig, err
}

// ExperimentAction asks for a state change: action is activate, pause,
// cancel or kill (POST /api/v1/experiments/{id}/{action}).
func (c *Client) ExperimentAction(ctx context.Context, id int64, action string) error {
	switch action {
	case "activate", "pause", "cancel", "kill":
	default:
		return fmt.Errorf("unknown experiment action %q", action)
	}
	return c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/experiments/%d/%s", id, action), nil, nil, nil)
}

// ArchiveExperiment archives a finished experiment
// (POST /api/v1/experiments/{id}/archive).
func (c *Client) ArchiveExperiment(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/experiments/%d/archive", id), nil, nil, nil)
}

// UnarchiveExperiment unarchives an experiment
// (POST /api/v1/experiments/{id}/unarchive).
func (c *Client) UnarchiveExperiment(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/experiments/%d/unarchive", id), nil, nil, nil)
}

// DeleteExperiment deletes a finished experiment and all it reported
// (DELETE /api/v1/experiments/{id}).
func (c *Client) DeleteExperiment(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/api/v1/experiments/%d", id), nil, nil, nil)
}

// MoveExperiment moves an experiment to another project
// (POST /api/v1/experiments/{id}/move).
func (c *Client) MoveExperiment(ctx context.Context, id, projectID int64) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/experiments/%d/move", id), nil,
		resolute.MoveRequest{DestinationProjectID: projectID}, nil)
}

// PatchExperiment changes the fields of req that are set
// (PATCH /api/v1/experiments/{id}).
func (c *Client) PatchExperiment(ctx context.Context, id int64, req resolute.PatchExperimentRequest) (resolute.Experiment, error) {
	var out resolute.ExperimentResponse
	err := c.do(ctx, http.MethodPatch, idPath("/api/v1/experiments/%d", id), nil, req, &out)
	return out.Experiment, err
}

// ExperimentTrials lists an experiment's trials
// (GET /api/v1/experiments/{id}/trials).
func (c *Client) ExperimentTrials(ctx context.Context, id int64) ([]resolute.Trial, error) {
	var out resolute.TrialsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/experiments/%d/trials", id), nil, nil, &out)
	return out.Trials, err
}

// ExperimentCheckpoints lists an experiment's checkpoints, each with the
// validation metrics of its step (GET /api/v1/experiments/{id}/checkpoints).
func (c *Client) ExperimentCheckpoints(ctx context.Context, id int64) ([]resolute.Checkpoint, error) {
	var out resolute.CheckpointsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/experiments/%d/checkpoints", id), nil, nil, &out)
	return out.Checkpoints, err
}

// ModelDef copies an experiment's context directory, as uploaded (tar.gz),
// to w (GET /api/v1/experiments/{id}/model_def).
func (c *Client) ModelDef(ctx context.Context, id int64, w io.Writer) error {
	path := idPath("/api/v1/experiments/%d/model_def", id)
	resp, err := c.send(ctx, c.stream, http.MethodGet, path, nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}
