package control

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// MetricsWriter stores metric reports in batches: concurrent reports are
// written together with one INSERT (group commit), and each caller returns
// only once its report is stored, so nothing acknowledged is lost in a
// crash. A report already stored (a retried POST) is acknowledged without
// being stored again.
type MetricsWriter struct {
	db     *db.DB
	logger *slog.Logger
	queue  chan pendingReport
	stored atomic.Uint64 // reports committed since the master started
	after  func()        // called after each batch is stored (AfterStore)
}

// AfterStore has fn called after each batch is stored (the series merger's
// Wake); call it before Run.
func (w *MetricsWriter) AfterStore(fn func()) { w.after = fn }

// Stored counts the reports stored since the writer was made (those already
// stored before, retried, included): the master's metric ingestion.
func (w *MetricsWriter) Stored() uint64 { return w.stored.Load() }

type pendingReport struct {
	report resolute.MetricsReport
	done   chan error
}

// maxBatch bounds one INSERT.
const maxBatch = 2000

// NewMetricsWriter returns a writer; Run must be running for Write to return.
func NewMetricsWriter(database *db.DB, logger *slog.Logger) *MetricsWriter {
	return &MetricsWriter{db: database, logger: logger, queue: make(chan pendingReport, 4*maxBatch)}
}

// Write stores one report and returns when it is committed.
func (w *MetricsWriter) Write(ctx context.Context, r resolute.MetricsReport) error {
	p := pendingReport{report: r, done: make(chan error, 1)}
	select {
	case w.queue <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run writes batches until ctx ends.
func (w *MetricsWriter) Run(ctx context.Context) {
	batch := make([]pendingReport, 0, maxBatch)
	reports := make([]resolute.MetricsReport, 0, maxBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-w.queue:
			batch = append(batch[:0], p)
		}
	collect:
		for len(batch) < maxBatch {
			select {
			case p := <-w.queue:
				batch = append(batch, p)
			default:
				break collect
			}
		}
		reports = reports[:0]
		for _, p := range batch {
			reports = append(reports, p.report)
		}
		// A background context: a report accepted into a batch is written
		// even if its caller gave up waiting.
		wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := w.db.InsertMetrics(wctx, reports)
		cancel()
		if err != nil && !db.Unavailable(err) { // the reporters are told, and try again
			w.logger.Error("store metrics", "reports", len(reports), "err", err)
		}
		if err == nil {
			w.stored.Add(uint64(len(batch)))
			if w.after != nil {
				w.after()
			}
		}
		for _, p := range batch {
			p.done <- err
		}
	}
}
