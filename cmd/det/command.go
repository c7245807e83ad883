package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

// exitStatus ends det with a command's own exit status; what to say was
// said already.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(e.code) }

// openBrowser shows a URL in the desktop's browser; tests replace it.
var openBrowser = func(url string) error {
	return exec.Command("xdg-open", url).Start()
}

// taskPoll is how often det looks at a task it waits for.
var taskPoll = 500 * time.Millisecond

// launchFlags are the flags every launching verb shares.
type launchFlags struct {
	configFile string
	overrides  []string
	contextDir string
	template   string
	detach     bool
	noBrowser  bool
}

func (f *launchFlags) add(cmd *cobra.Command, k taskKind, context, browser bool) {
	cmd.Flags().StringVar(&f.configFile, "config-file", "", "YAML config of the "+k.noun)
	cmd.Flags().StringArrayVar(&f.overrides, "config", nil, "set a config key: --config resources.slots=0 (repeatable)")
	cmd.Flags().StringVar(&f.template, "template", "", "configuration template to merge under the config")
	cmd.Flags().BoolVarP(&f.detach, "detach", "d", false, "print the "+k.noun+"'s ID and return at once")
	if context {
		cmd.Flags().StringVarP(&f.contextDir, "context", "c", "", "directory to upload as the "+k.noun+"'s working directory (.detignore applies)")
	}
	if browser {
		cmd.Flags().BoolVar(&f.noBrowser, "no-browser", false, "do not open the "+k.noun+" in a browser")
	}
}

func (a *app) commandCmd() *cobra.Command {
	cmd := group("command", "Run commands on the cluster", "cmd")
	cmd.AddCommand(a.commandRunCmd())
	a.addTaskVerbs(cmd, commandKind)
	return cmd
}

func (a *app) notebookCmd() *cobra.Command {
	cmd := group("notebook", "Start and manage Jupyter notebooks")
	cmd.AddCommand(a.serviceStartCmd(notebookKind), a.serviceOpenCmd(notebookKind))
	a.addTaskVerbs(cmd, notebookKind)
	return cmd
}

func (a *app) tensorboardCmd() *cobra.Command {
	cmd := group("tensorboard", "Start and manage TensorBoards")
	cmd.AddCommand(a.serviceStartCmd(tensorboardKind), a.serviceOpenCmd(tensorboardKind))
	a.addTaskVerbs(cmd, tensorboardKind)
	return cmd
}

// launch packs the context and creates the task.
// The request's config, template, overrides and context come from f.
func (a *app) launch(ctx context.Context, k taskKind, f launchFlags, req resolute.CreateTaskRequest) (*session, resolute.Task, error) {
	req.TemplateName, req.Overrides = f.template, append(req.Overrides, f.overrides...)
	if f.configFile != "" {
		config, err := a.readFile(f.configFile)
		if err != nil {
			return nil, resolute.Task{}, err
		}
		req.Config = string(config)
	}
	if f.contextDir != "" {
		if fi, err := os.Stat(f.contextDir); err != nil {
			return nil, resolute.Task{}, err
		} else if !fi.IsDir() {
			return nil, resolute.Task{}, usageError{fmt.Errorf("--context: %s is not a directory", f.contextDir)}
		}
		tgz, _, err := a.packContext(f.contextDir, nil)
		if err != nil {
			return nil, resolute.Task{}, err
		}
		defer os.Remove(tgz.Name())
		defer tgz.Close()
		if req.ContextTgz, err = io.ReadAll(tgz); err != nil {
			return nil, resolute.Task{}, err
		}
	}
	s, err := a.login(ctx)
	if err != nil {
		return nil, resolute.Task{}, err
	}
	t, err := s.CreateTask(ctx, k.typ, req)
	return s, t, err
}

func (a *app) commandRunCmd() *cobra.Command {
	var f launchFlags
	cmd := &cobra.Command{
		Use:   "run [--config-file F] [--config K=V]... [-c DIR] [--template T] [-d] ENTRYPOINT...",
		Short: "Run a command on the cluster and print its output until it ends",
		Long: "Run a command on the cluster. Without -d, det prints the command's output until it ends\n" +
			"and exits with its exit status. With one argument the command runs through sh -c;\n" +
			"flags after the entrypoint belong to it: det cmd run sh -c 'exit 3'.",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			s, t, err := a.launch(ctx, commandKind, f, resolute.CreateTaskRequest{Entrypoint: entrypointOf(argv)})
			if err != nil {
				return err
			}
			if f.detach {
				fmt.Fprintln(a.stdout, t.ID)
				return nil
			}
			id := t.ID
			fmt.Fprintf(a.stderr, "Launched command %s\n", id)
			if err := s.TaskLogs(ctx, id, true, a.printTaskOutput); err != nil {
				return err
			}
			t, err = a.waitTask(ctx, s, commandKind, id, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
			if err != nil {
				if ctx.Err() != nil {
					fmt.Fprintf(a.stderr, "Command %s keeps running; follow it with: det cmd logs -f %s\n", id, id)
				}
				return err
			}
			switch {
			case t.ExitCode == nil:
				return fmt.Errorf("command %s ended without an exit status: %s", t.ID, t.EndReason)
			case *t.ExitCode != 0:
				fmt.Fprintf(a.stderr, "Command %s exited with status %d\n", t.ID, *t.ExitCode)
				return exitStatus{*t.ExitCode}
			}
			return nil
		},
	}
	// Everything after the entrypoint's first word is the entrypoint's.
	cmd.Flags().SetInterspersed(false)
	f.add(cmd, commandKind, true, false)
	return cmd
}

// entrypointOf is the entrypoint of `det cmd run ARGS...`: the arguments
// as they are, but one argument that needs a shell ('echo $HOME; ls')
// runs through sh -c.
func entrypointOf(argv []string) []string {
	if len(argv) == 1 && strings.ContainsAny(argv[0], " \t\n;|&$<>()*?'\"`~") {
		return []string{"sh", "-c", argv[0]}
	}
	return argv
}

// waitTask polls a task until done says it is as wanted.
func (a *app) waitTask(ctx context.Context, s *session, k taskKind, id string, done func(resolute.Task) bool) (resolute.Task, error) {
	for {
		t, err := s.Task(ctx, k.typ, id)
		if err != nil || done(t) {
			return t, err
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(taskPoll):
		}
	}
}

func (a *app) serviceStartCmd(k taskKind) *cobra.Command {
	var f launchFlags
	var trials []int64
	cmd := &cobra.Command{
		Use:   "start [--config-file F] [--config K=V]... [-c DIR] [--template T] [--no-browser] [-d]",
		Short: "Start a " + k.noun + ", wait until it serves, and open it in a browser",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			var req resolute.CreateTaskRequest
			if k == tensorboardKind {
				var err error
				if req.ExperimentIDs, err = tensorboardExperiments(argv, trials); err != nil {
					return err
				}
				req.TrialIDs = trials
			}
			s, t, err := a.launch(ctx, k, f, req)
			if err != nil {
				return err
			}
			if f.detach {
				fmt.Fprintln(a.stdout, t.ID)
				return nil
			}
			fmt.Fprintf(a.stderr, "Launched %s %s; waiting for it to be ready...\n", k.noun, t.ID)
			t, err = a.waitTask(ctx, s, k, t.ID, func(t resolute.Task) bool { return t.Ready || t.State == resolute.TaskTerminated })
			if err != nil {
				return err
			}
			if !t.Ready {
				return fmt.Errorf("%s %s ended before it was ready (%s); see its logs with: det %s logs %s",
					k.noun, t.ID, exitStatusText(t), strings.ToLower(k.noun), t.ID)
			}
			return a.openService(ctx, s, k, t, f.noBrowser)
		},
	}
	if k == tensorboardKind {
		cmd.Use = "start EXPERIMENT_ID... [-t TRIAL_ID]... [--config K=V]... [--no-browser] [-d]"
		cmd.Short = "Start a TensorBoard of experiments and trials, wait until it serves, and open it"
		cmd.Long = "Start a TensorBoard over the TensorBoard files that experiments' trials keep in\n" +
			"checkpoint storage (core_context.train.get_tensorboard_path()): all trials of each\n" +
			"EXPERIMENT_ID, and each trial given with -t."
		cmd.Args = args(cobra.ArbitraryArgs)
		cmd.Flags().Int64SliceVarP(&trials, "trial-ids", "t", nil, "trial IDs (repeatable, or comma-separated)")
	}
	f.add(cmd, k, k != tensorboardKind, true)
	return cmd
}

// tensorboardExperiments parses the experiment IDs of `det tensorboard
// start`; with the trial IDs there must be at least one.
func tensorboardExperiments(experiments []string, trials []int64) ([]int64, error) {
	if len(experiments) == 0 && len(trials) == 0 {
		return nil, usageError{fmt.Errorf("name at least one experiment ID or trial ID (-t)")}
	}
	ids := make([]int64, len(experiments))
	for i, e := range experiments {
		id, err := parseID("experiment", e)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

func (a *app) serviceOpenCmd(k taskKind) *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use: "open ID [--no-browser]", Short: "Print a " + k.noun + "'s address and open it in a browser", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			t, err := s.Task(cmd.Context(), k.typ, argv[0])
			if err != nil {
				return err
			}
			if t.State == resolute.TaskTerminated {
				return fmt.Errorf("%s %s has ended (%s)", k.noun, t.ID, exitStatusText(t))
			}
			if !t.Ready {
				fmt.Fprintf(a.stderr, "Warning: %s %s is not ready yet (%s)\n", k.noun, t.ID, t.State)
			}
			return a.openService(cmd.Context(), s, k, t, noBrowser)
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the address")
	return cmd
}

// openService prints a link that opens a task's page and opens it in the
// desktop's browser, when there is a desktop. The link holds a ticket for
// the task origin that works once, for a minute.
func (a *app) openService(ctx context.Context, s *session, k taskKind, t resolute.Task, noBrowser bool) error {
	link, err := s.OpenTask(ctx, t.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "%s %s is ready at (a link that works once, within a minute; `det %s open %s` makes another):\n",
		capitalize(k.noun), t.ID, strings.ToLower(k.noun), t.ID)
	fmt.Fprintln(a.stdout, link.URL)
	if noBrowser || (a.getenv("DISPLAY") == "" && a.getenv("WAYLAND_DISPLAY") == "") {
		return nil
	}
	if err := openBrowser(link.URL); err != nil {
		fmt.Fprintf(a.stderr, "Warning: could not open a browser: %v\n", err)
	}
	return nil
}
