package searcher

// gridSearch creates one trial per point of the cartesian product of the
// space's grid axes, at most max_concurrent_trials at a time. Like
// Determined, it hands points out from the last to the first.
type gridSearch struct {
	axes []gridAxis
	size int
}

func newGrid(s *Searcher) (method, error) {
	if err := validateSpace(s.space, true); err != nil {
		return nil, err
	}
	g := gridSearch{axes: gridAxes(s.space, nil)}
	var err error
	if g.size, err = gridSize(g.axes); err != nil {
		return nil, err
	}
	return g, nil
}

func (g gridSearch) next(s *Searcher) Action {
	k := g.size - 1 - s.st.NextGrid
	s.st.NextGrid++
	return s.create(0, gridPoint(g.axes, k))
}

func (g gridSearch) initial(s *Searcher) []Action {
	n := g.size
	if s.cfg.MaxConcurrentTrials > 0 {
		n = min(n, s.cfg.MaxConcurrentTrials)
	}
	acts := make([]Action, 0, n)
	for range n {
		acts = append(acts, g.next(s))
	}
	return acts
}

func (gridSearch) validation(*Searcher, RequestID, map[string]any) ([]Action, error) {
	return nil, nil
}

// exited creates the next point, if any. An invalid-hp point is not retried:
// it is one point of the grid.
func (g gridSearch) exited(s *Searcher, _ RequestID, _ ExitReason) []Action {
	if s.st.NextGrid >= g.size {
		return nil
	}
	return []Action{g.next(s)}
}

func (g gridSearch) progress(s *Searcher) float64 {
	done := 0.0
	for _, t := range s.st.Trials {
		if t.Exited {
			done++
		} else {
			done += t.Progress
		}
	}
	return done / float64(g.size)
}
