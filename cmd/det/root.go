package main

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

// defaultMaster is where det looks when neither -m nor DET_MASTER says.
const defaultMaster = "http://localhost:8080"

func init() {
	// Determined's det accepts unambiguous prefixes of commands ("det us li").
	// cobra only offers this as a package setting.
	cobra.EnablePrefixMatching = true
}

// app is one invocation of det: its streams, environment and global flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	masterFlag string // -m/--master as given
	userFlag   string // -u/--user as given
	master     string // resolved master URL, set before any command runs

	lines *bufio.Reader // stdin read line by line, made on first use
}

// run executes det with args (without the program name).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root.ExecuteContext(ctx)
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "det",
		Short:         "det is the command-line client of a Resolute master",
		Version:       resolute.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return a.resolveMaster()
		},
	}
	root.SetVersionTemplate("det {{.Version}}\n")
	root.PersistentFlags().StringVarP(&a.masterFlag, "master", "m", "",
		"master address (default $DET_MASTER, or "+defaultMaster+")")
	root.PersistentFlags().StringVarP(&a.userFlag, "user", "u", "",
		"user whose stored session to use (default $DET_USER, or the last one to log in)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(a.userCmd(), a.workspaceCmd(), a.projectCmd(), a.masterCmd(), a.versionCmd(),
		a.templateCmd(), a.previewSearchCmd(), a.experimentCmd(), a.trialCmd(), a.checkpointCmd(), a.jobCmd(), a.agentCmd(), a.slotCmd(), a.modelCmd(),
		a.commandCmd(), a.notebookCmd(), a.shellCmd(), a.tensorboardCmd(), a.taskCmd(), a.resourcePoolCmd(), a.resourcesCmd(), a.webhookCmd())
	root.AddCommand(a.userGroupCmd(), a.rbacCmd())
	return root
}

// resolveMaster picks the master URL: -m, then DET_MASTER, then
// DET_MASTER_ADDR, then the default.
func (a *app) resolveMaster() error {
	addr := a.masterFlag
	for _, env := range []string{"DET_MASTER", "DET_MASTER_ADDR"} {
		if addr == "" {
			addr = a.getenv(env)
		}
	}
	if addr == "" {
		addr = defaultMaster
	}
	u, err := client.ParseMasterURL(addr)
	if err != nil {
		return usageError{err}
	}
	a.master = u
	return nil
}

// anonymous returns a client without a session, for /info and logins.
func (a *app) anonymous() *client.Client {
	return client.New(a.master, client.WithUserAgent("det/"+resolute.Version))
}

// withToken returns a client that sends token.
func (a *app) withToken(token string) *client.Client {
	return client.New(a.master, client.WithToken(token), client.WithUserAgent("det/"+resolute.Version))
}

// args wraps a cobra argument check so that its failures are usage errors.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{fmt.Errorf("%w\nRun '%s --help' for usage.", err, cmd.CommandPath())}
		}
		return nil
	}
}

// group makes a noun command (user, workspace, ...) that only holds verbs.
func group(use, short string, aliases ...string) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Aliases: aliases, Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
}
