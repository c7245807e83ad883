package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

// SSH into shells, as Determined's: `det shell show-ssh-command ID` prints
// an ssh command whose ProxyCommand is `det shell ssh-proxy ID`, which
// carries the connection over the master's signed-in websocket to the
// shell's sshd; `det shell open --ssh ID` runs it. The shell's key and its
// sshd's host key (pinned: StrictHostKeyChecking) are kept in det's config
// directory, readable by the user alone.

// sshProgram is the ssh client det runs; tests may point it elsewhere.
var sshProgram = "ssh"

// shellSSHCmds are show-ssh-command and ssh-proxy.
func (a *app) shellSSHCmds() []*cobra.Command {
	show := &cobra.Command{
		Use:   "show-ssh-command SHELL_ID",
		Short: "Print the ssh command that reaches a shell (for scp, -L forwards and VS Code's Remote-SSH, use its options)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			sshArgs, err := a.sshArgs(cmd.Context(), s.Client, argv[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, shellQuote(append([]string{sshProgram}, sshArgs...)))
			return nil
		},
	}
	proxy := &cobra.Command{
		Use:   "ssh-proxy SHELL_ID",
		Short: "Carry stdin and stdout to a shell's sshd through the master: ssh's ProxyCommand",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			return a.stdioTunnel(cmd.Context(), s.Client, argv[0], 0)
		},
	}
	return []*cobra.Command{show, proxy}
}

// sshArgs fetches the shell's keys, stores them, and returns the arguments
// of ssh that reach it.
func (a *app) sshArgs(ctx context.Context, c *client.Client, id string) ([]string, error) {
	k, err := c.ShellSSHKeys(ctx, id)
	if err != nil {
		return nil, err
	}
	dir, err := configDir(a.getenv)
	if err != nil {
		return nil, err
	}
	dir = filepath.Join(dir, "ssh", safeName(a.master), safeName(id))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, known := filepath.Join(dir, "key"), filepath.Join(dir, "known_hosts")
	if err := writePrivate(key, k.PrivateKey); err != nil {
		return nil, err
	}
	if err := writePrivate(known, id+" "+k.HostPublicKey+"\n"); err != nil {
		return nil, err
	}
	det, err := os.Executable()
	if err != nil {
		det = "det"
	}
	proxy := []string{det, "-m", a.master}
	if a.userFlag != "" {
		proxy = append(proxy, "-u", a.userFlag)
	}
	proxy = append(proxy, "shell", "ssh-proxy", id)
	return []string{
		"-o", "ProxyCommand=" + shellQuote(proxy),
		"-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + known,
		"-o", "IdentitiesOnly=yes", "-o", "IdentityFile=" + key,
		"-o", "ServerAliveInterval=30",
		k.Login + "@" + id,
	}, nil
}

// writePrivate writes a file only its owner may read.
func writePrivate(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName makes s a file name.
func safeName(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		s = u.Host
	}
	return unsafeChars.ReplaceAllString(s, "_")
}

// shellQuote joins argv as a POSIX shell would read it back.
func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, s := range argv {
		if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
			out[i] = s
			continue
		}
		out[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// sshOptionsWithValue are the letters of ssh's options that take a value
// (-L 8888:localhost:8888), as ssh(1) lists them.
const sshOptionsWithValue = "BbcDEeFIiJLlmOopQRSWw"

// runSSH runs the real ssh client into shell id, with extra arguments
// (options, then a command) after the destination's, and returns its exit
// status.
func (a *app) runSSH(ctx context.Context, c *client.Client, id string, extra []string) error {
	sshArgs, err := a.sshArgs(ctx, c, id)
	if err != nil {
		return err
	}
	argv := withExtra(sshArgs, extra)
	cmd := exec.CommandContext(ctx, sshProgram, argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exitStatus{exit.ExitCode()}
	}
	if err != nil {
		return fmt.Errorf("run %s: %w (det shell open without --ssh opens a terminal without it)", sshProgram, err)
	}
	return nil
}

// withExtra puts extra ssh options before the destination, the last of
// sshArgs, and a command after it.
func withExtra(sshArgs, extra []string) []string {
	dest := sshArgs[len(sshArgs)-1]
	var opts, command []string
	for i := 0; i < len(extra); i++ { // ssh takes options before the destination
		if !strings.HasPrefix(extra[i], "-") {
			command = extra[i:]
			break
		}
		opts = append(opts, extra[i])
		if len(extra[i]) == 2 && strings.ContainsRune(sshOptionsWithValue, rune(extra[i][1])) && i+1 < len(extra) {
			i++
			opts = append(opts, extra[i])
		}
	}
	argv := append(slices.Clone(sshArgs[:len(sshArgs)-1]), opts...)
	return append(append(argv, dest), command...)
}

// stdioTunnel carries det's stdin and stdout to port of task id (0: a
// shell's sshd) until either side ends.
func (a *app) stdioTunnel(ctx context.Context, c *client.Client, id string, port int) error {
	conn, err := c.Tunnel(ctx, id, port)
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(a.stdout, conn)
		done <- err
	}()
	// The end of stdin ends nothing: the task may still answer, and ssh
	// ends its ProxyCommand itself when it is done.
	go io.Copy(conn, a.stdin)
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// taskTunnelCmd is `det task tunnel ID PORT [--listen ADDR]`: one of a
// task's proxy_ports, on stdin and stdout or on a local port.
func (a *app) taskTunnelCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "tunnel TASK_ID PORT [--listen [HOST:]LOCAL_PORT]",
		Short: "Reach a port a task's (or trial-ID's) environment.proxy_ports lists, through the master (its owner only)",
		Long: "Reach one of a task's environment.proxy_ports through the master, signed in as the task's owner.\n" +
			"Without --listen, stdin and stdout are the connection (a ProxyCommand); with it, each connection\n" +
			"to the local address (127.0.0.1 unless a host is given) is one to the task's port.",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			port, err := strconv.Atoi(argv[1])
			if err != nil || port < 1 || port > 65535 {
				return usageError{fmt.Errorf("PORT: expected a port number, got %q", argv[1])}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if listen == "" {
				return a.stdioTunnel(cmd.Context(), s.Client, argv[0], port)
			}
			return a.listenTunnel(cmd.Context(), s.Client, argv[0], port, listen)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "a local [HOST:]PORT to accept connections on")
	return cmd
}

// listenTunnel accepts connections on listen and carries each to port of
// task id, until ctx ends.
func (a *app) listenTunnel(ctx context.Context, c *client.Client, id string, port int, listen string) error {
	if !strings.Contains(listen, ":") {
		listen = "127.0.0.1:" + listen
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Fprintf(a.stderr, "Port %d of %s is at %s; Ctrl-C ends the tunnel.\n", port, id, ln.Addr())
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		local, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer local.Close()
			remote, err := c.Tunnel(ctx, id, port)
			if err != nil {
				fmt.Fprintf(a.stderr, "tunnel: %s\n", resolute.ErrorMessage(err))
				return
			}
			defer remote.Close()
			go func() {
				io.Copy(remote, local)
				remote.Close()
			}()
			io.Copy(local, remote)
		}()
	}
}
