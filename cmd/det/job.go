package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) jobCmd() *cobra.Command {
	cmd := group("job", "Manage the job queue", "j")
	cmd.AddCommand(a.jobListCmd(), a.jobUpdateCmd(), a.jobUpdateBatchCmd())
	return cmd
}

func (a *app) jobListCmd() *cobra.Command {
	var lf listFlags
	var pool string
	cmd := &cobra.Command{
		Use:     "list [-p POOL]",
		Aliases: []string{"ls"},
		Short:   "List the jobs of the queue, in queue order (every pool, or one with -p)",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			jobs, err := s.JobQueue(cmd.Context(), pool)
			if err != nil {
				return err
			}
			return printList(a.stdout, lf, jobs, jobTable)
		},
	}
	cmd.Flags().StringVarP(&pool, "resource-pool", "p", "", "only the jobs of this resource pool")
	lf.add(cmd)
	return cmd
}

// jobTable prints the queue; # is the position in the job's pool, and a
// Resource Pool column appears when the jobs span more than one.
func jobTable(w io.Writer, jobs []resolute.Job) error {
	pools := map[string]int{}
	for _, j := range jobs {
		pools[j.ResourcePool]++
	}
	headers := []string{"#", "ID", "Type", "Job Name", "Priority", "Weight", "Submitted", "Slots (allocated/requested)", "State", "User", "Reason"}
	if len(pools) > 1 {
		headers = append(headers[:3:3], append([]string{"Resource Pool"}, headers[3:]...)...)
	}
	position := map[string]int{}
	rows := make([][]string, len(jobs))
	for i, j := range jobs {
		position[j.ResourcePool]++
		row := []string{strconv.Itoa(position[j.ResourcePool]), j.JobID, j.Type}
		if len(pools) > 1 {
			row = append(row, j.ResourcePool)
		}
		rows[i] = append(row, oneLine(j.Name), strconv.Itoa(j.Priority), strconv.FormatFloat(j.Weight, 'g', -1, 64),
			date(j.SubmissionTime), fmt.Sprintf("%d/%d", j.AllocatedSlots, j.RequestedSlots), j.State, j.Username, oneLine(j.Reason))
	}
	return table(w, headers, rows)
}

func (a *app) jobUpdateCmd() *cobra.Command {
	var priority int
	var weight float64
	var pool, aheadOf, behindOf string
	cmd := &cobra.Command{
		Use:     "update JOB_ID [--priority N] [--weight W] [--resource-pool P] [--ahead-of JOB | --behind-of JOB]",
		Aliases: []string{"u"},
		Short:   "Change a job's priority, weight or pool, or move it in its queue",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			u := resolute.QueueControl{JobID: argv[0], AheadOf: aheadOf, BehindOf: behindOf}
			f := cmd.Flags()
			if f.Changed("priority") {
				u.Priority = &priority
			}
			if f.Changed("weight") {
				u.Weight = &weight
			}
			if f.Changed("resource-pool") {
				u.ResourcePool = &pool
			}
			if u.Priority == nil && u.Weight == nil && u.ResourcePool == nil && u.AheadOf == "" && u.BehindOf == "" {
				return usageError{fmt.Errorf("nothing to change: give --priority, --weight, --resource-pool, --ahead-of or --behind-of\nRun '%s --help' for usage.", cmd.CommandPath())}
			}
			if u.AheadOf != "" && u.BehindOf != "" {
				return usageError{fmt.Errorf("give --ahead-of or --behind-of, not both")}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.UpdateJobQueue(cmd.Context(), []resolute.QueueControl{u}); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Updated job %s\n", u.JobID)
			return nil
		},
	}
	cmd.Flags().IntVar(&priority, "priority", 0, "new priority, 1 to 99")
	cmd.Flags().Float64Var(&weight, "weight", 0, "new weight, more than 0 (fair share)")
	cmd.Flags().StringVar(&pool, "resource-pool", "", "move the job to this resource pool")
	cmd.Flags().StringVar(&aheadOf, "ahead-of", "", "move the job just ahead of this job")
	cmd.Flags().StringVar(&behindOf, "behind-of", "", "move the job just behind this job")
	return cmd
}

func (a *app) jobUpdateBatchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "update-batch JOB_ID.FIELD=VALUE...",
		Short: "Change several jobs at once, e.g. experiment-3.priority=10 experiment-4.aheadOf=experiment-3",
		Long: "Change several jobs in one step: each argument is JOB_ID.FIELD=VALUE with FIELD one of\n" +
			"priority, weight, resourcePool, aheadOf or behindOf. Either every change applies or none.",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			updates, err := parseJobUpdates(argv)
			if err != nil {
				return usageError{err}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.UpdateJobQueue(cmd.Context(), updates); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Updated %d %s\n", len(updates), plural(len(updates), "job", "jobs"))
			return nil
		},
	}
}

// parseJobUpdates reads Determined's batch syntax, JOB_ID.FIELD=VALUE, one
// change per argument, in order.
func parseJobUpdates(items []string) ([]resolute.QueueControl, error) {
	var out []resolute.QueueControl
	for _, item := range items {
		job, op, ok := strings.Cut(item, ".")
		key, value, ok2 := strings.Cut(op, "=")
		if !ok || !ok2 || job == "" {
			return nil, fmt.Errorf("%q: expected JOB_ID.FIELD=VALUE, e.g. experiment-3.priority=10", item)
		}
		u := resolute.QueueControl{JobID: job}
		switch key {
		case "priority":
			p, err := strconv.Atoi(value)
			if err != nil {
				return nil, fmt.Errorf("%q: priority must be an integer, got %q", item, value)
			}
			u.Priority = &p
		case "weight":
			w, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return nil, fmt.Errorf("%q: weight must be a number, got %q", item, value)
			}
			u.Weight = &w
		case "resourcePool", "resource_pool":
			u.ResourcePool = &value
		case "aheadOf", "ahead_of":
			u.AheadOf = value
		case "behindOf", "behind_of":
			u.BehindOf = value
		default:
			return nil, fmt.Errorf("%q: unknown field %q; use priority, weight, resourcePool, aheadOf or behindOf", item, key)
		}
		out = append(out, u)
	}
	return out, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
