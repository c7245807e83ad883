package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

func (a *app) experimentCmd() *cobra.Command {
	cmd := group("experiment", "Manage experiments", "e")
	cmd.AddCommand(a.experimentCreateCmd(), a.experimentListCmd(), a.experimentDescribeCmd(),
		a.experimentConfigCmd(), a.experimentLogsCmd(),
		a.experimentActionCmd("activate", "Activated", "unpause"), a.experimentActionCmd("pause", "Paused"),
		a.experimentActionCmd("cancel", "Canceled"), a.experimentActionCmd("kill", "Killed"),
		a.experimentArchiveCmd("archive", true), a.experimentArchiveCmd("unarchive", false),
		a.experimentDeleteCmd(), a.experimentMoveCmd(), a.experimentListTrialsCmd(),
		a.experimentListCheckpointsCmd(), a.experimentDownloadCmd(), a.experimentModelDefCmd(),
		a.experimentWaitCmd(), a.experimentSetCmd(), a.experimentLabelCmd(),
		a.experimentForkCmd(), a.experimentContinueCmd(), a.experimentDeleteTBFilesCmd())
	return cmd
}

// parseID reads a positive numeric id given as an argument.
func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageError{fmt.Errorf("%s: expected a positive integer id, got %q", what, s)}
	}
	return id, nil
}

// capitalize makes the first letter of an ASCII word upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// percent renders progress (0 to 1) as Determined's tables do, and as the
// web UI writes the same number.
func percent(p float64) string { return resolute.FormatProgress(p) }

// metric renders a metric value, or "" for none.
func metric(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', 6, 64)
}

func endDate(t *time.Time) string {
	if t == nil {
		return ""
	}
	return date(*t)
}

func experimentTable(w io.Writer, list []resolute.Experiment) error {
	rows := make([][]string, len(list))
	for i, e := range list {
		rows[i] = []string{strconv.FormatInt(e.ID, 10), e.Username, oneLine(e.Name), e.State, percent(e.Progress),
			date(e.CreatedAt), endDate(e.EndedAt), strconv.Itoa(e.NumTrials), metric(e.BestValidation)}
	}
	return table(w, []string{"ID", "Owner", "Name", "State", "Progress", "Start Time", "End Time", "Trials", "Best"}, rows)
}

func trialTable(w io.Writer, list []resolute.Trial) error {
	rows := make([][]string, len(list))
	for i, t := range list {
		rows[i] = []string{strconv.FormatInt(t.ID, 10), t.State, oneLine(string(t.Hparams)),
			strconv.FormatInt(t.StepsCompleted, 10), metric(t.BestValidation), percent(t.Progress),
			date(t.CreatedAt), endDate(t.EndedAt)}
	}
	return table(w, []string{"Trial ID", "State", "H-Params", "# of Batches", "Best Validation", "Progress", "Start Time", "End Time"}, rows)
}

func (a *app) experimentListCmd() *cobra.Command {
	var all bool
	var lf listFlags
	var projectID int64
	cmd := &cobra.Command{
		Use: "list [--all]", Aliases: []string{"ls"}, Short: "List experiments", Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			list, err := s.Experiments(cmd.Context(), client.ExperimentFilter{ProjectID: projectID, Archived: unarchivedUnless(all),
				Limit: lf.limit, Offset: lf.offset})
			if err != nil {
				return err
			}
			if list == nil {
				list = []resolute.Experiment{}
			}
			if lf.asJSON {
				return printJSON(a.stdout, list)
			}
			return experimentTable(lf.out(a.stdout), list)
		},
	}
	lf.add(cmd)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include archived experiments")
	cmd.Flags().Int64Var(&projectID, "project-id", 0, "only the experiments of this project")
	return cmd
}

func (a *app) experimentDescribeCmd() *cobra.Command {
	var asJSON, csv, metrics bool
	var outdir string
	cmd := &cobra.Command{
		Use: "describe ID [--metrics] [--csv | --json] [--outdir DIR]", Short: "Show an experiment and its trials; --metrics, --csv or --outdir: Determined's tables",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			e, err := s.Experiment(cmd.Context(), id)
			if err != nil {
				return err
			}
			trials, err := s.ExperimentTrials(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, map[string]any{"experiment": e, "trials": trials})
			}
			if metrics || csv || outdir != "" {
				headers, rows, err := experimentTables(cmd.Context(), s, e, trials, metrics)
				if err != nil {
					return err
				}
				if outdir != "" {
					return writeDescribeCSVs(outdir, headers, rows, a.stderr)
				}
				for i, title := range []string{"Experiment:", "Trials:", "Workloads:"} {
					if i > 0 {
						fmt.Fprintln(a.stdout)
					}
					if !csv {
						fmt.Fprintln(a.stdout, title)
					}
					var err error
					if csv {
						err = writeCSV(a.stdout, headers[i], rows[i])
					} else {
						err = table(a.stdout, headers[i], rows[i])
					}
					if err != nil {
						return err
					}
				}
				return nil
			}
			m, smaller := searcherMetric(e)
			better := "larger"
			if smaller {
				better = "smaller"
			}
			err = fields(a.stdout, [][2]string{
				{"ID", strconv.FormatInt(e.ID, 10)}, {"Name", e.Name}, {"State", e.State},
				{"Progress", percent(e.Progress)}, {"Time left", timeLeft(e, time.Now())}, {"Owner", e.Username},
				{"Project", e.WorkspaceName + " / " + e.ProjectName}, {"Description", e.Description},
				{"Labels", strings.Join(e.Labels, ", ")}, {"Archived", yesNo(e.Archived)},
				{"Searcher metric", m + " (" + better + " is better)"}, {"Best validation", metric(e.BestValidation)},
				{"Start Time", date(e.CreatedAt)}, {"End Time", endDate(e.EndedAt)},
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "\nTrials:")
			return trialTable(a.stdout, trials)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&csv, "csv", false, "print Determined's experiment, trials and workloads tables as CSV")
	cmd.Flags().BoolVar(&metrics, "metrics", false, "add a column per training and validation metric to the workloads")
	cmd.Flags().StringVar(&outdir, "outdir", "", "write experiments.csv, trials.csv and workloads.csv into this directory instead")
	return cmd
}

func (a *app) experimentConfigCmd() *cobra.Command {
	var original bool
	cmd := &cobra.Command{
		Use: "config ID", Short: "Print an experiment's expanded config as YAML", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			expanded, submitted, err := s.ExperimentConfig(cmd.Context(), id)
			if err != nil {
				return err
			}
			if original {
				_, err = io.WriteString(a.stdout, submitted)
				return err
			}
			text, err := jsonToYAML(expanded)
			if err != nil {
				return err
			}
			_, err = io.WriteString(a.stdout, text)
			return err
		},
	}
	cmd.Flags().BoolVar(&original, "original", false, "print the YAML as it was submitted")
	return cmd
}

// jsonToYAML renders a JSON document as YAML, keys sorted, whole numbers
// without a decimal point.
func jsonToYAML(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(plainNumbers(v)); err != nil {
		return "", err
	}
	return buf.String(), enc.Close()
}

// plainNumbers turns json.Number into int64 or float64, which YAML writes
// as numbers rather than strings.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func (a *app) experimentLogsCmd() *cobra.Command {
	var lf logFlags
	cmd := &cobra.Command{
		Use: "logs ID [-f] [--head N | --tail N] [--level L]", Short: "Print the logs of an experiment's first trial", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("experiment", argv[0])
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
			trialID, err := a.firstTrial(cmd.Context(), s, id, lf.follow)
			if err != nil {
				return err
			}
			return lf.print(a, func(fn func(resolute.TaskLog) error) error { return s.TrialLogsQuery(cmd.Context(), trialID, q, fn) })
		},
	}
	lf.add(cmd, "wait for the first trial, then print new lines until it ends")
	return cmd
}

func (a *app) experimentActionCmd(action, done string, aliases ...string) *cobra.Command {
	return &cobra.Command{
		Use: action + " ID", Aliases: aliases, Short: capitalize(action) + " an experiment",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			if err := s.ExperimentAction(cmd.Context(), id, action); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s experiment %d\n", done, id)
			return nil
		},
	}
}

func (a *app) experimentArchiveCmd(verb string, archive bool) *cobra.Command {
	return &cobra.Command{
		Use: verb + " ID", Short: capitalize(verb) + " an experiment", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			if archive {
				err = s.ArchiveExperiment(cmd.Context(), id)
			} else {
				err = s.UnarchiveExperiment(cmd.Context(), id)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%sd experiment %d\n", capitalize(verb), id)
			return nil
		},
	}
}

func (a *app) experimentDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use: "delete ID [--yes]", Short: "Delete a finished experiment and everything it reported", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			if _, err := s.Experiment(cmd.Context(), id); err != nil {
				return err
			}
			if !yes {
				ok, err := a.confirm(fmt.Sprintf("Deleting experiment %d removes its logs, checkpoints and metrics for good; "+
					"`det experiment archive` hides it instead. Delete it?", id), "--yes")
				if err != nil || !ok {
					if err == nil {
						fmt.Fprintln(a.stderr, "Aborting deletion of experiment.")
					}
					return err
				}
			}
			if err := s.DeleteExperiment(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Successfully deleted experiment %d.\n", id)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

func (a *app) experimentMoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "move ID (PROJECT_ID | WORKSPACE_NAME PROJECT_NAME)",
		Short: "Move an experiment to another project", Args: args(cobra.RangeArgs(2, 3)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			p, err := findProject(cmd.Context(), s, argv[1:])
			if err != nil {
				return err
			}
			if err := s.MoveExperiment(cmd.Context(), id, p.ID); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Moved experiment %d to project %q of workspace %q\n", id, p.Name, p.WorkspaceName)
			return nil
		},
	}
}

func (a *app) experimentListTrialsCmd() *cobra.Command {
	var lf listFlags
	cmd := &cobra.Command{
		Use: "list-trials ID", Aliases: []string{"lt"}, Short: "List an experiment's trials", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			trials, err := s.ExperimentTrials(cmd.Context(), id)
			if err != nil {
				return err
			}
			return printList(a.stdout, lf, trials, trialTable)
		},
	}
	lf.add(cmd)
	return cmd
}

// timeLeft is the experiment's estimated time left, as the web UI shows it;
// "" when there is none.
func timeLeft(e resolute.Experiment, now time.Time) string {
	if d, ok := e.TimeLeft(now); ok {
		return resolute.FormatTimeLeft(d)
	}
	return ""
}
