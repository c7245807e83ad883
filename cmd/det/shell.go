package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

// shellTerminalCmds are `det shell start` and `det shell open`: a terminal
// into a shell over the master's websocket GET /tasks/{id}/terminal/ws.
func (a *app) shellTerminalCmds() []*cobra.Command {
	return append([]*cobra.Command{a.shellStartCmd(), a.shellOpenCmd()}, a.shellSSHCmds()...)
}

func (a *app) shellStartCmd() *cobra.Command {
	var f launchFlags
	var showSSH bool
	cmd := &cobra.Command{
		Use:   "start [--config-file F] [--config K=V]... [-c DIR] [--template T] [-d] [--show-ssh-command]",
		Short: "Start a shell, wait until it is ready, and open a terminal into it",
		Long: "Start a shell: a task whose allocation keeps its environment, with terminals opened into it.\n" +
			"Without -d, det waits until it is ready and opens a terminal, as det shell open does;\n" +
			"leaving the terminal leaves the shell running, until det shell kill.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, t, err := a.launch(ctx, shellKind, f, resolute.CreateTaskRequest{})
			if err != nil {
				return err
			}
			if f.detach && !showSSH {
				fmt.Fprintln(a.stdout, t.ID)
				return nil
			}
			if showSSH { // as Determined's: the command, then the terminal
				sshArgs, err := a.sshArgs(ctx, s.Client, t.ID)
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, shellQuote(append([]string{sshProgram}, sshArgs...)))
				if f.detach {
					return nil
				}
			}
			fmt.Fprintf(a.stderr, "Launched shell %s; waiting for it to be ready...\n", t.ID)
			return a.attachShell(ctx, s.Client, t.ID)
		},
	}
	f.add(cmd, shellKind, true, false)
	cmd.Flags().BoolVar(&showSSH, "show-ssh-command", false, "print the ssh command that reaches the shell (det shell show-ssh-command)")
	return cmd
}

func (a *app) shellOpenCmd() *cobra.Command {
	var useSSH bool
	cmd := &cobra.Command{
		Use:   "open SHELL_ID [--ssh [-- SSH_OPTIONS... [COMMAND...]]]",
		Short: "Open a new terminal into a shell",
		Long: "Open a new terminal into a shell: a login shell of its own in the shell's allocation.\n" +
			"Keystrokes, Ctrl-C included, go to the remote side; det ends when the remote shell exits\n" +
			"(exit or Ctrl-D), with its exit status. The shell task keeps running.\n" +
			"With --ssh, det runs the ssh client instead (as Determined's det shell open), through the master,\n" +
			"with the options and command given after --.",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if !useSSH && len(argv) > 1 {
				return usageError{fmt.Errorf("arguments after the shell's ID are ssh's: add --ssh")}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if useSSH {
				return a.runSSH(cmd.Context(), s.Client, argv[0], argv[1:])
			}
			return a.attachShell(cmd.Context(), s.Client, argv[0])
		},
	}
	cmd.Flags().BoolVar(&useSSH, "ssh", false, "run the ssh client (det shell show-ssh-command) instead of a terminal over the master's websocket")
	return cmd
}

// attachShell waits until shell id is ready, then runs a terminal into it.
func (a *app) attachShell(ctx context.Context, c *client.Client, id string) error {
	s := &session{Client: c}
	t, err := a.waitTask(ctx, s, shellKind, id, func(t resolute.Task) bool {
		return t.Ready || t.State == resolute.TaskTerminated
	})
	if err != nil {
		return err
	}
	if t.State == resolute.TaskTerminated {
		return resolute.Errorf(resolute.EGone, "shell %s has ended: %s", id, t.EndReason)
	}
	// Between ready and the allocation's start the master says "not
	// running yet": try again for a while. One reader of stdin serves
	// every try, so that none leaves a reader behind to eat a keystroke.
	keys := a.readKeys()
	defer keys.stop()
	for deadline := time.Now().Add(30 * time.Second); ; {
		err := a.runTerminal(ctx, c, id, keys)
		if resolute.ErrorCode(err) != resolute.EConflict || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(taskPoll):
		}
	}
}

// keyboard reads det's stdin for the terminals of one attach, one after
// another.
type keyboard struct {
	c    chan []byte   // what was read; closed when stdin ends
	err  error         // why stdin ended, once c is closed
	done chan struct{} // closed by stop
}

// readKeys starts reading stdin until it ends or stop is called.
func (a *app) readKeys() *keyboard {
	k := &keyboard{c: make(chan []byte), done: make(chan struct{})}
	go func() {
		defer close(k.c)
		for {
			buf := make([]byte, 32<<10)
			n, err := a.stdin.Read(buf)
			if n > 0 {
				select {
				case k.c <- buf[:n]:
				case <-k.done:
					return
				}
			}
			if err != nil {
				k.err = err
				return
			}
		}
	}()
	return k
}

// stop ends reading: a Read under way still takes what it reads.
func (k *keyboard) stop() { close(k.done) }

// runTerminal opens one terminal and copies it to and from det's stdin (as
// keys reads it) and stdout until its remote shell exits. A terminal on
// stdin is put in raw mode, always restored, and its size follows the
// window's (stdout's, else stdin's).
func (a *app) runTerminal(ctx context.Context, c *client.Client, id string, keys *keyboard) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	t, err := c.OpenTerminal(ctx, id)
	if err != nil {
		return err
	}
	defer t.Close()

	in, inTTY := a.stdin.(*os.File)
	inTTY = inTTY && term.IsTerminal(int(in.Fd()))
	out, outTTY := a.stdout.(*os.File)
	outTTY = outTTY && term.IsTerminal(int(out.Fd()))
	window := -1 // the terminal whose size is the window's
	if outTTY {
		window = int(out.Fd())
	} else if inTTY {
		window = int(in.Fd())
	}
	resize := func() {
		if window >= 0 {
			if cols, rows, err := term.GetSize(window); err == nil {
				t.Resize(cols, rows)
			}
		}
	}
	resize()
	winch := make(chan os.Signal, 1)
	if window >= 0 {
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
	}
	if inTTY {
		fmt.Fprintf(a.stderr, "Terminal into shell %s: leave with exit or Ctrl-D; the shell keeps running.\n", id)
		old, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			return fmt.Errorf("put the terminal in raw mode: %w", err)
		}
		defer term.Restore(int(in.Fd()), old)
	}

	done := make(chan error, 1)
	go func() { // the remote side's output
		buf := make([]byte, 32<<10)
		for {
			n, err := t.Read(buf)
			if n > 0 {
				if _, werr := a.stdout.Write(buf[:n]); werr != nil {
					done <- werr
					return
				}
			}
			if err != nil {
				done <- err // EConflict comes first, if at all: attachShell tries again
				return
			}
		}
	}()
	ended := make(chan struct{}) // this terminal
	defer close(ended)
	go func() { // keystrokes
		for {
			select {
			case <-ended:
				return
			case b, ok := <-keys.c:
				if !ok {
					if !inTTY && errors.Is(keys.err, io.EOF) {
						eofUntilExit(ctx, t)
					}
					return
				}
				if _, err := t.Write(b); err != nil {
					return
				}
			}
		}
	}()
	for {
		select {
		case <-winch:
			resize()
		case <-ctx.Done():
			return ctx.Err()
		case err := <-done:
			if !errors.Is(err, io.EOF) {
				return err
			}
			if code, ok := t.ExitCode(); ok && code != 0 {
				return exitStatus{code}
			}
			return nil
		}
	}
}

// eofUntilExit says that piped input has ended: Ctrl-D, as a terminal
// would, once a second until the remote shell exits (a Ctrl-D typed ahead
// while the shell is busy may never reach its prompt).
func eofUntilExit(ctx context.Context, t *client.Terminal) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if _, err := t.Write([]byte{4}); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
