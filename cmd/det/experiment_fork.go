package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

// experimentForkCmd is `det experiment fork ID`: a new experiment from an
// old one's config and context, with the edits given.
func (a *app) experimentForkCmd() *cobra.Command {
	return a.forkLike("fork ID", "Create an experiment from another's config and code, optionally edited", false)
}

// experimentContinueCmd is `det experiment continue ID`: like fork, and its
// trials start from the best trial's latest checkpoint (a warm start).
func (a *app) experimentContinueCmd() *cobra.Command {
	return a.forkLike("continue ID", "Continue training from an experiment's best trial, as a new experiment", true)
}

func (a *app) forkLike(use, short string, warm bool) *cobra.Command {
	var configFile string
	var overrides []string
	var paused bool
	cmd := &cobra.Command{
		Use: use, Short: short, Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("experiment", argv[0])
			if err != nil {
				return err
			}
			req := resolute.CreateExperimentRequest{ParentID: id}
			if configFile != "" {
				data, err := a.readFile(configFile)
				if err != nil {
					return err
				}
				req.Config = string(data)
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if warm {
				parent, err := s.Experiment(cmd.Context(), id)
				if err != nil {
					return err
				}
				trials, err := s.ExperimentTrials(cmd.Context(), id)
				if err != nil {
					return err
				}
				best := bestTrial(trials, parent.BestValidation)
				if best == nil {
					return fmt.Errorf("experiment %d has no trial with a checkpoint to continue from", id)
				}
				overrides = append(overrides, fmt.Sprintf("searcher.source_trial_id=%d", best.ID))
			}
			req.Overrides = overrides
			if paused {
				req.Activate = new(bool)
			}
			resp, err := s.CreateExperiment(cmd.Context(), req, nil, 0, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Created experiment %d\n", resp.Experiment.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config-file", "", "a config to use instead of the parent's")
	cmd.Flags().StringArrayVar(&overrides, "config", nil, "override a key: --config hyperparameters.lr=0.1 (repeatable)")
	cmd.Flags().BoolVar(&paused, "paused", false, "create it paused")
	return cmd
}

// bestTrial is the trial holding the experiment's best validation (the
// master keeps it in the searcher's direction) among those with a
// checkpoint; without one, the trial with the most steps.
func bestTrial(trials []resolute.Trial, expBest *float64) *resolute.Trial {
	var best *resolute.Trial
	for i := range trials {
		t := &trials[i]
		if t.LatestCheckpoint == "" {
			continue
		}
		if expBest != nil && t.BestValidation != nil && *t.BestValidation == *expBest {
			return t
		}
		if best == nil || t.StepsCompleted > best.StepsCompleted {
			best = t
		}
	}
	return best
}
