package db

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute/db/gen"
)

// RunMetadata returns the JSON object a trial set as its run metadata, {}
// when it set none.
func (q *Queries) RunMetadata(ctx context.Context, trialID int64) (json.RawMessage, error) {
	md, err := q.q.GetRunMetadata(ctx, trialID)
	if errors.Is(err, pgx.ErrNoRows) {
		return json.RawMessage("{}"), nil
	}
	return json.RawMessage(md), translate(err, "metadata of trial %d", trialID)
}

// SetRunMetadata replaces a trial's run metadata with md, a JSON object,
// and returns what was stored.
func (q *Queries) SetRunMetadata(ctx context.Context, trialID int64, md json.RawMessage) (json.RawMessage, error) {
	out, err := q.q.SetRunMetadata(ctx, gen.SetRunMetadataParams{TrialID: trialID, Metadata: md})
	return json.RawMessage(out), translate(err, "metadata of trial %d", trialID)
}
