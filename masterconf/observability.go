package masterconf

import "fmt"

// MinMetricsTokenLength bounds observability.metrics_token from below: it
// is a password that Prometheus servers send.
const MinMetricsTokenLength = 16

// Observability is the master's own Prometheus series (Determined's
// observability section): GET /metrics, off unless EnablePrometheus.
type Observability struct {
	// EnablePrometheus serves GET /metrics to administrators (a session or
	// an API token of one) and to the bearer of MetricsToken.
	EnablePrometheus bool `yaml:"enable_prometheus"`
	// MetricsToken, when set, is a bearer token that reads /metrics and
	// nothing else: what a Prometheus server (or the Helm chart's
	// ServiceMonitor) sends. At least MinMetricsTokenLength characters.
	MetricsToken string `yaml:"metrics_token"`
}

// check refuses a token too short to be a secret, and one that would do
// nothing because /metrics is off.
func (o Observability) check() Errors {
	var errs Errors
	switch {
	case o.MetricsToken != "" && !o.EnablePrometheus:
		errs = append(errs, FieldError{Path: "observability.metrics_token",
			Message: "has no effect unless observability.enable_prometheus is true"})
	case o.MetricsToken != "" && len(o.MetricsToken) < MinMetricsTokenLength:
		errs = append(errs, FieldError{Path: "observability.metrics_token",
			Message: fmt.Sprintf("must be at least %d characters (got %d)", MinMetricsTokenLength, len(o.MetricsToken))})
	}
	return errs
}
