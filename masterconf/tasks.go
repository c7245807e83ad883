package masterconf

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
)

// The task origin: notebooks, TensorBoards and whatever else tasks serve are
// reached by browsers on an origin that is not the master's, through the
// master's second listener (tasks_port), so that a page a task serves can
// neither act with a viewer's master session nor replace its cookie. With
// {task} in the host of tasks_url every task has an origin of its own, so
// that a page one task serves cannot read another's either.

// TaskPort is the port of the listener that serves the task origin:
// tasks_port, or port+1.
func (c *Config) TaskPort() int {
	if c.TasksPort != 0 {
		return c.TasksPort
	}
	return c.Port + 1
}

// TaskOrigin is the task origin as browsers reach it, without a trailing
// slash: tasks_url when set (with {task} in its host, the template of every
// task's own origin), else derived from the master's URL and TaskPort. A
// master on localhost (the default) gets http://127.0.0.1:<tasks_port> and
// one on 127.0.0.1 gets localhost: a host of its own, so cookies cannot
// cross. Any other master gets its own host name on tasks_port. warning,
// when not empty, says that the task origin shares the master's host name;
// the master logs it once at start.
func (c *Config) TaskOrigin() (origin resolute.TasksURL, warning string) {
	master, _ := url.Parse(c.URL())
	if master == nil {
		master = &url.URL{Scheme: "http"}
	}
	if c.TasksURL != "" {
		origin = resolute.TasksURL(strings.TrimSuffix(c.TasksURL, "/"))
	} else {
		host := master.Hostname()
		switch host {
		case "localhost":
			host = "127.0.0.1"
		case "127.0.0.1":
			host = "localhost"
		}
		scheme := master.Scheme
		if scheme == "" {
			scheme = "http"
		}
		origin = resolute.TasksURL(scheme + "://" + net.JoinHostPort(host, strconv.Itoa(c.TaskPort())))
	}
	if t, err := url.Parse(string(origin)); err == nil && strings.EqualFold(t.Hostname(), master.Hostname()) {
		warning = fmt.Sprintf("the task origin %s shares the master's host name %s: cookies are per host, not per port, "+
			"so a page a task serves could set cookies that the master's pages send; set tasks_url to a host name of its own", origin, master.Hostname())
	}
	return origin, warning
}

// checkTaskOrigin validates external_url, tasks_url and tasks_port.
func (c *Config) checkTaskOrigin() Errors {
	var errs Errors
	bad := func(path, format string, args ...any) {
		errs = append(errs, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if c.ExternalURL != "" {
		if msg := checkOriginURL(c.ExternalURL, false); msg != "" {
			bad("external_url", "%s (got %q)", msg, c.ExternalURL)
		}
	}
	switch {
	case c.TasksPort < 0 || c.TasksPort > 65535:
		bad("tasks_port", "must be between 1 and 65535 (got %d)", c.TasksPort)
	case c.TasksPort == 0 && c.Port == 65535:
		bad("tasks_port", "defaults to port+1, which is not a port when port is 65535: set it")
	case c.TaskPort() == c.Port:
		bad("tasks_port", "must not be the master's port %d: the task origin needs a listener of its own", c.Port)
	}
	if c.TasksURL == "" {
		return errs
	}
	if msg := checkTasksURL(c.TasksURL); msg != "" {
		bad("tasks_url", "%s (got %q)", msg, c.TasksURL)
		return errs
	}
	if c.TLS.Cert != "" && !strings.HasPrefix(c.TasksURL, "https://") {
		bad("tasks_url", "must start with https:// when tls is set: the task origin's listener serves TLS, and its cookie is Secure")
	}
	if sameOrigin(c.TasksURL, c.URL()) {
		bad("tasks_url", "must not be the master's own origin %s: what tasks serve must not run with the master's cookies", c.URL())
	}
	return errs
}

// checkTasksURL says what is wrong with tasks_url, or "": an origin, or
// one with {task} once in its host, as a whole label or a label's prefix
// or suffix, below a domain, leaving room in the label for any task's ID.
func checkTasksURL(s string) string {
	switch n := strings.Count(s, resolute.TaskPlaceholder); {
	case n == 0:
		return checkOriginURL(s, true)
	case n > 1:
		return "may have {task} only once, in the host"
	}
	// Checked as the origin of the task with the longest ID.
	example := resolute.TasksURL(s).Origin(resolute.LongestTaskID)
	if msg := checkOriginURL(example, false); msg != "" {
		return msg
	}
	u, _ := url.Parse(example)
	if !strings.Contains(u.Hostname(), resolute.LongestTaskID) {
		return "may have {task} only in the host, e.g. https://{task}.tasks.example.com"
	}
	if msg := checkOriginURL(example, true); msg != "" {
		return msg
	}
	labels := strings.Split(u.Hostname(), ".")
	for i, label := range labels {
		switch {
		case !strings.Contains(label, resolute.LongestTaskID):
			continue
		case !strings.HasPrefix(label, resolute.LongestTaskID) && !strings.HasSuffix(label, resolute.LongestTaskID):
			return "must have {task} as a whole label of the host, or at the start or end of one, e.g. https://{task}.tasks.example.com"
		case i == len(labels)-1:
			return "must have {task} in a host name below a domain, e.g. https://{task}.tasks.example.com or http://{task}.localhost:8081"
		case len(label) > 63:
			return fmt.Sprintf("leaves too little room for task IDs in the label of {task}: with IDs of up to %d characters a label has at most 63",
				len(resolute.LongestTaskID))
		}
	}
	return ""
}

// checkOriginURL says what is wrong with an http(s) URL that names a site,
// or "". An origin may have no path at all.
func checkOriginURL(s string, origin bool) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "must be a URL like https://resolute.example.com"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must start with http:// or https://"
	case u.Host == "" || u.Hostname() == "":
		return "must name a host"
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "must have no user, query or fragment"
	case origin && strings.TrimSuffix(u.Path, "/") != "":
		return "must be an origin, without a path: tasks are served under /proxy/<task id>/"
	}
	return ""
}

// sameOrigin says whether two URLs have one scheme, host and port.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}

// port is a URL's port, or its scheme's.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
