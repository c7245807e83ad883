package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) trialCmd() *cobra.Command {
	cmd := group("trial", "Inspect and kill trials", "t")
	cmd.AddCommand(a.trialDescribeCmd(), a.trialLogsCmd(), a.trialKillCmd(), a.trialDownloadCmd())
	return cmd
}

// metricsText renders a report's metrics as "name=value" pairs, sorted.
func metricsText(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	// Validation and training reports nest their averages.
	if avg, ok := m["avg_metrics"].(map[string]any); ok {
		m = avg
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := m[k]
		if f, ok := v.(float64); ok {
			parts[i] = k + "=" + strconv.FormatFloat(f, 'g', 6, 64)
		} else {
			b, _ := json.Marshal(v)
			parts[i] = k + "=" + string(b)
		}
	}
	return strings.Join(parts, " ")
}

func describeTrial(w io.Writer, tr resolute.TrialResponse) error {
	t := tr.Trial
	err := fields(w, [][2]string{
		{"Trial ID", strconv.FormatInt(t.ID, 10)}, {"Experiment ID", strconv.FormatInt(t.ExperimentID, 10)},
		{"State", t.State}, {"H-Params", string(t.Hparams)}, {"# of Batches", strconv.FormatInt(t.StepsCompleted, 10)},
		{"Progress", percent(t.Progress)}, {"Best Validation", metric(t.BestValidation)},
		{"Latest Checkpoint", t.LatestCheckpoint}, {"Restarts", strconv.Itoa(t.Restarts)},
		{"Start Time", date(t.CreatedAt)}, {"End Time", endDate(t.EndedAt)},
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\nLatest Metrics:")
	rows := make([][]string, len(tr.LatestMetrics))
	for i, m := range tr.LatestMetrics {
		rows[i] = []string{m.Group, strconv.FormatInt(m.StepsCompleted, 10), metricsText(m.Metrics), date(m.ReportedAt)}
	}
	return table(w, []string{"Group", "# of Batches", "Metrics", "Report Time"}, rows)
}

func (a *app) trialDescribeCmd() *cobra.Command {
	var asJSON, csv, metrics bool
	cmd := &cobra.Command{
		Use: "describe ID [--metrics] [--csv | --json]", Short: "Show a trial with its latest metrics; --metrics: every report", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("trial", argv[0])
			if err != nil {
				return err
			}
			if asJSON && csv {
				return usageError{errors.New("--json and --csv: give one")}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			tr, err := s.Trial(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON && !metrics {
				return printJSON(a.stdout, tr)
			}
			if !metrics && !csv {
				return describeTrial(a.stdout, tr)
			}
			ws, err := trialWorkloads(cmd.Context(), s, id)
			if err != nil {
				return err
			}
			headers, rows := workloadTable(ws, metrics)
			if asJSON {
				out := make([]map[string]string, len(rows))
				for i, r := range rows {
					out[i] = map[string]string{}
					for j, h := range headers {
						if r[j] != "" {
							out[i][h] = r[j]
						}
					}
				}
				return printJSON(a.stdout, map[string]any{"trial": tr.Trial, "workloads": out})
			}
			if csv {
				return writeCSV(a.stdout, headers, rows)
			}
			if err := describeTrial(a.stdout, tr); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "\nWorkloads:")
			return table(a.stdout, headers, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&csv, "csv", false, "print the workloads (a row a step) as CSV")
	cmd.Flags().BoolVar(&metrics, "metrics", false, "display full metrics, such as batch metrics: every report, a column per metric")
	return cmd
}

func (a *app) trialLogsCmd() *cobra.Command {
	var lf logFlags
	cmd := &cobra.Command{
		Use: "logs ID [-f] [--head N | --tail N] [--level L] [--rank-id R]...", Short: "Print a trial's logs", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("trial", argv[0])
			if err != nil {
				return err
			}
			q, err := lf.query()
			if err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			return lf.print(a, func(fn func(resolute.TaskLog) error) error { return s.TrialLogsQuery(cmd.Context(), id, q, fn) })
		},
	}
	lf.add(cmd, "follow the logs of a running trial, similar to tail -f")
	return cmd
}

func (a *app) trialKillCmd() *cobra.Command {
	return &cobra.Command{
		Use: "kill ID", Short: "Kill a trial", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "trial", argv[0])
			if err != nil {
				return err
			}
			if err := s.KillTrial(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Killed trial %d\n", id)
			return nil
		},
	}
}

func (a *app) trialDownloadCmd() *cobra.Command {
	var best, latest bool
	var uuid, outDir string
	cmd := &cobra.Command{
		Use:   "download ID (--best | --latest | --uuid UUID) [-o DIR]",
		Short: "Download one of a trial's checkpoints (default: checkpoints/<uuid>)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("trial", argv[0])
			if err != nil {
				return err
			}
			chosen := 0
			for _, b := range []bool{best, latest, uuid != ""} {
				if b {
					chosen++
				}
			}
			if chosen != 1 {
				return usageError{errors.New("give exactly one of --best, --latest and --uuid")}
			}
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			if uuid == "" {
				if uuid, err = a.pickTrialCheckpoint(cmd, s, id, best); err != nil {
					return err
				}
			}
			return a.downloadCheckpoint(ctx, s, uuid, outDir)
		},
	}
	cmd.Flags().BoolVar(&best, "best", false, "the checkpoint with the best validation of the searcher's metric")
	cmd.Flags().BoolVar(&latest, "latest", false, "the latest checkpoint")
	cmd.Flags().StringVar(&uuid, "uuid", "", "the checkpoint with this UUID")
	cmd.Flags().StringVarP(&outDir, "output-dir", "o", "", "directory to download into (default checkpoints/<uuid>)")
	return cmd
}

// pickTrialCheckpoint finds a trial's best or latest completed checkpoint.
func (a *app) pickTrialCheckpoint(cmd *cobra.Command, s *session, trialID int64, best bool) (string, error) {
	ctx := cmd.Context()
	list, err := s.TrialCheckpoints(ctx, trialID)
	if err != nil {
		return "", err
	}
	if best {
		tr, err := s.Trial(ctx, trialID)
		if err != nil {
			return "", err
		}
		e, err := s.Experiment(ctx, tr.Trial.ExperimentID)
		if err != nil {
			return "", err
		}
		m, smaller := searcherMetric(e)
		top := bestCheckpoints(list, m, smaller, 1, false)
		if len(top) == 0 {
			return "", fmt.Errorf("trial %d has no completed checkpoint with a validation of %s", trialID, m)
		}
		return top[0].UUID, nil
	}
	var latest *resolute.Checkpoint
	for i, c := range list {
		if c.State == "COMPLETED" && (latest == nil || c.StepsCompleted > latest.StepsCompleted ||
			c.StepsCompleted == latest.StepsCompleted && c.ReportTime.After(latest.ReportTime)) {
			latest = &list[i]
		}
	}
	if latest == nil {
		return "", fmt.Errorf("trial %d has no completed checkpoint", trialID)
	}
	return latest.UUID, nil
}
