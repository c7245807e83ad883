package control

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// JupyterKernel is what Jupyter's /api/kernels says of a kernel.
type JupyterKernel struct {
	ExecutionState string    `json:"execution_state"`
	Connections    int       `json:"connections"`
	LastActivity   time.Time `json:"last_activity"`
}

// JupyterState is a notebook server's kernels, terminals and sessions.
type JupyterState struct {
	Kernels           []JupyterKernel
	Terminals         int
	TerminalsActivity time.Time // the latest last_activity of the terminals
	Sessions          int
}

// JupyterIdle is the pure rule of notebook_idle_type, as Determined's
// check_idle: kernels_or_terminals (the default) is idle with no kernel,
// terminal or session; kernel_connections when no kernel has a connection;
// activity when no kernel is busy and nothing was active since the last
// look (seen: the latest activity then). It returns the latest activity now.
func JupyterIdle(kind string, s JupyterState, seen time.Time) (bool, time.Time) {
	latest := s.TerminalsActivity
	for _, k := range s.Kernels {
		if k.LastActivity.After(latest) {
			latest = k.LastActivity
		}
	}
	switch kind {
	case expconf.IdleKernelConnections:
		for _, k := range s.Kernels {
			if k.Connections > 0 {
				return false, latest
			}
		}
		return true, latest
	case expconf.IdleActivity:
		for _, k := range s.Kernels {
			// Debian's notebook server (6.4) reports a kernel as "starting"
			// until it sees the kernel's first status message, which comes
			// once a client connects: a connected kernel still starting
			// counts as busy; one nobody ever connected to has run nothing.
			if k.ExecutionState == "busy" || k.ExecutionState == "starting" && k.Connections > 0 {
				return false, latest
			}
		}
		return !latest.After(seen), latest
	}
	return len(s.Kernels) == 0 && s.Terminals == 0 && s.Sessions == 0, latest
}

// WatchIdle terminates notebooks, TensorBoards and shells that stayed idle
// longer than their idle_timeout (default: the master's notebook_timeout and
// tensorboard_timeout; shells only with one in their config): idle means no
// request through the proxy and no terminal traffic (proxyActivity) and, for
// notebooks, nothing Jupyter itself calls activity (notebook_idle_type). It
// looks every interval until ctx ends.
func (x *Tasks) WatchIdle(ctx context.Context, proxyActivity func(taskID string) time.Time, interval time.Duration) {
	type seen struct {
		active time.Time // the last time we saw the task in use
		jup    time.Time // Jupyter's latest activity at our last look
	}
	state := map[string]*seen{}
	client := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		live := true
		tasks, err := x.c.db.Tasks(ctx, db.TaskFilter{Live: &live})
		if err != nil {
			if !quiet(ctx, err) {
				x.c.logger.Error("idle watch", "err", err)
			}
			continue
		}
		now := x.c.now()
		alive := map[string]bool{}
		for _, t := range tasks {
			if !t.Ready || t.Type == resolute.TaskCommand {
				continue
			}
			alive[t.ID] = true
			timeout, kind := x.idleTimeout(t)
			if timeout <= 0 {
				continue
			}
			st := state[t.ID]
			if st == nil {
				st = &seen{active: now}
				state[t.ID] = st
			}
			if a := proxyActivity(t.ID); a.After(st.active) {
				st.active = a
			}
			if t.Type == resolute.TaskNotebook && t.ServicePort != nil {
				js, err := jupyterState(ctx, client, t)
				if err != nil {
					x.c.logger.Warn("read Jupyter's activity", "task", t.ID, "err", err)
					st.active = now // cannot tell: do not stop it
				} else if idle, latest := JupyterIdle(kind, js, st.jup); !idle {
					st.active, st.jup = now, latest
				} else {
					st.jup = latest
				}
			}
			if idleFor := now.Sub(st.active); idleFor > timeout {
				msg := fmt.Sprintf("idle for more than %v (idle_timeout); terminating", timeout)
				x.c.logger.Info("terminating an idle task", "task", t.ID, "idle", idleFor.Round(time.Second))
				x.c.taskLog(ctx, resolute.Allocation{ID: t.ID + ".1", TaskID: t.ID}, "WARNING", msg)
				if err := x.Kill(ctx, authz.System, t.ID); err != nil {
					x.c.logger.Error("kill idle task", "task", t.ID, "err", err)
				}
			}
		}
		for id := range state {
			if !alive[id] {
				delete(state, id)
			}
		}
	}
}

// idleTimeout is a task's idle_timeout, or the master's default for its type.
func (x *Tasks) idleTimeout(t resolute.Task) (time.Duration, string) {
	cfg, err := expconf.ParseTask(t.Config, strings.ToLower(t.Type))
	if err != nil {
		return 0, ""
	}
	if cfg.IdleTimeout != nil {
		return *cfg.IdleTimeout, cfg.NotebookIdleType
	}
	switch t.Type {
	case resolute.TaskNotebook:
		return x.c.opts.NotebookTimeout, cfg.NotebookIdleType
	case resolute.TaskTensorBoard:
		return x.c.opts.TensorboardTimeout, ""
	}
	return 0, "" // a shell without idle_timeout stays until killed
}

// jupyterState asks a notebook server, on loopback with its token, for its
// kernels, terminals and sessions.
func jupyterState(ctx context.Context, client *http.Client, t resolute.Task) (JupyterState, error) {
	base := "http://" + t.ServiceHostPort() + "/proxy/" + t.ID + "/api/"
	get := func(path string, out any) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		req.Header.Set("Authorization", "token "+t.ServiceToken)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: %s", path, resp.Status)
		}
		return json.NewDecoder(resp.Body).Decode(out)
	}
	var s JupyterState
	var terms []struct {
		LastActivity time.Time `json:"last_activity"`
	}
	var sessions []json.RawMessage
	if err := get("kernels", &s.Kernels); err != nil {
		return s, err
	}
	if err := get("terminals", &terms); err != nil {
		return s, err
	}
	if err := get("sessions", &sessions); err != nil {
		return s, err
	}
	s.Terminals, s.Sessions = len(terms), len(sessions)
	for _, tm := range terms {
		if tm.LastActivity.After(s.TerminalsActivity) {
			s.TerminalsActivity = tm.LastActivity
		}
	}
	return s, nil
}
