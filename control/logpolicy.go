package control

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// Log policies and log-pattern webhooks act on the lines of trials' logs
// as the pump reads them, before the allocation's exit (which comes after
// its last line on the same channel): so a policy matched by a trial's last
// words is known when its failure is decided.
//
// A policy acts once per allocation: cancel_retries marks the trial so that
// a failure does not restart it; exclude_node records the agents of the
// allocation, which its next run must avoid. Either way the trial shows the
// policy's name. A TASK_LOG trigger fires once per allocation too.
//
// A line never holds the pump up: while the database is unavailable, lines
// wait in the watch and failed writes are kept; the allocation's exit, which
// the pump holds until the database is back anyway, settles them first.

// maxPendingLines bounds the lines an allocation keeps while the database
// is unavailable; later ones are not looked at.
const maxPendingLines = 10000

// logWatch is what the watcher knows of one trial allocation.
type logWatch struct {
	loaded      bool
	alloc       resolute.Allocation
	trialID     int64
	experiment  int64
	workspaceID int64
	ic          *expconf.WebhooksConfig
	policies    []logPolicy
	agents      []string
	done        map[string]bool // policies (by name) and triggers ("trigger N") that acted

	pending []string                          // lines not yet looked at: the watch could not be loaded
	unsaved []func(ctx context.Context) error // writes that failed, made again when the allocation ends
}

// logPolicy is a policy with its pattern compiled.
type logPolicy struct {
	expconf.LogPolicy
	re *regexp.Regexp
}

// logWatcher follows trials' log lines for the pump.
type logWatcher struct {
	c       *core
	watches map[string]*logWatch // by allocation
	regexes map[string]*regexp.Regexp
}

func newLogWatcher(c *core) *logWatcher {
	return &logWatcher{c: c, watches: map[string]*logWatch{}, regexes: map[string]*regexp.Regexp{}}
}

// forget drops what the watcher knows of an allocation that ended.
func (w *logWatcher) forget(allocationID string) { delete(w.watches, allocationID) }

// line looks at one line of a trial's allocation.
func (w *logWatcher) line(ctx context.Context, allocationID, line string) {
	lw, ok := w.watches[allocationID]
	if !ok {
		lw = &logWatch{alloc: resolute.Allocation{ID: allocationID}, done: map[string]bool{}}
		w.watches[allocationID] = lw
	}
	if !lw.loaded {
		if err := w.load(ctx, lw); err != nil {
			if !quiet(ctx, err) {
				w.c.logger.Error("log policies", "allocation", allocationID, "err", err)
				lw.loaded = true // nothing to act on
				return
			}
			if len(lw.pending) < maxPendingLines {
				lw.pending = append(lw.pending, line)
			}
			return
		}
		w.examinePending(ctx, lw)
	}
	w.examine(ctx, lw, line)
}

// settle finishes, waiting for the database, what the lines of an
// allocation that ended asked for; the pump calls it before the exit is
// handled.
func (w *logWatcher) settle(ctx context.Context, allocationID string) {
	lw, ok := w.watches[allocationID]
	if !ok {
		return
	}
	if !lw.loaded {
		err := untilAvailable(ctx, func() error { return w.load(ctx, lw) })
		if err != nil {
			if ctx.Err() == nil {
				w.c.logger.Error("log policies", "allocation", allocationID, "err", err)
			}
			return
		}
		w.examinePending(ctx, lw)
	}
	for len(lw.unsaved) > 0 && ctx.Err() == nil {
		fn := lw.unsaved[0]
		lw.unsaved = lw.unsaved[1:]
		if err := untilAvailable(ctx, func() error { return fn(ctx) }); err != nil && ctx.Err() == nil {
			w.c.logger.Error("log policies", "allocation", allocationID, "err", err)
		}
	}
}

func (w *logWatcher) examinePending(ctx context.Context, lw *logWatch) {
	pending := lw.pending
	lw.pending = nil
	for _, l := range pending {
		w.examine(ctx, lw, l)
	}
}

// examine acts on one line of a loaded watch.
func (w *logWatcher) examine(ctx context.Context, lw *logWatch, line string) {
	for _, p := range lw.policies {
		if p.re == nil || lw.done[p.Name] || !p.re.MatchString(line) {
			continue
		}
		lw.done[p.Name] = true
		w.do(ctx, lw, func(ctx context.Context) error { return w.applyPolicy(ctx, lw, p) })
	}
	if w.c.webhooks != nil && lw.trialID != 0 {
		w.do(ctx, lw, func(ctx context.Context) error { return w.taskLogHooks(ctx, lw, line) })
	}
}

// do makes a write now or, should it fail, when the allocation ends.
func (w *logWatcher) do(ctx context.Context, lw *logWatch, fn func(ctx context.Context) error) {
	if err := fn(ctx); err != nil {
		lw.unsaved = append(lw.unsaved, fn)
	}
}

// load reads what acting on an allocation's lines needs.
func (w *logWatcher) load(ctx context.Context, lw *logWatch) error {
	a, err := w.c.db.Allocation(ctx, lw.alloc.ID)
	if err != nil {
		return err
	}
	if a.TrialID == nil {
		lw.loaded = true
		return nil
	}
	t, err := w.c.db.Trial(ctx, *a.TrialID)
	if err != nil {
		return err
	}
	e, err := w.c.db.ExperimentForWebhook(ctx, t.ExperimentID)
	if err != nil {
		return err
	}
	lw.alloc, lw.trialID, lw.experiment, lw.workspaceID = a, t.ID, e.ID, e.WorkspaceID
	lw.agents = allocationAgents(a, w.c.rm.Agents(""))
	if cfg, err := expconf.ParseExperiment(e.Config); err == nil {
		for _, p := range cfg.LogPolicies {
			if p.Pattern == "" || p.Action == "" {
				continue // a name alone turns a default off
			}
			re, err := regexp.Compile(p.Pattern)
			if err != nil {
				continue // validated at submission
			}
			lw.policies = append(lw.policies, logPolicy{LogPolicy: p, re: re})
		}
		if cfg.Integrations != nil {
			lw.ic = cfg.Integrations.Webhooks
		}
	}
	lw.loaded = true
	return nil
}

// allocationAgents are the agents an allocation runs on: those of its
// slots, or every agent when it names none (the local resource manager,
// whose one agent is implied).
func allocationAgents(a resolute.Allocation, all []resolute.Agent) []string {
	var out []string
	for _, ag := range a.SlotAgents {
		if ag != "" && !slices.Contains(out, ag) {
			out = append(out, ag)
		}
	}
	if len(out) == 0 {
		for _, ag := range all {
			out = append(out, ag.ID)
		}
	}
	slices.Sort(out)
	return out
}

// applyPolicy records a matched policy on the trial and says so in its log.
func (w *logWatcher) applyPolicy(ctx context.Context, lw *logWatch, p logPolicy) error {
	cancel := p.Action == expconf.LogActionCancelRetries
	var exclude []string
	if p.Action == expconf.LogActionExcludeNode {
		exclude = lw.agents
	}
	name := p.Name
	if name == "" {
		name = p.Pattern // the legacy form has no name
	}
	if err := w.c.db.SetTrialLogPolicyMatched(ctx, lw.trialID, name, cancel, exclude); err != nil {
		return err
	}
	msg := fmt.Sprintf("log policy %q matched", name)
	switch p.Action {
	case expconf.LogActionCancelRetries:
		msg += ": the trial will not be restarted should it fail"
	case expconf.LogActionExcludeNode:
		msg += fmt.Sprintf(": agent %s excluded from the trial's next runs", strings.Join(exclude, ", "))
	}
	w.c.taskLog(ctx, lw.alloc, "WARNING", msg)
	w.c.logger.Info("log policy matched", "trial", lw.trialID, "policy", name, "action", p.Action)
	return nil
}

// taskLogHooks stores a delivery for each TASK_LOG trigger the line
// matches, of the webhooks that fire for the trial's experiment.
func (w *logWatcher) taskLogHooks(ctx context.Context, lw *logWatch, line string) error {
	s := w.c.webhooks
	hooks, err := s.webhooks(ctx)
	if err != nil {
		return err
	}
	woke := false
	for _, h := range hooks {
		if !webhookSelects(h, lw.workspaceID, lw.ic, false) {
			continue
		}
		for _, t := range h.Triggers {
			key := fmt.Sprintf("trigger %d", t.ID)
			if t.TriggerType != resolute.TriggerTaskLog || lw.done[key] {
				continue
			}
			re := w.regex(t.Regex())
			if re == nil || !re.MatchString(line) {
				continue
			}
			lw.done[key] = true
			eventID := newEventID()
			p := taskLogPayload{TaskID: lw.alloc.TaskID, NodeName: strings.Join(lw.agents, ","), TriggeringLog: line,
				ExperimentID: lw.experiment, TrialID: lw.trialID}
			body, err := taskLogBody(h.WebhookType, eventID, p, t.Regex(), s.now(), s.base)
			if err != nil {
				return err
			}
			d := db.NewDelivery{WebhookID: h.ID, EventID: eventID, EventType: "TASK_LOG", URL: h.URL, Payload: body, Due: s.now()}
			w.do(ctx, lw, func(ctx context.Context) error { return w.c.db.CreateWebhookDelivery(ctx, d) })
			woke = true
		}
	}
	if woke {
		s.Wake()
	}
	return nil
}

func (w *logWatcher) regex(s string) *regexp.Regexp {
	if re, ok := w.regexes[s]; ok {
		return re
	}
	re, _ := regexp.Compile(s)
	w.regexes[s] = re
	return re
}

// retryFacts is what decides whether a failed trial runs again.
type retryFacts struct {
	Active      bool // the experiment is active
	Restarts    int  // failures counted against max_restarts, this one included
	MaxRestarts int
	// RetriesCancelled: a cancel_retries log policy matched (Policy).
	RetriesCancelled bool
	Policy           string
	// Excluded are the agents exclude_node policies took away from the
	// trial; PoolAgents those of its resource pool.
	Excluded   []string
	PoolAgents []string
	Pool       string
}

// decideRetry says whether a failed trial is restarted, and if not because
// of a log policy, why (for its log):
//  1. a trial of an experiment that is not active is not;
//  2. a trial whose retries a log policy cancelled is not;
//  3. a trial past max_restarts is not;
//  4. a trial whose excluded agents are every agent of its pool is not: it
//     could never be placed (on the local resource manager, with its one
//     agent, exclude_node always ends the trial);
//  5. otherwise it is.
func decideRetry(f retryFacts) (bool, string) {
	switch {
	case !f.Active:
		return false, ""
	case f.RetriesCancelled:
		return false, fmt.Sprintf("log policy %q cancelled the trial's retries: it is not restarted", f.Policy)
	case f.Restarts > f.MaxRestarts:
		return false, ""
	}
	if len(f.Excluded) > 0 {
		left := 0
		for _, a := range f.PoolAgents {
			if !slices.Contains(f.Excluded, a) {
				left++
			}
		}
		if left == 0 {
			return false, fmt.Sprintf("log policy %q excluded agent %s, and resource pool %s has no other agent: the trial is not restarted",
				f.Policy, strings.Join(f.Excluded, ", "), f.Pool)
		}
	}
	return true, ""
}
