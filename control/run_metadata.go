package control

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// RunMetadata keeps what a run (a trial) says about itself with
// core_context.train.set_metadata: one free-form JSON object per trial that
// each set replaces, as Determined's runs metadata is.
type RunMetadata struct {
	db *db.DB
}

// Set replaces trial id's run metadata with md, a JSON object, and returns
// what was stored: the trial's own allocation, the experiment's owner or an
// administrator.
func (s *RunMetadata) Set(ctx context.Context, a authz.Actor, id int64, md json.RawMessage) (json.RawMessage, error) {
	if b := bytes.TrimSpace(md); len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return nil, resolute.Errorf(resolute.EInvalid, "metadata: expected a JSON object")
	}
	return inTx(ctx, s.db, func(q *db.Queries) (json.RawMessage, error) {
		// No row lock: a trial's experiment and its owner never change, and
		// the run_metadata row's reference keeps the trial while it writes.
		if _, err := trialFor(ctx, q, a, authz.ChangeRunMetadata, id); err != nil {
			return nil, err
		}
		return q.SetRunMetadata(ctx, id, md)
	})
}

// Get returns trial id's run metadata, {} when none was set: anyone signed
// in, or the trial's own allocation.
func (s *RunMetadata) Get(ctx context.Context, a authz.Actor, id int64) (json.RawMessage, error) {
	if _, err := trialFor(ctx, &s.db.Queries, a, authz.Read, id); err != nil {
		return nil, err
	}
	return s.db.RunMetadata(ctx, id)
}
