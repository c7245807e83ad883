package masterconf

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The task origin: notebooks, TensorBoards and whatever else tasks serve are
// reached by browsers on an origin that is not the master's, through the
// master's second listener (tasks_port), so that a page a task serves can
// neither act with a viewer's master session nor replace its cookie.

// TaskPort is the port of the listener that serves the task origin:
// tasks_port, or port+1.
func (c *Config) TaskPort() int {
	if c.TasksPort != 0 {
		return c.TasksPort
	}
	return c.Port + 1
}

// TaskOrigin is the task origin as browsers reach it, without a trailing
// slash: tasks_url when set, else derived from the master's URL and
// TaskPort. A master on localhost (the default) gets
// http://127.0.0.1:<tasks_port> and one on 127.0.0.1 gets localhost: a host
// of its own, so cookies cannot cross. Any other master gets its own host
// name on tasks_port. warning, when not empty, says that the task origin
// shares the master's host name; the master logs it once at start.
func (c *Config) TaskOrigin() (origin, warning string) {
	master, _ := url.Parse(c.URL())
	if master == nil {
		master = &url.URL{Scheme: "http"}
	}
	if c.TasksURL != "" {
		origin = strings.TrimSuffix(c.TasksURL, "/")
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
		origin = scheme + "://" + net.JoinHostPort(host, strconv.Itoa(c.TaskPort()))
	}
	if t, err := url.Parse(origin); err == nil && strings.EqualFold(t.Hostname(), master.Hostname()) {
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
	if msg := checkOriginURL(c.TasksURL, true); msg != "" {
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
