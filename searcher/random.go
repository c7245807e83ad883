package searcher

import (
	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// randomSearch is single and random: max_trials independent samples of the
// space, at most max_concurrent_trials at a time, each trained to the length
// the trial itself chooses.
type randomSearch struct{}

func newRandom(s *Searcher) (method, error) {
	if s.cfg.MaxTrials < 1 {
		return nil, resolute.Errorf(resolute.EInvalid, "searcher.max_trials must be at least 1")
	}
	if err := validateSpace(s.space, false); err != nil {
		return nil, err
	}
	return randomSearch{}, nil
}

func (randomSearch) initial(s *Searcher) []Action {
	n := s.cfg.MaxTrials
	if s.cfg.MaxConcurrentTrials > 0 {
		n = min(n, s.cfg.MaxConcurrentTrials)
	}
	acts := make([]Action, 0, n)
	for range n {
		acts = append(acts, s.create(0, sampleSpace(s.space, s.rng)))
	}
	s.st.Created = n
	return acts
}

func (randomSearch) validation(*Searcher, RequestID, map[string]any) ([]Action, error) {
	return nil, nil
}

// exited creates the next trial while fewer than max_trials were created. A
// random search does not count an invalid-hp trial against max_trials, so it
// is replaced; single never replaces its one trial.
func (randomSearch) exited(s *Searcher, id RequestID, reason ExitReason) []Action {
	if reason == ExitInvalidHP {
		s.st.Trials[id-1].Invalid = true
		if s.cfg.Name == expconf.SearcherRandom {
			s.st.Created--
		}
	}
	if s.st.Created >= s.cfg.MaxTrials {
		return nil
	}
	s.st.Created++
	return []Action{s.create(0, sampleSpace(s.space, s.rng))}
}

// progress counts an exited trial as done and a running one by its reported
// progress, over max_trials; replaced invalid-hp trials count for nothing.
func (randomSearch) progress(s *Searcher) float64 {
	done := 0.0
	for _, t := range s.st.Trials {
		switch {
		case t.Invalid && s.cfg.Name == expconf.SearcherRandom:
		case t.Exited:
			done++
		default:
			done += t.Progress
		}
	}
	return done / float64(s.cfg.MaxTrials)
}
