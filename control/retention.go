package control

import (
	"context"
	"log/slog"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// LogRetention deletes task logs past their retention: on the master's
// schedule (retention_policy.schedule), or now when an administrator asks
// (det task cleanup-logs). A line's retention is its experiment's own
// number of days when the experiment has one (det experiment set
// log-retention, else its config's retention_policy.log_retention_days;
// -1 keeps its logs for ever), else the master's log_retention_days (-1,
// the default: for ever). Days count from the line's time.
type LogRetention struct {
	db          *db.DB
	defaultDays int
	now         func() time.Time
	logger      *slog.Logger
}

// Schedule says when the next cleanup after t is (cron.Schedule).
type Schedule interface {
	Next(t time.Time) time.Time
}

// WithLogRetention sets the master's default log retention in days (-1:
// for ever, the default).
func WithLogRetention(days int) ServicesOption {
	return func(s *Services) { s.LogRetention.defaultDays = days }
}

// WithRetentionClock makes the log cleanup read the time from now.
func WithRetentionClock(now func() time.Time) ServicesOption {
	return func(s *Services) { s.LogRetention.now = now }
}

// Cleanup deletes the expired log lines now (administrators) and says how
// many went.
func (s *LogRetention) Cleanup(ctx context.Context, a authz.Actor) (int64, error) {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return 0, err
	}
	return s.cleanup(ctx)
}

func (s *LogRetention) cleanup(ctx context.Context) (int64, error) {
	n, err := s.db.DeleteExpiredTaskLogs(ctx, s.now(), s.defaultDays)
	if err == nil {
		s.logger.Info("task logs cleaned up", "deleted_lines", n, "default_days", s.defaultDays)
	}
	return n, err
}

// SetExperiment sets how many days an experiment's logs are kept: days (0
// to 32767), or for ever (-1); the experiment's owner or an administrator.
func (s *LogRetention) SetExperiment(ctx context.Context, a authz.Actor, id int64, days int) error {
	if days < -1 || days > 32767 {
		return resolute.Errorf(resolute.EInvalid, "log retention: expected a number of days from 0 to 32767, or -1 to keep the logs for ever; got %d", days)
	}
	return s.db.InTx(ctx, func(q *db.Queries) error {
		if _, err := changeableExperiment(ctx, q, a, id); err != nil {
			return err
		}
		return q.SetExperimentLogRetention(ctx, id, &days)
	})
}

// Run cleans up on schedule until ctx ends; a nil schedule, or a default
// of keeping logs for ever with no experiment asking otherwise, still runs
// (experiments may keep theirs for fewer days than the default).
func (s *LogRetention) Run(ctx context.Context, sched Schedule) {
	if sched == nil {
		return
	}
	for {
		next := sched.Next(s.now())
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		if _, err := s.cleanup(ctx); err != nil && !quiet(ctx, err) {
			s.logger.Error("task log cleanup", "err", err)
		}
	}
}
