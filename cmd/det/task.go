package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

// taskKind is one kind of interactive task as the CLI names it.
type taskKind struct {
	typ  string // resolute.TaskCommand...
	noun string // "command", as messages name one
}

var (
	commandKind     = taskKind{resolute.TaskCommand, "command"}
	notebookKind    = taskKind{resolute.TaskNotebook, "notebook"}
	shellKind       = taskKind{resolute.TaskShell, "shell"}
	tensorboardKind = taskKind{resolute.TaskTensorBoard, "TensorBoard"}
	// anyKind is `det task`: every type.
	anyKind = taskKind{"", "task"}
)

// plural is the kind's noun for lists: "commands".
func (k taskKind) plural() string { return k.noun + "s" }

// taskCmd is `det task`: every command, notebook, shell and TensorBoard.
func (a *app) taskCmd() *cobra.Command {
	cmd := group("task", "List the tasks of every type and print their logs")
	cmd.AddCommand(a.taskListCmd(anyKind), a.taskLogsCmd(anyKind), a.taskTunnelCmd(), a.taskOpenPortCmd(), a.taskCleanupLogsCmd())
	return cmd
}

// shellCmd is `det shell`; start and open come with the terminal.
func (a *app) shellCmd() *cobra.Command {
	cmd := group("shell", "Manage shells")
	cmd.AddCommand(a.shellTerminalCmds()...)
	a.addTaskVerbs(cmd, shellKind)
	return cmd
}

// addTaskVerbs adds list, describe, logs, kill and set priority.
func (a *app) addTaskVerbs(cmd *cobra.Command, k taskKind) {
	set := group("set", "Change a "+k.noun)
	set.AddCommand(a.taskSetPriorityCmd(k))
	cmd.AddCommand(a.taskListCmd(k), a.taskDescribeCmd(k), a.taskLogsCmd(k), a.taskKillCmd(k), set)
}

func (a *app) taskListCmd(k taskKind) *cobra.Command {
	var all bool
	var lf listFlags
	cmd := &cobra.Command{
		Use: "list [--all] [--json]", Aliases: []string{"ls"}, Args: args(cobra.NoArgs),
		Short: "List the live " + k.plural() + " of every user (with --all, those that ended too)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			list, err := s.Tasks(cmd.Context(), k.typ, all)
			if err != nil {
				return err
			}
			return printList(a.stdout, lf, list, func(w io.Writer, l []resolute.Task) error { return taskTable(w, l, k.typ == "") })
		},
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "also list the "+k.plural()+" that ended")
	lf.add(cmd)
	return cmd
}

// taskTable prints tasks as `det cmd list` does; withType adds the Type
// column for lists of every type.
func taskTable(w io.Writer, list []resolute.Task, withType bool) error {
	headers := []string{"ID", "Owner", "Description", "State", "Ready", "Slots", "Resource Pool", "Start Time", "Exit Status"}
	if withType {
		headers = append(headers[:1:1], append([]string{"Type"}, headers[1:]...)...)
	}
	rows := make([][]string, len(list))
	for i, t := range list {
		row := []string{t.ID}
		if withType {
			row = append(row, t.Type)
		}
		rows[i] = append(row, t.Username, oneLine(t.Description), t.State, yesNo(t.Ready), strconv.Itoa(t.Slots),
			t.ResourcePool, date(t.CreatedAt), exitStatusText(t))
	}
	return table(w, headers, rows)
}

// exitStatusText is how a task ended: its exit code, or why it ended
// without one ("killed"); "" while it runs.
func exitStatusText(t resolute.Task) string {
	if t.ExitCode != nil {
		return strconv.Itoa(*t.ExitCode)
	}
	return t.EndReason
}

func (a *app) taskDescribeCmd(k taskKind) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "describe ID [--json]", Short: "Show a " + k.noun + " with its expanded config", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			t, err := s.Task(cmd.Context(), k.typ, argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, t)
			}
			return describeTask(a.stdout, t, a.master)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func describeTask(w io.Writer, t resolute.Task, master string) error {
	priority := "pool default"
	if t.Priority != nil {
		priority = strconv.Itoa(*t.Priority)
	}
	address := ""
	if t.ServiceAddress != "" {
		address = master + t.ServiceAddress
	}
	config, err := jsonToYAML(t.Config)
	if err != nil {
		config = string(t.Config)
	}
	return fields(w, [][2]string{
		{"ID", t.ID}, {"Type", t.Type}, {"Description", t.Description}, {"State", t.State}, {"Ready", yesNo(t.Ready)},
		{"Owner", t.Username}, {"Resource Pool", t.ResourcePool}, {"Priority", priority}, {"Slots", strconv.Itoa(t.Slots)},
		{"Address", address}, {"Start Time", date(t.CreatedAt)}, {"End Time", endDate(t.EndedAt)},
		{"Exit Status", exitStatusText(t)}, {"Config", config},
	})
}

func (a *app) taskLogsCmd(k taskKind) *cobra.Command {
	var lf logFlags
	cmd := &cobra.Command{
		Use: "logs ID [-f] [--head N | --tail N] [--level L]", Short: "Print a " + k.noun + "'s logs", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			q, err := lf.query()
			if err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			// Check the kind first: `det notebook logs command-3` is a mistake.
			if _, err := s.Task(cmd.Context(), k.typ, argv[0]); err != nil {
				return err
			}
			return lf.print(a, func(fn func(resolute.TaskLog) error) error { return s.TaskLogsQuery(cmd.Context(), argv[0], q, fn) })
		},
	}
	lf.add(cmd, "print new lines until the "+k.noun+" ends")
	return cmd
}

func (a *app) taskKillCmd(k taskKind) *cobra.Command {
	return &cobra.Command{
		Use: "kill ID", Short: "Stop a " + k.noun + " (a running one gets SIGTERM, then SIGKILL)", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.KillTask(cmd.Context(), k.typ, argv[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Killed %s %s\n", k.noun, argv[0])
			return nil
		},
	}
}

func (a *app) taskSetPriorityCmd(k taskKind) *cobra.Command {
	return &cobra.Command{
		Use: "priority ID PRIORITY", Short: "Change a " + k.noun + "'s priority in its pool's queue", Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			p, err := strconv.Atoi(argv[1])
			if err != nil {
				return usageError{fmt.Errorf("priority: expected an integer, got %q", argv[1])}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.SetTaskPriority(cmd.Context(), k.typ, argv[0], p); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Set priority of %s %s to %d\n", k.noun, argv[0], p)
			return nil
		},
	}
}

// printTaskOutput writes a line of a task's log as the program printed
// it: its own output to stdout, the master's notes to stderr.
func (a *app) printTaskOutput(l resolute.TaskLog) error {
	w := a.stdout
	if l.Source == "master" {
		w = a.stderr
	}
	_, err := io.WriteString(w, strings.TrimRight(l.Log, "\n")+"\n")
	return err
}
