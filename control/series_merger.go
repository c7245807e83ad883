package control

import (
	"context"
	"log/slog"
	"time"

	"github.com/resolute-ml/resolute/db"
)

// SeriesMerger merges stored metric reports into the series charts read
// (db.MergeSeries), off the ingestion path: soon after reports are stored
// (Wake, debounced, so a stream of batches makes one merge every
// Debounce), and every Every besides (reports stored by another master, or
// before a restart). A chart never waits for it: it reads the reports not
// merged yet too. While the database is unavailable it waits for the next
// tick; two masters' mergers take turns (an advisory lock).
type SeriesMerger struct {
	db     *db.DB
	logger *slog.Logger
	wake   chan struct{}
	// Debounce is how long after a wake it merges; Every, how often it
	// merges unwoken. Set them before Run.
	Debounce, Every time.Duration
	// merged, when set (tests), is told how many reports each merge read.
	merged func(int)
}

// NewSeriesMerger returns a merger that merges 500 ms after a wake and
// every 10 s.
func NewSeriesMerger(database *db.DB, logger *slog.Logger) *SeriesMerger {
	return &SeriesMerger{db: database, logger: logger, wake: make(chan struct{}, 1), Debounce: 500 * time.Millisecond, Every: 10 * time.Second}
}

// Wake asks for a merge soon; it never blocks.
func (m *SeriesMerger) Wake() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Run merges, as woken and on its timer, until ctx ends.
func (m *SeriesMerger) Run(ctx context.Context) {
	tick := time.NewTicker(m.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-m.wake:
			t := time.NewTimer(m.Debounce)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		n, err := m.db.MergeSeries(ctx)
		switch {
		case err != nil && !quiet(ctx, err):
			m.logger.Error("merge metric series", "err", err)
		case err != nil:
			m.logger.Debug("merge metric series: the database is unavailable; merging at the next tick", "err", err)
		}
		if m.merged != nil {
			m.merged(n)
		}
	}
}
