package control

import (
	"context"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// HTTP proxy ports, as Determined's: an entry of environment.proxy_ports
// with proxy_tcp: false (Determined's default) is a web server in the task
// that the task origin serves at /proxy/<task id>:<port>/, to the task's
// owner alone, as det task tunnel reaches every listed port. The way in is
// the task origin's: a ticket for that port (GET /tasks/{id}/open?port=N,
// POST /api/v1/tasks/{id}/open {"port": N}) becomes a task session and a
// cookie for that port's path alone, which opens neither the task's own
// service nor its other ports; every request asks again (ownTask) and finds
// the task's address with Tunnel.

// mayOpenAt is the rule for opening task t's service (port 0, mayOpen) or
// one of its HTTP proxy ports (mayOpenPort).
func mayOpenAt(a authz.Actor, t resolute.Task, port int) error {
	if port == 0 {
		return mayOpen(a, t)
	}
	return mayOpenPort(a, t, port)
}

// mayOpenPort lets a open port of task t over HTTP: its owner (ownTask:
// one who may open it, under RBAC with the same rule as its service), a
// port that its environment.proxy_ports lists with proxy_tcp: false.
func mayOpenPort(a authz.Actor, t resolute.Task, port int) error {
	if err := ownTask(a, t); err != nil {
		return err
	}
	ports, err := httpPorts(t)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if p == port {
			return nil
		}
	}
	return resolute.Errorf(resolute.EForbidden, "port %d of %s is not one of its HTTP proxy ports (environment.proxy_ports with proxy_tcp: false)", port, t.ID)
}

// httpPorts lists the ports of t's environment.proxy_ports that are served
// over HTTP: those without proxy_tcp: true.
func httpPorts(t resolute.Task) ([]int, error) {
	cfg, err := expconf.ParseTask(t.Config, strings.ToLower(t.Type))
	if err != nil {
		return nil, err
	}
	var ports []int
	for _, pp := range cfg.Environment.ProxyPorts {
		if !pp.ProxyTCP {
			ports = append(ports, pp.Port)
		}
	}
	return ports, nil
}

// HTTPPorts lists task t's HTTP proxy ports, for the links on its page.
func HTTPPorts(t resolute.Task) []int {
	ports, _ := httpPorts(t)
	return ports
}

// PortTicket makes a ticket for a, signed in with the master session
// whose token is session, to open HTTP proxy port port of task taskID at
// path (under /proxy/<task id>:<port>/): its owner, a port it lists with
// proxy_tcp: false, a task that has not ended.
func (s *TaskOrigin) PortTicket(ctx context.Context, a authz.Actor, session, taskID string, port int, path string) (Ticket, error) {
	if port < 1 || port > 65535 {
		return Ticket{}, resolute.Errorf(resolute.EInvalid, "port: must be 1..65535, got %d", port)
	}
	return s.ticket(ctx, a, session, taskID, port, path)
}

// PortVisitor returns the user of the task session whose token is token,
// for HTTP proxy port port of task taskID, and where the master reaches
// that port, once it has asked again whether they may open it and found
// the task running.
func (s *TaskOrigin) PortVisitor(ctx context.Context, token, taskID string, port int) (resolute.User, string, error) {
	u, _, actor, err := s.visit(ctx, token, taskID, port)
	if err != nil {
		return u, "", err
	}
	if s.tunnel == nil {
		return u, "", resolute.Errorf(resolute.EInternal, "the task origin cannot reach tasks' ports")
	}
	addr, err := s.tunnel(ctx, actor, taskID, port)
	return u, addr, err
}

// openableTask is task id, once a may open its service (port 0) or its
// HTTP proxy port port: for a trial's port (trial-N, which is no row of
// tasks) a task of that ID alone, once mayOpenTrialPort says a may.
func openableTask(ctx context.Context, q *db.Queries, a authz.Actor, id string, port int) (resolute.Task, error) {
	if trialID, ok := trialOf(id); ok && port != 0 {
		return resolute.Task{ID: id}, mayOpenTrialPort(ctx, q, a, trialID, port)
	}
	t, err := q.Task(ctx, id)
	if err != nil {
		return t, err
	}
	return t, mayOpenAt(a, t, port)
}

// trialOf is the trial of a task ID trial-N, as Tasks.Tunnel reads it.
func trialOf(id string) (int64, bool) {
	n, ok := strings.CutPrefix(id, "trial-")
	if !ok {
		return 0, false
	}
	trialID, err := strconv.ParseInt(n, 10, 64)
	return trialID, err == nil && strconv.FormatInt(trialID, 10) == n
}

// mayOpenTrialPort lets a open port of trial trialID over HTTP: the
// experiment's owner, who may change it (the rule of det task tunnel
// trial-N), a port its environment.proxy_ports lists with proxy_tcp: false.
func mayOpenTrialPort(ctx context.Context, q *db.Queries, a authz.Actor, trialID int64, port int) error {
	tr, err := q.Trial(ctx, trialID)
	if err != nil {
		return err
	}
	e, err := q.Experiment(ctx, tr.ExperimentID)
	if err != nil {
		return err
	}
	if err := authz.Can(a, authz.ChangeExperiment, authz.Experiment(e)); err != nil {
		return err
	}
	if a.UserID() != e.UserID {
		return resolute.Errorf(resolute.EForbidden, "only %s, who started experiment %d, may reach its trials' proxy ports", e.Username, e.ID)
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return err
	}
	for _, pp := range cfg.Environment.ProxyPorts {
		if pp.Port == port && !pp.ProxyTCP {
			return nil
		}
	}
	return resolute.Errorf(resolute.EForbidden, "port %d of trial %d is not one of its experiment's HTTP proxy ports (environment.proxy_ports with proxy_tcp: false)", port, trialID)
}

// TrialHTTPPorts lists the HTTP proxy ports of the trials of experiment
// e, for the links on a trial's page.
func TrialHTTPPorts(e resolute.Experiment) []int {
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return nil
	}
	var ports []int
	for _, pp := range cfg.Environment.ProxyPorts {
		if !pp.ProxyTCP {
			ports = append(ports, pp.Port)
		}
	}
	return ports
}
