package searcher

import (
	"fmt"

	"github.com/resolute-ml/resolute"
)

// RequestID names a trial inside one search. The searcher hands them out in
// order, starting at 1; the caller maps each to the trial ID of the database.
type RequestID int

// Action is one decision of the searcher: a Create, a Stop or a Shutdown.
type Action interface {
	isAction()
}

// Create asks the caller to create a trial with these hyperparameters and
// seed. Nested hyperparameters are nested map[string]any values.
type Create struct {
	RequestID RequestID
	Hparams   map[string]any
	TrialSeed uint32
}

// Stop asks the caller to stop training a trial gracefully: it reached the
// time_metric target of its rung and was not promoted, or it reached max_time.
type Stop struct {
	RequestID RequestID
}

// Shutdown says the search is over: every trial it created has exited.
// Failure is set when every trial errored, Cancel when every trial was
// canceled by a user.
type Shutdown struct {
	Failure bool
	Cancel  bool
}

func (Create) isAction()   {}
func (Stop) isAction()     {}
func (Shutdown) isAction() {}

// String renders the action for logs and test failures.
func (c Create) String() string {
	return fmt.Sprintf("Create(%d, seed %d, %v)", c.RequestID, c.TrialSeed, c.Hparams)
}

// String renders the action for logs and test failures.
func (s Stop) String() string { return fmt.Sprintf("Stop(%d)", s.RequestID) }

// String renders the action for logs and test failures.
func (s Shutdown) String() string {
	return fmt.Sprintf("Shutdown(failure=%t, cancel=%t)", s.Failure, s.Cancel)
}

// ExitReason says why a trial exited, as the trial's allocation reports it.
type ExitReason string

const (
	// ExitCompleted is a trial that finished training on its own or after a
	// Stop.
	ExitCompleted ExitReason = "completed"
	// ExitErrored is a trial that failed; it is never trained further.
	ExitErrored ExitReason = "errored"
	// ExitUserCanceled is a trial a user killed or canceled.
	ExitUserCanceled ExitReason = "user-canceled"
	// ExitInvalidHP is a trial that raised InvalidHP: its hyperparameters do
	// not count as a result.
	ExitInvalidHP ExitReason = "invalid-hp"
)

func (r ExitReason) validate() error {
	switch r {
	case ExitCompleted, ExitErrored, ExitUserCanceled, ExitInvalidHP:
		return nil
	}
	return resolute.Errorf(resolute.EInvalid, "unknown trial exit reason %q", string(r))
}
