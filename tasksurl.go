package resolute

import (
	"net"
	"net/url"
	"strings"
)

// TaskPlaceholder stands for a task's ID in the host of a TasksURL that
// gives every task an origin of its own.
const TaskPlaceholder = "{task}"

// LongestTaskID is as long as a task's ID gets: <type>-<n>, lower-case
// letters, digits and a dash, e.g. notebook-12; it fits in a DNS label.
const LongestTaskID = "tensorboard-9223372036854775807"

// TasksURL is where browsers reach what tasks serve (the master's
// tasks_url, without a trailing slash): one origin that every task shares,
// e.g. http://127.0.0.1:8081, or, with TaskPlaceholder in its host, an
// origin per task, e.g. https://{task}.tasks.example.com, where a page one
// task serves cannot read what another serves to the same viewer.
// masterconf checks it.
type TasksURL string

// PerTask says whether every task has an origin of its own.
func (u TasksURL) PerTask() bool {
	return strings.Contains(string(u), TaskPlaceholder)
}

// Origin is the origin where task id is served: the shared one, or the
// template with the ID, lower-cased, for TaskPlaceholder.
func (u TasksURL) Origin(id string) string {
	return strings.Replace(string(u), TaskPlaceholder, strings.ToLower(id), 1)
}

// Serves says whether a request whose Host header is host may reach task
// id: on a shared origin any may; on an origin per task only one for the
// task's own host name (whatever the port, which a proxy in front may
// change), compared without regard to case. An ID that is no DNS label
// names no host.
func (u TasksURL) Serves(host, id string) bool {
	if !u.PerTask() {
		return true
	}
	if !isLabel(id) {
		return false
	}
	origin, err := url.Parse(u.Origin(id))
	return err == nil && origin.Hostname() != "" && strings.EqualFold(hostname(host), origin.Hostname())
}

// isLabel says whether s can be a DNS label: 1 to 63 letters, digits and
// dashes.
func isLabel(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// hostname is host without its port.
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}
