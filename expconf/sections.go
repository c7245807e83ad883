package expconf

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ResourcesConfig is the `resources` section of an experiment.
type ResourcesConfig struct {
	SlotsPerTrial int     // default 1; 0 is a CPU-only trial
	MaxSlots      *int    // experiment-wide cap; nil means none
	Weight        float64 // default 1 (fair share)
	// Priority is nil when unset: the scheduler applies the resource
	// manager's default (42 local, 50 on Kubernetes).
	Priority     *int
	ResourcePool string // "" means the default pool
	ShmSize      *int64 // bytes; YAML accepts an integer or "4G"
	Devices      []Device
	IsSingleNode *bool
}

// Log policy actions.
const (
	LogActionCancelRetries = "cancel_retries"
	LogActionExcludeNode   = "exclude_node"
)

// LogPolicy is one entry of `log_policies`: when a log line of a trial
// matches Pattern, Action is taken and Name is shown as a label. A policy
// written in the legacy form (`action: {type: ...}`) may have no name.
type LogPolicy struct {
	Name    string
	Pattern string // a Go regular expression; "" matches nothing
	Action  string // "", cancel_retries or exclude_node
}

// DefaultLogPolicies are applied to every experiment. A user policy with
// the same name replaces the default one; a policy with only a name turns a
// default off.
func DefaultLogPolicies() []LogPolicy {
	return []LogPolicy{
		{Name: "CUDA OOM", Pattern: ".*CUDA out of memory.*", Action: LogActionCancelRetries},
		{Name: "ECC Error", Pattern: ".*uncorrectable ECC error encountered.*", Action: LogActionExcludeNode},
	}
}

// ProfilingConfig is the `profiling` section.
type ProfilingConfig struct {
	Enabled       bool
	BeginOnBatch  int
	EndAfterBatch *int
	SyncTimings   bool // default true
}

// IntegrationsConfig is the `integrations` section.
type IntegrationsConfig struct {
	Webhooks *WebhooksConfig
	// Pachyderm is kept as given: it only carries metadata about the data
	// set for display.
	Pachyderm map[string]any
}

// WebhooksConfig selects which webhooks fire for an experiment.
type WebhooksConfig struct {
	WebhookIDs   []int
	WebhookNames []string
	Exclude      bool
}

func (d *decoder) resources(n *yaml.Node, p string, task bool) (ResourcesConfig, int) {
	o := d.object(n, p)
	r := ResourcesConfig{SlotsPerTrial: 1, Weight: 1}
	slots := 1
	if task {
		if o.integer("slots", &slots) && slots < 0 {
			d.fail(o.take("slots"), join(p, "slots"), "must be 0 or more, got %d", slots)
		}
		o.reject("is_single_node", "not allowed in a command, notebook, shell or TensorBoard config")
	} else {
		if o.integer("slots_per_trial", &r.SlotsPerTrial) && r.SlotsPerTrial < 0 {
			d.fail(o.take("slots_per_trial"), join(p, "slots_per_trial"), "must be 0 or more, got %d", r.SlotsPerTrial)
		}
		if r.MaxSlots = o.intPtr("max_slots"); r.MaxSlots != nil && *r.MaxSlots < 0 {
			d.fail(o.take("max_slots"), join(p, "max_slots"), "must be 0 or more, got %d", *r.MaxSlots)
		}
		r.IsSingleNode = o.boolPtr("is_single_node")
		o.deprecated("native_parallel", "deprecated and ignored")
		o.deprecated("agent_label", "removed; use resource_pool instead (ignored)")
	}
	if o.number("weight", &r.Weight) && r.Weight <= 0 {
		d.fail(o.take("weight"), join(p, "weight"), "must be greater than 0, got %s", fmtNum(r.Weight))
	}
	if r.Priority = o.intPtr("priority"); r.Priority != nil && (*r.Priority < 1 || *r.Priority > 99) {
		d.fail(o.take("priority"), join(p, "priority"), "must be between 1 and 99, got %d", *r.Priority)
	}
	o.str("resource_pool", &r.ResourcePool)
	if sn := o.take("shm_size"); sn != nil {
		if size, ok := d.byteSize(sn, join(p, "shm_size")); ok {
			r.ShmSize = &size
		}
	}
	r.Devices = d.devices(o)
	o.done()
	return r, slots
}

// byteSize reads an integer number of bytes or a size like "4G", "512Mi"
// (binary multiples, as Docker reads them).
func (d *decoder) byteSize(n *yaml.Node, p string) (int64, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		v, ok := d.integer(n, p)
		if ok && v < 0 {
			d.fail(n, p, "must be 0 or more, got %d", v)
		}
		return int64(v), ok && v >= 0
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		if v, ok := parseByteSize(n.Value); ok {
			return v, true
		}
	}
	d.fail(n, p, "expected a number of bytes or a size like \"4G\", got %s", describe(n))
	return 0, false
}

func parseByteSize(s string) (int64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "b"), "i")
	mult := int64(1)
	if s != "" {
		if i := strings.IndexByte("kmgtp", s[len(s)-1]); i >= 0 {
			for range i + 1 {
				mult *= 1024
			}
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<62 {
		return 0, false
	}
	return int64(f * float64(mult)), true
}

func (d *decoder) logPolicies(o *object) []LogPolicy {
	if !o.has("log_policies") {
		o.take("log_policies")
		return DefaultLogPolicies()
	}
	items, ok := o.list("log_policies")
	if !ok {
		return DefaultLogPolicies()
	}
	var user []LogPolicy
	names := map[string]bool{}
	for i, item := range items {
		ip := index("log_policies", i)
		po := d.object(item, ip)
		var lp LogPolicy
		po.str("name", &lp.Name)
		if po.str("pattern", &lp.Pattern) {
			if _, err := regexp.Compile(lp.Pattern); err != nil {
				d.fail(po.take("pattern"), join(ip, "pattern"), "not a valid regular expression: %v", err)
			}
		}
		legacy := false
		if an := po.take("action"); an != nil {
			if an.Kind == yaml.MappingNode {
				legacy = true
				ao := d.object(an, join(ip, "action"))
				if !ao.str("type", &lp.Action) {
					d.fail(an, join(ip, "action.type"), "required")
				} else {
					d.oneOf(ao.take("type"), join(ip, "action.type"), lp.Action, LogActionCancelRetries, LogActionExcludeNode)
				}
				ao.done()
			} else if s, ok := d.scalarString(an, join(ip, "action")); ok {
				lp.Action = s
				d.oneOf(an, join(ip, "action"), s, LogActionCancelRetries, LogActionExcludeNode)
			}
		}
		switch {
		case lp.Name == "" && !legacy:
			d.fail(po.line(), join(ip, "name"), "required")
		case lp.Name != "" && names[lp.Name]:
			d.fail(po.take("name"), join(ip, "name"), "duplicate log policy name %q", lp.Name)
		}
		if legacy && lp.Pattern == "" {
			d.fail(po.line(), join(ip, "pattern"), "required in the legacy form with action.type")
		}
		names[lp.Name] = true
		po.done()
		user = append(user, lp)
	}
	// Defaults first, replaced in place by user policies of the same name.
	out := []LogPolicy{}
	for _, def := range DefaultLogPolicies() {
		if !names[def.Name] {
			out = append(out, def)
		}
	}
	return append(out, user...)
}

func renderLogPolicies(lps []LogPolicy) []any {
	out := make([]any, 0, len(lps))
	for _, lp := range lps {
		m := map[string]any{}
		if lp.Pattern != "" {
			m["pattern"] = lp.Pattern
		}
		if lp.Name == "" {
			m["action"] = map[string]any{"type": lp.Action}
		} else {
			m["name"] = lp.Name
			if lp.Action != "" {
				m["action"] = lp.Action
			}
		}
		out = append(out, m)
	}
	return out
}

func (d *decoder) profiling(n *yaml.Node) ProfilingConfig {
	o := d.object(n, "profiling")
	pc := ProfilingConfig{SyncTimings: true}
	o.boolean("enabled", &pc.Enabled)
	if o.integer("begin_on_batch", &pc.BeginOnBatch) && pc.BeginOnBatch < 0 {
		d.fail(o.take("begin_on_batch"), "profiling.begin_on_batch", "must be 0 or more, got %d", pc.BeginOnBatch)
	}
	if pc.EndAfterBatch = o.intPtr("end_after_batch"); pc.EndAfterBatch != nil && *pc.EndAfterBatch < pc.BeginOnBatch {
		d.fail(o.take("end_after_batch"), "profiling.end_after_batch", "must not be less than begin_on_batch (got %d < %d)", *pc.EndAfterBatch, pc.BeginOnBatch)
	}
	o.boolean("sync_timings", &pc.SyncTimings)
	o.done()
	return pc
}

func (d *decoder) integrations(n *yaml.Node) *IntegrationsConfig {
	o := d.object(n, "integrations")
	ic := &IntegrationsConfig{}
	if wn := o.take("webhooks"); wn != nil {
		wo := d.object(wn, "integrations.webhooks")
		w := &WebhooksConfig{}
		if items, ok := wo.list("webhook_id"); ok {
			w.WebhookIDs = []int{}
			for i, item := range items {
				if item == nil {
					d.fail(nil, index("integrations.webhooks.webhook_id", i), "expected an integer, got null")
				} else if v, ok := d.integer(item, index("integrations.webhooks.webhook_id", i)); ok {
					w.WebhookIDs = append(w.WebhookIDs, v)
				}
			}
		}
		w.WebhookNames = wo.strList("webhook_name")
		wo.boolean("exclude", &w.Exclude)
		wo.done()
		ic.Webhooks = w
	}
	if ic.Pachyderm = o.freeForm("pachyderm"); ic.Pachyderm != nil {
		d.warn("integrations.pachyderm", "kept with the config only: Resolute has no Pachyderm integration")
	}
	o.done()
	return ic
}

func (ic *IntegrationsConfig) render() map[string]any {
	if ic == nil {
		return nil
	}
	m := map[string]any{}
	if w := ic.Webhooks; w != nil {
		wm := map[string]any{"exclude": w.Exclude}
		if w.WebhookIDs != nil {
			wm["webhook_id"] = w.WebhookIDs
		}
		if w.WebhookNames != nil {
			wm["webhook_name"] = w.WebhookNames
		}
		m["webhooks"] = wm
	}
	if ic.Pachyderm != nil {
		m["pachyderm"] = ic.Pachyderm
	}
	return m
}

func (r ResourcesConfig) render(task bool, slots int) map[string]any {
	m := map[string]any{"weight": r.Weight}
	if task {
		m["slots"] = slots
	} else {
		m["slots_per_trial"] = r.SlotsPerTrial
		if r.MaxSlots != nil {
			m["max_slots"] = *r.MaxSlots
		}
		if r.IsSingleNode != nil {
			m["is_single_node"] = *r.IsSingleNode
		}
	}
	if r.Priority != nil {
		m["priority"] = *r.Priority
	}
	if r.ResourcePool != "" {
		m["resource_pool"] = r.ResourcePool
	}
	if r.ShmSize != nil {
		m["shm_size"] = *r.ShmSize
	}
	if r.Devices != nil {
		m["devices"] = renderDevices(r.Devices)
	}
	return m
}
