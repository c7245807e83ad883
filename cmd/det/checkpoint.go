package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) checkpointCmd() *cobra.Command {
	cmd := group("checkpoint", "Inspect and download checkpoints", "c")
	cmd.AddCommand(a.checkpointDescribeCmd(), a.checkpointDownloadCmd(), a.checkpointDeleteCmd())
	return cmd
}

// searcherMetric reads the searcher's metric of an experiment's expanded
// config and whether smaller values are better (Determined's default).
func searcherMetric(e resolute.Experiment) (string, bool) {
	var cfg struct {
		Searcher struct {
			Metric          string `json:"metric"`
			SmallerIsBetter *bool  `json:"smaller_is_better"`
		} `json:"searcher"`
	}
	json.Unmarshal(e.Config, &cfg)
	smaller := cfg.Searcher.SmallerIsBetter == nil || *cfg.Searcher.SmallerIsBetter
	return cfg.Searcher.Metric, smaller
}

// checkpointMetric is a checkpoint's value of a validation metric.
func checkpointMetric(c resolute.Checkpoint, name string) (float64, bool) {
	var v struct {
		AvgMetrics map[string]any `json:"avg_metrics"`
	}
	if len(c.Validation) == 0 || json.Unmarshal(c.Validation, &v) != nil {
		return 0, false
	}
	f, ok := v.AvgMetrics[name].(float64)
	return f, ok
}

// bestCheckpoints returns up to n completed checkpoints with a value of
// metric, best first. With perTrial only each trial's best one competes,
// as Determined's top_n_checkpoints does.
func bestCheckpoints(list []resolute.Checkpoint, metric string, smaller bool, n int, perTrial bool) []resolute.Checkpoint {
	type scored struct {
		c resolute.Checkpoint
		v float64
	}
	better := func(x, y scored) bool {
		if x.v != y.v {
			return (x.v < y.v) == smaller
		}
		return x.c.StepsCompleted > y.c.StepsCompleted
	}
	var cands []scored
	best := map[int64]int{} // trial id → index in cands
	for _, c := range list {
		v, ok := checkpointMetric(c, metric)
		if !ok || c.State != "COMPLETED" {
			continue
		}
		s := scored{c, v}
		if i, seen := best[c.TrialID]; perTrial && seen {
			if better(s, cands[i]) {
				cands[i] = s
			}
			continue
		}
		best[c.TrialID] = len(cands)
		cands = append(cands, s)
	}
	sort.SliceStable(cands, func(i, j int) bool { return better(cands[i], cands[j]) })
	out := make([]resolute.Checkpoint, 0, min(n, len(cands)))
	for _, s := range cands[:min(n, len(cands))] {
		out = append(out, s.c)
	}
	return out
}

func checkpointTable(w io.Writer, list []resolute.Checkpoint, metric string) error {
	rows := make([][]string, len(list))
	for i, c := range list {
		v := ""
		if f, ok := checkpointMetric(c, metric); ok {
			v = strconv.FormatFloat(f, 'g', 6, 64)
		}
		rows[i] = []string{strconv.FormatInt(c.TrialID, 10), strconv.FormatInt(c.StepsCompleted, 10), c.State, v,
			c.UUID, strconv.Itoa(len(c.Resources)), humanBytes(c.Size)}
	}
	return table(w, []string{"Trial ID", "# of Batches", "State", "Validation Metric", "UUID", "Files", "Size"}, rows)
}

func (a *app) experimentListCheckpointsCmd() *cobra.Command {
	var lf listFlags
	var best int
	cmd := &cobra.Command{
		Use: "list-checkpoints ID [--best N]", Aliases: []string{"lc"}, Short: "List an experiment's checkpoints",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			e, err := s.Experiment(cmd.Context(), id)
			if err != nil {
				return err
			}
			list, err := s.ExperimentCheckpoints(cmd.Context(), id)
			if err != nil {
				return err
			}
			m, smaller := searcherMetric(e)
			if cmd.Flags().Changed("best") {
				if best < 0 {
					return usageError{fmt.Errorf("--best must not be negative, got %d", best)}
				}
				list = bestCheckpoints(list, m, smaller, best, false)
			}
			return printList(a.stdout, lf, list, func(w io.Writer, l []resolute.Checkpoint) error { return checkpointTable(w, l, m) })
		},
	}
	cmd.Flags().IntVar(&best, "best", 0, "only the N best checkpoints by the searcher's metric")
	lf.add(cmd)
	return cmd
}

func (a *app) experimentDownloadCmd() *cobra.Command {
	var outDir string
	var topN int
	cmd := &cobra.Command{
		Use:   "download ID [-o DIR] [--top-n N]",
		Short: "Download the best checkpoint of each of the N best trials into DIR/<uuid>",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("experiment", argv[0])
			if err != nil {
				return err
			}
			if topN < 1 {
				return usageError{fmt.Errorf("--top-n must be at least 1, got %d", topN)}
			}
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			e, err := s.Experiment(ctx, id)
			if err != nil {
				return err
			}
			list, err := s.ExperimentCheckpoints(ctx, id)
			if err != nil {
				return err
			}
			m, smaller := searcherMetric(e)
			best := bestCheckpoints(list, m, smaller, topN, true)
			if len(best) == 0 {
				return fmt.Errorf("experiment %d has no completed checkpoint with a validation of %s", id, m)
			}
			for _, c := range best {
				dir := filepath.Join(outDir, c.UUID)
				if err := s.DownloadCheckpoint(ctx, c.UUID, dir); err != nil {
					return err
				}
				v, _ := checkpointMetric(c, m)
				fmt.Fprintf(a.stdout, "Downloaded checkpoint %s of trial %d (%s = %g) to %s\n", c.UUID, c.TrialID, m, v, dir)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&outDir, "output-dir", "o", "checkpoints", "directory to download into")
	cmd.Flags().IntVar(&topN, "top-n", 1, "how many of the best trials to download a checkpoint of")
	return cmd
}

func (a *app) experimentModelDefCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "download-model-def ID [-o FILE]",
		Short: "Download an experiment's context directory as experiment_<id>.tar.gz",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("experiment", argv[0])
			if err != nil {
				return err
			}
			if out == "" {
				out = fmt.Sprintf("experiment_%d.tar.gz", id)
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			f, err := os.CreateTemp(filepath.Dir(out), ".det-model-def-*")
			if err != nil {
				return err
			}
			defer os.Remove(f.Name())
			if err := s.ModelDef(cmd.Context(), id, f); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			if err := os.Rename(f.Name(), out); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Wrote the model definition of experiment %d to %s\n", id, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default experiment_<id>.tar.gz)")
	return cmd
}

func (a *app) checkpointDescribeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "describe UUID", Short: "Show a checkpoint", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			c, err := s.Checkpoint(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, c)
			}
			return describeCheckpoint(a.stdout, c)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func describeCheckpoint(w io.Writer, c resolute.Checkpoint) error {
	files := make([]string, 0, len(c.Resources))
	for name := range c.Resources {
		files = append(files, name)
	}
	sort.Strings(files)
	list := ""
	for _, f := range files {
		list += fmt.Sprintf("%s (%s)\n", f, humanBytes(c.Resources[f]))
	}
	return fields(w, [][2]string{
		{"UUID", c.UUID}, {"Experiment ID", strconv.FormatInt(c.ExperimentID, 10)},
		{"Trial ID", strconv.FormatInt(c.TrialID, 10)}, {"# of Batches", strconv.FormatInt(c.StepsCompleted, 10)},
		{"State", c.State}, {"Report Time", date(c.ReportTime)}, {"Size", humanBytes(c.Size)},
		{"Validation", string(c.Validation)}, {"Metadata", string(c.Metadata)}, {"Files", list},
	})
}

func (a *app) checkpointDownloadCmd() *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use: "download UUID [-o DIR]", Short: "Download a checkpoint's files (default: checkpoints/<uuid>)",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			return a.downloadCheckpoint(cmd.Context(), s, argv[0], outDir)
		},
	}
	cmd.Flags().StringVarP(&outDir, "output-dir", "o", "", "directory to download into (default checkpoints/<uuid>)")
	return cmd
}

// downloadCheckpoint downloads one checkpoint into dir (default
// checkpoints/<uuid>) and says where it is, as Determined does.
func (a *app) downloadCheckpoint(ctx context.Context, s *session, uuid, dir string) error {
	if dir == "" {
		dir = filepath.Join("checkpoints", uuid)
	}
	if err := s.DownloadCheckpoint(ctx, uuid, dir); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Local checkpoint path:\n%s\n", dir)
	return nil
}

func (a *app) checkpointDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use: "delete UUID... [--yes]", Short: "Delete checkpoints and their files",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if !yes {
				ok, err := a.confirm(fmt.Sprintf("Delete %d checkpoint(s) and their files? This cannot be undone.", len(argv)), "--yes")
				if err != nil || !ok {
					if err == nil {
						fmt.Fprintln(a.stderr, "Aborting deletion of checkpoints.")
					}
					return err
				}
			}
			if err := s.DeleteCheckpoints(cmd.Context(), argv); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Deletion of %d checkpoint(s) started: a checkpoint GC task deletes their files.\n", len(argv))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}
