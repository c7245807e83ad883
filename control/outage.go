package control

import (
	"context"
	"time"

	"github.com/resolute-ml/resolute/db"
)

// Waits between tries while the database is unavailable: from
// retryMin, doubling up to retryMax.
const (
	retryMin = 100 * time.Millisecond
	retryMax = 2 * time.Second
)

// untilAvailable runs fn until it succeeds, fails for another reason than
// the database being unavailable (db.Unavailable), or ctx ends, waiting
// between tries. It keeps what the loops must not drop (an allocation's
// exit, its log lines) across an outage of the database, such as the
// embedded one being restarted. It logs nothing: the outage is logged once
// where it is handled (the embedded database's supervisor, the live
// listener), and the error fn last returned is the caller's to handle.
func untilAvailable(ctx context.Context, fn func() error) error {
	wait := retryMin
	for {
		err := fn()
		if !db.Unavailable(err) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}

// quiet says whether an error of a loop goes unlogged: the loop ends
// (ctx), or the database is unavailable, which is said once elsewhere and
// which the loop outlives by trying again.
func quiet(ctx context.Context, err error) bool {
	return ctx.Err() != nil || db.Unavailable(err)
}
