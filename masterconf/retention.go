package masterconf

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Webhooks is master.yaml's webhooks section (Determined's).
type Webhooks struct {
	// SigningKey signs every webhook request (X-Determined-AI-Signature);
	// without it the master uses a key made once and kept in its database.
	SigningKey string `yaml:"signing_key"`
	// BaseURL is the web UI's address that Slack messages link to; without
	// it they carry no links.
	BaseURL string `yaml:"base_url"`
}

// RetentionPolicy is master.yaml's retention_policy section: task logs
// older than LogRetentionDays are deleted on Schedule. Experiments may keep
// theirs longer or shorter (their config's retention_policy, or det
// experiment set log-retention).
type RetentionPolicy struct {
	// LogRetentionDays is how many days logs are kept, -1 for ever (the
	// default when the section is absent); 0 deletes them at the next
	// cleanup.
	LogRetentionDays *int `yaml:"log_retention_days"`
	// Schedule is when the cleanup runs: a cron expression (five fields,
	// e.g. "0 0 * * *", or @daily) or an interval such as 24h. Default
	// "0 0 * * *": daily at midnight, the master's local time.
	Schedule string `yaml:"schedule"`
}

// DefaultRetentionSchedule is when the log cleanup runs unless
// retention_policy.schedule says otherwise.
const DefaultRetentionSchedule = "0 0 * * *"

// LogRetentionDays is the master's default log retention in days; -1
// keeps logs for ever.
func (c Config) LogRetentionDays() int {
	if c.RetentionPolicy == nil || c.RetentionPolicy.LogRetentionDays == nil {
		return -1
	}
	return *c.RetentionPolicy.LogRetentionDays
}

// RetentionSchedule is when the log cleanup runs; Load has validated it.
func (c Config) RetentionSchedule() cron.Schedule {
	s := DefaultRetentionSchedule
	if c.RetentionPolicy != nil && c.RetentionPolicy.Schedule != "" {
		s = c.RetentionPolicy.Schedule
	}
	sched, _ := parseSchedule(s)
	return sched
}

// parseSchedule reads a cron expression or an interval.
func parseSchedule(s string) (cron.Schedule, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < time.Minute {
			return nil, fmt.Errorf("an interval must be at least 1m (got %s)", s)
		}
		return cron.Every(d), nil
	}
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return nil, fmt.Errorf("expected a cron expression like \"0 0 * * *\" or an interval like 24h, got %q", s)
	}
	return sched, nil
}

// checkRetention validates retention_policy and webhooks.
func (c *Config) checkRetention() Errors {
	var errs Errors
	if p := c.RetentionPolicy; p != nil {
		if d := p.LogRetentionDays; d != nil && (*d < -1 || *d > 32767) {
			errs = append(errs, FieldError{Path: "retention_policy.log_retention_days",
				Message: fmt.Sprintf("must be between -1 (keep for ever) and 32767 (got %d)", *d)})
		}
		if p.Schedule != "" {
			if _, err := parseSchedule(p.Schedule); err != nil {
				errs = append(errs, FieldError{Path: "retention_policy.schedule", Message: err.Error()})
			}
		}
	}
	if u := c.Webhooks.BaseURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		errs = append(errs, FieldError{Path: "webhooks.base_url", Message: fmt.Sprintf("expected an http or https URL, got %q", u)})
	}
	return errs
}
