package searcher

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// snapshotVersion is the layout of Snapshot's JSON; Restore refuses others.
const snapshotVersion = 1

// pcgStream is the second PCG word; the experiment seed is the first.
const pcgStream = 0x5265736f6c757465 // "Resolute"

// Searcher runs one hyperparameter search. It is not safe for concurrent use:
// the caller serialises events per experiment.
type Searcher struct {
	cfg    expconf.SearcherConfig
	space  expconf.Hyperparameters
	pcg    *rand.PCG
	rng    *rand.Rand
	method method
	st     state
}

// method is what differs between search algorithms.
type method interface {
	initial(s *Searcher) []Action
	validation(s *Searcher, id RequestID, metrics map[string]any) ([]Action, error)
	exited(s *Searcher, id RequestID, reason ExitReason) []Action
	progress(s *Searcher) float64
}

// trialState is what the searcher remembers of one trial it created.
type trialState struct {
	Bracket  int     `json:"bracket,omitempty"`
	Rung     int     `json:"rung,omitempty"`
	Progress float64 `json:"progress,omitempty"`
	Stopped  bool    `json:"stopped,omitempty"`
	Exited   bool    `json:"exited,omitempty"`
	Invalid  bool    `json:"invalid,omitempty"`
}

// state is everything Snapshot saves besides the generator.
type state struct {
	Version  int            `json:"version"`
	Searcher string         `json:"searcher"`
	RNG      []byte         `json:"rng"`
	Started  bool           `json:"started"`
	Shutdown bool           `json:"shutdown"`
	Trials   []trialState   `json:"trials"` // index = RequestID - 1
	Closed   int            `json:"closed"`
	Failures int            `json:"failures"`
	Cancels  int            `json:"cancels"`
	Created  int            `json:"created,omitempty"`   // random: trials counted against max_trials
	NextGrid int            `json:"next_grid,omitempty"` // grid: points handed out
	Brackets []bracketState `json:"brackets,omitempty"`  // adaptive_asha, async_halving
}

// New returns a searcher for cfg over space, seeded with the experiment seed.
// It validates the parts of cfg and space the search depends on.
func New(cfg expconf.SearcherConfig, space expconf.Hyperparameters, seed uint32) (*Searcher, error) {
	s, err := build(cfg, space)
	if err != nil {
		return nil, err
	}
	s.pcg = rand.NewPCG(uint64(seed), pcgStream)
	s.rng = rand.New(s.pcg)
	return s, nil
}

// Restore rebuilds a searcher from a Snapshot taken with the same cfg and
// space, so that a restarted master continues the same search.
func Restore(cfg expconf.SearcherConfig, space expconf.Hyperparameters, snapshot []byte) (*Searcher, error) {
	s, err := build(cfg, space)
	if err != nil {
		return nil, err
	}
	fresh := s.st
	if err := json.Unmarshal(snapshot, &s.st); err != nil {
		return nil, fmt.Errorf("searcher: decode snapshot: %w", err)
	}
	switch {
	case s.st.Version != snapshotVersion:
		return nil, fmt.Errorf("searcher: snapshot version %d, want %d", s.st.Version, snapshotVersion)
	case s.st.Searcher != fresh.Searcher:
		return nil, fmt.Errorf("searcher: snapshot of %q cannot restore %q", s.st.Searcher, fresh.Searcher)
	case len(s.st.Brackets) != len(fresh.Brackets):
		return nil, fmt.Errorf("searcher: snapshot has %d brackets, config gives %d",
			len(s.st.Brackets), len(fresh.Brackets))
	}
	for i := range s.st.Brackets {
		if len(s.st.Brackets[i].Rungs) != len(fresh.Brackets[i].Rungs) {
			return nil, fmt.Errorf("searcher: snapshot bracket %d does not match the config", i)
		}
	}
	for _, t := range s.st.Trials {
		if t.Bracket < 0 || t.Bracket >= max(len(s.st.Brackets), 1) ||
			(len(s.st.Brackets) > 0 && (t.Rung < 0 || t.Rung >= len(s.st.Brackets[t.Bracket].Rungs))) {
			return nil, fmt.Errorf("searcher: snapshot trial out of range")
		}
	}
	s.pcg = &rand.PCG{}
	if err := s.pcg.UnmarshalBinary(s.st.RNG); err != nil {
		return nil, fmt.Errorf("searcher: decode snapshot generator: %w", err)
	}
	s.rng = rand.New(s.pcg)
	return s, nil
}

// build validates cfg and space and sets up the method; the generator is the
// caller's to set.
func build(cfg expconf.SearcherConfig, space expconf.Hyperparameters) (*Searcher, error) {
	if cfg.MaxConcurrentTrials < 0 {
		return nil, resolute.Errorf(resolute.EInvalid, "searcher.max_concurrent_trials must not be negative")
	}
	s := &Searcher{cfg: cfg, space: space, st: state{Version: snapshotVersion, Searcher: cfg.Name}}
	var err error
	switch cfg.Name {
	case expconf.SearcherSingle:
		s.cfg.MaxTrials = 1
		s.method, err = newRandom(s)
	case expconf.SearcherRandom:
		s.method, err = newRandom(s)
	case expconf.SearcherGrid:
		s.method, err = newGrid(s)
	case expconf.SearcherAdaptiveASHA, expconf.SearcherAsyncHalving:
		s.method, err = newASHA(s)
	default:
		return nil, resolute.Errorf(resolute.EInvalid, "searcher.name %q is not supported", cfg.Name)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Initial returns the first trials to create: up to max_concurrent_trials of
// them (per bracket for ASHA). Calls after the first return nothing.
func (s *Searcher) Initial() []Action {
	if s.st.Started {
		return nil
	}
	s.st.Started = true
	acts := s.method.initial(s)
	if len(acts) == 0 {
		return s.finish(nil)
	}
	return acts
}

// ValidationReported handles validation metrics a trial reported. The metric
// named by searcher.metric (and, for ASHA, searcher.time_metric) must be a
// number in metrics. Reports of a trial that was stopped or has exited are
// ignored: a trial may report once more before it sees its Stop.
func (s *Searcher) ValidationReported(id RequestID, metrics map[string]any) ([]Action, error) {
	t, err := s.trial(id)
	if err != nil {
		return nil, err
	}
	if s.st.Shutdown || t.Stopped || t.Exited {
		return nil, nil
	}
	if s.cfg.Metric != "" {
		if _, err := number(metrics, s.cfg.Metric, "metric"); err != nil {
			return nil, err
		}
	}
	return s.method.validation(s, id, metrics)
}

// TrialExited handles a trial's exit. An errored trial is never trained
// further; an invalid-hp trial is replaced where Determined replaces it. When
// every created trial has exited the actions end with a Shutdown. A second
// exit of the same trial is ignored.
func (s *Searcher) TrialExited(id RequestID, reason ExitReason) ([]Action, error) {
	if err := reason.validate(); err != nil {
		return nil, err
	}
	t, err := s.trial(id)
	if err != nil {
		return nil, err
	}
	if t.Exited {
		return nil, nil
	}
	t.Exited = true
	s.st.Closed++
	switch reason {
	case ExitErrored:
		s.st.Failures++
	case ExitUserCanceled:
		s.st.Cancels++
	}
	return s.finish(s.method.exited(s, id, reason)), nil
}

// finish appends the Shutdown once every requested trial has exited.
func (s *Searcher) finish(acts []Action) []Action {
	if s.st.Shutdown || s.st.Closed < len(s.st.Trials) {
		return acts
	}
	s.st.Shutdown = true
	n := len(s.st.Trials)
	return append(acts, Shutdown{Failure: n > 0 && s.st.Failures >= n, Cancel: n > 0 && s.st.Cancels >= n})
}

// ReportProgress records how far a trial is through its own training, from 0
// to 1; single, random and grid use it for Progress.
func (s *Searcher) ReportProgress(id RequestID, fraction float64) error {
	t, err := s.trial(id)
	if err != nil {
		return err
	}
	if !math.IsNaN(fraction) {
		t.Progress = min(max(fraction, 0), 1)
	}
	return nil
}

// Progress returns how far the search is, from 0 to 1.
func (s *Searcher) Progress() float64 {
	if s.st.Shutdown {
		return 1
	}
	p := s.method.progress(s)
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return 0
	}
	return min(max(p, 0), 1)
}

// Done reports whether the search has returned its Shutdown.
func (s *Searcher) Done() bool { return s.st.Shutdown }

// Snapshot returns the search's state as JSON, for Restore.
func (s *Searcher) Snapshot() ([]byte, error) {
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("searcher: save generator: %w", err)
	}
	s.st.RNG = rng
	b, err := json.Marshal(&s.st)
	if err != nil {
		return nil, fmt.Errorf("searcher: encode snapshot: %w", err)
	}
	return b, nil
}

func (s *Searcher) trial(id RequestID) (*trialState, error) {
	if id < 1 || int(id) > len(s.st.Trials) {
		return nil, resolute.Errorf(resolute.EInvalid, "the searcher did not create request %d", id)
	}
	return &s.st.Trials[id-1], nil
}

// create hands out the next request ID with hparams, drawing the trial seed
// after the hyperparameters as Determined does.
func (s *Searcher) create(bracket int, hparams map[string]any) Create {
	s.st.Trials = append(s.st.Trials, trialState{Bracket: bracket})
	return Create{
		RequestID: RequestID(len(s.st.Trials)),
		Hparams:   hparams,
		TrialSeed: s.rng.Uint32() & math.MaxInt32,
	}
}

// number reads metrics[key] as a float64; what names the key in errors.
func number(metrics map[string]any, key, what string) (float64, error) {
	v, ok := metrics[key]
	if !ok {
		return 0, resolute.Errorf(resolute.EInvalid,
			"validation metrics lack the searcher %s %q", what, key)
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint64:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, resolute.Errorf(resolute.EInvalid, "searcher %s %q is not a number", what, key)
		}
	default:
		return 0, resolute.Errorf(resolute.EInvalid, "searcher %s %q is %T, not a number", what, key, v)
	}
	return f, nil
}
