package masterconf

import (
	"strings"
	"testing"
	"time"
)

// TestRetentionPolicyAndWebhooksAreRead: master.yaml's retention_policy
// (log_retention_days, schedule as cron or an interval) and webhooks
// (signing_key, base_url) are read, with their defaults.
func TestRetentionPolicyAndWebhooksAreRead(t *testing.T) {
	tests := map[string]struct {
		yaml     string
		days     int
		from, at time.Time // the next cleanup after from is at
	}{
		"without the section logs are kept for ever, and the cleanup runs at midnight": {
			yaml: "", days: -1,
			from: time.Date(2026, 5, 1, 13, 0, 0, 0, time.Local), at: time.Date(2026, 5, 2, 0, 0, 0, 0, time.Local)},
		"a number of days and a cron schedule": {
			yaml: "retention_policy: {log_retention_days: 90, schedule: \"30 2 * * *\"}\n", days: 90,
			from: time.Date(2026, 5, 1, 13, 0, 0, 0, time.Local), at: time.Date(2026, 5, 2, 2, 30, 0, 0, time.Local)},
		"an interval as the schedule": {
			yaml: "retention_policy: {log_retention_days: 0, schedule: 6h}\n", days: 0,
			from: time.Date(2026, 5, 1, 13, 0, 0, 0, time.Local), at: time.Date(2026, 5, 1, 19, 0, 0, 0, time.Local)},
		"a macro of cron": {
			yaml: "retention_policy: {log_retention_days: 7, schedule: \"@daily\"}\n", days: 7,
			from: time.Date(2026, 5, 1, 13, 0, 0, 0, time.Local), at: time.Date(2026, 5, 2, 0, 0, 0, 0, time.Local)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := load(t, tt.yaml, nil)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.LogRetentionDays() != tt.days {
				t.Errorf("days %d, want %d", cfg.LogRetentionDays(), tt.days)
			}
			if got := cfg.RetentionSchedule().Next(tt.from); !got.Equal(tt.at) {
				t.Errorf("next cleanup %v, want %v", got, tt.at)
			}
		})
	}
	cfg, err := load(t, "webhooks: {signing_key: s3cret, base_url: \"https://det.example\"}\n", nil)
	if err != nil || cfg.Webhooks.SigningKey != "s3cret" || cfg.Webhooks.BaseURL != "https://det.example" {
		t.Fatalf("webhooks %+v, %v", cfg.Webhooks, err)
	}
	cfg, err = load(t, "", map[string]string{"RESOLUTE_WEBHOOKS_SIGNING_KEY": "from-env"})
	if err != nil || cfg.Webhooks.SigningKey != "from-env" {
		t.Fatalf("webhooks from the environment %+v, %v", cfg.Webhooks, err)
	}
}

func TestBadRetentionPoliciesAreRefusedNamingTheKey(t *testing.T) {
	tests := map[string]struct{ yaml, want string }{
		"days below -1":                        {"retention_policy: {log_retention_days: -2}\n", "retention_policy.log_retention_days: must be between -1 (keep for ever) and 32767 (got -2)"},
		"days above 32767":                     {"retention_policy: {log_retention_days: 40000}\n", "retention_policy.log_retention_days: must be between -1 (keep for ever) and 32767 (got 40000)"},
		"a schedule neither cron nor interval": {"retention_policy: {schedule: sometimes}\n", `retention_policy.schedule: expected a cron expression like "0 0 * * *" or an interval like 24h, got "sometimes"`},
		"an interval under a minute":           {"retention_policy: {schedule: 5s}\n", "retention_policy.schedule: an interval must be at least 1m (got 5s)"},
		"an unknown key":                       {"retention_policy: {log_retention: 3}\n", "retention_policy.log_retention: unknown key"},
		"a base URL that is not http":          {"webhooks: {base_url: det.example}\n", `webhooks.base_url: expected an http or https URL, got "det.example"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, tt.yaml, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant %q", err, tt.want)
			}
		})
	}
}
