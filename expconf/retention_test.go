package expconf_test

import (
	"testing"

	"github.com/resolute-ml/resolute/expconf"
)

func TestAnEmptyRetentionPolicyLeavesTheMastersRetention(t *testing.T) {
	base := "entrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n"
	for name, tt := range map[string]struct {
		yaml string
		want *int
	}{
		"no section":             {"", nil},
		"a section without days": {"retention_policy: {}\n", nil},
		"a number of days":       {"retention_policy: {log_retention_days: 0}\n", new(0)},
		"for ever":               {"retention_policy: {log_retention_days: -1}\n", new(-1)},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := expconf.ParseExperiment([]byte(base + tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == nil && c.RetentionPolicy != nil:
				t.Errorf("retention policy %+v, want none", *c.RetentionPolicy)
			case tt.want != nil && (c.RetentionPolicy == nil || c.RetentionPolicy.LogRetentionDays != *tt.want):
				t.Errorf("retention policy %+v, want %d days", c.RetentionPolicy, *tt.want)
			}
		})
	}
}
