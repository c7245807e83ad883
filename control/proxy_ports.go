package control

import (
	"context"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
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

// checkTrialProxyPorts refuses HTTP proxy ports in an experiment's config:
// the task origin's tickets and task sessions are for tasks (commands,
// notebooks, shells, TensorBoards), and a trial's ports are reached with
// det task tunnel trial-N PORT alone.
func checkTrialProxyPorts(pps []expconf.ProxyPort) error {
	for i, pp := range pps {
		if !pp.ProxyTCP {
			return resolute.Errorf(resolute.EInvalid, "environment.proxy_ports[%d].proxy_tcp: false (an HTTP port served at /proxy/TASK:PORT/) "+
				"is not supported for experiments' trials, only for commands, notebooks, shells and TensorBoards: "+
				"set proxy_tcp: true and reach it with det task tunnel trial-N PORT", i)
		}
	}
	return nil
}
