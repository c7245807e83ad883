package control_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/expconf"
)

// pumped is a harness whose runner reads events through its pump, with a
// webhook sender.
type pumped struct {
	*harness
	events chan resolute.AllocationEvent
	sender *control.WebhookSender
}

func newPumped(t *testing.T, slots int) *pumped {
	rm := &eventfulRM{fakeRM: &fakeRM{total: slots, held: map[string][]int{}}, events: make(chan resolute.AllocationEvent)}
	return newPumpedOn(t, rm, rm.fakeRM, rm.events)
}

// newPumpedOn is newPumped over a resource manager of the test's.
func newPumpedOn(t *testing.T, rm control.ResourceManager, fake *fakeRM, events chan resolute.AllocationEvent) *pumped {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	admin, err := d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	defaults, _ := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": t.TempDir()}, nil)
	sender := control.NewWebhookSender(d, "k", "", quietLogger())
	h := &harness{t: t, db: d, rm: fake, ctx: ctx, admin: authz.User(admin.User)}
	h.run = control.NewRunner(d, control.NewConfigs(d, defaults), rm,
		control.RunOptions{MasterURL: "http://m", ClusterID: "c", WorkRoot: t.TempDir()}, quietLogger(),
		control.WithWebhooks(sender))
	h.x = h.run.Experiments
	go h.run.Admission.Pump(ctx)
	return &pumped{harness: h, events: events, sender: sender}
}

// logs plays lines printed by an allocation.
func (p *pumped) logs(allocationID string, lines ...string) {
	for _, l := range lines {
		p.events <- resolute.AllocationLog{AllocationID: allocationID, Time: time.Now(), Stream: "stdout", Line: l}
	}
}

// fails plays the allocation's exit with code 1 and waits until the runner
// has handled it.
func (p *pumped) fails(allocationID string) {
	p.t.Helper()
	p.rm.release(allocationID)
	p.events <- resolute.AllocationExited{AllocationID: allocationID, ExitCode: 1, Time: time.Now()}
	waitFor(p.t, func() bool {
		a, err := p.db.Allocation(p.ctx, allocationID)
		return err == nil && a.State == "TERMINATED"
	}, "allocation "+allocationID+" ended")
}

const policyConfig = `
name: policies
entrypoint: python3 train.py
hyperparameters: {lr: 0.1}
searcher: {name: single, metric: loss}
max_restarts: 3
log_policies:
  - name: Bad data
    pattern: "corrupt record \\d+"
    action: cancel_retries
`

// TestALogPolicyCancelsTheRetriesOfATrialThatPrintsItsPattern: an entry of
// log_policies (its name, its pattern, its action cancel_retries, or the
// older action: {type: cancel_retries}) stops a failed trial's restarts once
// one of its lines matched; task_container_defaults.log_policies add to them.
func TestALogPolicyCancelsTheRetriesOfATrialThatPrintsItsPattern(t *testing.T) {
	tests := map[string]struct {
		line        string
		wantRestart bool
		wantPolicy  string
	}{
		"a trial that prints the pattern and fails is not restarted": {"ValueError: corrupt record 17", false, "Bad data"},
		"a trial that fails without printing it is restarted":        {"ValueError: something else", true, ""},
		"the default CUDA OOM policy cancels retries too":            {"RuntimeError: CUDA out of memory. Tried to allocate 2 GiB", false, "CUDA OOM"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := newPumped(t, 1)
			e := p.create(policyConfig)
			p.admit()
			first := p.rm.running()[0]
			p.logs(first.AllocationID, "epoch 1", tt.line)
			p.fails(first.AllocationID)
			p.admit()
			trials, _ := p.db.Trials(p.ctx, e.ID)
			restarted := len(p.rm.running()) == 1
			if restarted != tt.wantRestart || trials[0].LogPolicyMatched != tt.wantPolicy {
				t.Fatalf("restarted %v (want %v), policy %q (want %q), trial %s", restarted, tt.wantRestart,
					trials[0].LogPolicyMatched, tt.wantPolicy, trials[0].State)
			}
			if !tt.wantRestart {
				if got := p.experiment(e.ID); got.State != resolute.StateError || trials[0].State != resolute.StateError {
					t.Fatalf("experiment %s, trial %s", got.State, trials[0].State)
				}
				logs, _ := p.db.TaskLogs(p.ctx, trials[0].TaskID(), dbLogFilter())
				if !anyLine(logs, `log policy "`+tt.wantPolicy+`" cancelled the trial's retries: it is not restarted`) {
					t.Errorf("the trial's log does not say why it was not restarted: %v", lines(logs))
				}
			}
		})
	}
}

const excludeConfig = `
name: exclude
entrypoint: python3 train.py
hyperparameters: {lr: 0.1}
searcher: {name: single, metric: loss}
max_restarts: 3
log_policies:
  - name: Bad GPU
    pattern: "Xid 79"
    action: exclude_node
`

func TestExcludeNodeOnTheOneAgentOfTheLocalResourceManagerEndsTheTrial(t *testing.T) {
	p := newPumped(t, 1)
	e := p.create(excludeConfig)
	p.admit()
	first := p.rm.running()[0]
	p.logs(first.AllocationID, "NVRM: Xid 79, GPU has fallen off the bus")
	p.fails(first.AllocationID)
	p.admit()
	if r := p.rm.running(); len(r) != 0 {
		t.Fatalf("the trial ran again on the agent its policy excluded: %+v", r)
	}
	trials, _ := p.db.Trials(p.ctx, e.ID)
	if trials[0].LogPolicyMatched != "Bad GPU" || strings.Join(trials[0].ExcludedAgents, ",") != "machine" || trials[0].State != resolute.StateError {
		t.Fatalf("trial %+v", trials[0])
	}
	logs, _ := p.db.TaskLogs(p.ctx, trials[0].TaskID(), dbLogFilter())
	if !anyLine(logs, `log policy "Bad GPU" excluded agent machine, and resource pool default has no other agent: the trial is not restarted`) {
		t.Errorf("the trial's log does not say why: %v", lines(logs))
	}
}

func TestWhetherAFailedTrialRunsAgain(t *testing.T) {
	tests := map[string]struct {
		active           bool
		restarts, max    int
		cancelled        bool
		excluded, agents []string
		want             bool
		wantWhy          string
	}{
		"an active experiment's trial within max_restarts runs again": {true, 1, 3, false, nil, []string{"a"}, true, ""},
		"a trial past max_restarts does not":                          {true, 4, 3, false, nil, []string{"a"}, false, ""},
		"a trial of a paused or stopping experiment does not":         {false, 1, 3, false, nil, []string{"a"}, false, ""},
		"a trial whose retries a policy cancelled does not":           {true, 1, 3, true, nil, []string{"a"}, false, `log policy "P" cancelled the trial's retries: it is not restarted`},
		"a trial that excluded the only agent does not (local resource manager)": {true, 1, 3, false, []string{"local"}, []string{"local"}, false,
			`log policy "P" excluded agent local, and resource pool default has no other agent: the trial is not restarted`},
		"a trial that excluded one node of several runs again elsewhere": {true, 1, 3, false, []string{"node-a"}, []string{"node-a", "node-b"}, true, ""},
		"a trial that excluded every node does not": {true, 1, 3, false, []string{"node-a", "node-b"}, []string{"node-a", "node-b"}, false,
			`log policy "P" excluded agent node-a, node-b, and resource pool default has no other agent: the trial is not restarted`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, why := control.DecideRetry(tt.active, tt.restarts, tt.max, tt.cancelled, "P", tt.excluded, tt.agents)
			if got != tt.want || why != tt.wantWhy {
				t.Errorf("got %v %q, want %v %q", got, why, tt.want, tt.wantWhy)
			}
		})
	}
}

func TestATaskLogTriggerFiresOnceWhenATrialLogsAMatchingLine(t *testing.T) {
	p := newPumped(t, 1)
	rc := newReceiver(t, nil)
	p.webhookOn(rc.URL, "", resolute.Trigger{TriggerType: "TASK_LOG", Condition: map[string]any{"regex": `loss=nan`}})
	slack := p.webhookOn(rc.URL+"/slack", "SLACK", resolute.Trigger{TriggerType: "TASK_LOG", Condition: map[string]any{"regex": `loss=nan`}})
	e := p.create(single)
	p.admit()
	a := p.rm.running()[0]
	p.logs(a.AllocationID, "step 1 loss=0.5", "step 2 loss=nan", "step 3 loss=nan")
	// The pump handled the lines once the exit that follows them is handled.
	p.fails(a.AllocationID)
	if err := p.sender.Cycle(p.ctx); err != nil {
		t.Fatal(err)
	}
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want one per webhook", len(got))
	}
	trials, _ := p.db.Trials(p.ctx, e.ID)
	for _, r := range got {
		var def struct {
			EventType string         `json:"event_type"`
			Condition map[string]any `json:"condition"`
			Data      struct {
				TaskLog map[string]any `json:"task_log"`
			} `json:"event_data"`
		}
		var sl struct {
			Blocks []struct{ Text struct{ Text string } }
		}
		json.Unmarshal(r.body, &def)
		json.Unmarshal(r.body, &sl)
		switch {
		case def.EventType == "TASK_LOG":
			if def.Condition["regex"] != "loss=nan" || def.Data.TaskLog["triggering_log"] != "step 2 loss=nan" ||
				def.Data.TaskLog["task_id"] != trials[0].TaskID() || def.Data.TaskLog["node_name"] != "machine" {
				t.Errorf("default body %s", r.body)
			}
		case len(sl.Blocks) == 1 && strings.Contains(sl.Blocks[0].Text.Text, "```step 2 loss=nan```"):
			if !strings.Contains(sl.Blocks[0].Text.Text, "This log matched the regex\n```loss=nan```") {
				t.Errorf("slack body %s", r.body)
			}
		default:
			t.Errorf("unexpected body %s", r.body)
		}
	}
	if ds, _ := p.db.WebhookDeliveries(p.ctx, slack.ID, 10); len(ds) != 1 || ds[0].EventType != "TASK_LOG" {
		t.Errorf("slack deliveries %+v", ds)
	}
}

// TestASpecificTaskLogWebhookFiresOnlyForExperimentsThatNameIt: a SPECIFIC
// webhook fires only for experiments whose integrations.webhooks names it
// (webhook_name here; webhook_id and exclude in
// TestWhichWebhooksFireForAnExperiment).
func TestASpecificTaskLogWebhookFiresOnlyForExperimentsThatNameIt(t *testing.T) {
	p := newPumped(t, 2)
	rc := newReceiver(t, nil)
	svc := control.NewServices(p.db, p.run, nil, quietLogger())
	if _, err := svc.Webhooks.Create(p.ctx, p.admin, resolute.Webhook{Name: "alerts", URL: rc.URL, Mode: "SPECIFIC",
		Triggers: []resolute.Trigger{{TriggerType: "TASK_LOG", Condition: map[string]any{"regex": "ALERT"}}}}); err != nil {
		t.Fatal(err)
	}
	named := p.create(single + "integrations:\n  webhooks:\n    webhook_name: [alerts]\n")
	other := p.create(strings.Replace(single, "name: one", "name: two", 1))
	p.admit()
	for _, a := range p.rm.running() {
		p.logs(a.AllocationID, "ALERT from "+a.TaskID)
		p.fails(a.AllocationID)
	}
	if err := p.sender.Cycle(p.ctx); err != nil {
		t.Fatal(err)
	}
	got := rc.requests()
	namedTrials, _ := p.db.Trials(p.ctx, named.ID)
	if len(got) != 1 || !strings.Contains(string(got[0].body), namedTrials[0].TaskID()) {
		t.Fatalf("requests %d (want 1, for experiment %d, not %d)", len(got), named.ID, other.ID)
	}
}

func dbLogFilter() db.LogFilter { return db.LogFilter{Limit: 1000} }

func anyLine(logs []resolute.TaskLog, want string) bool {
	for _, l := range logs {
		if l.Log == want {
			return true
		}
	}
	return false
}

func lines(logs []resolute.TaskLog) []string {
	out := make([]string, len(logs))
	for i, l := range logs {
		out[i] = l.Log
	}
	return out
}

// nodesRM has two agents, node-a and node-b, of one slot each.
type nodesRM struct {
	*eventfulRM
	mu     sync.Mutex
	placed map[string]string // allocation → agent, while it runs
}

func (n *nodesRM) Agents(string) []resolute.Agent {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []resolute.Agent
	for _, id := range []string{"node-a", "node-b"} {
		a := resolute.Agent{ID: id, Slots: []resolute.Slot{{ID: 0, Device: "cpu"}}}
		for alloc, on := range n.placed {
			if on == id {
				a.Slots[0].AllocationID = alloc
			}
		}
		out = append(out, a)
	}
	return out
}

func (n *nodesRM) Launch(ctx context.Context, s resolute.LaunchSpec) error {
	n.mu.Lock()
	n.placed[s.AllocationID] = s.SlotAgents[0]
	n.mu.Unlock()
	return n.eventfulRM.Launch(ctx, s)
}

func (n *nodesRM) where(allocationID string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.placed[allocationID]
}

func (n *nodesRM) release(allocationID string) {
	n.mu.Lock()
	delete(n.placed, allocationID)
	n.mu.Unlock()
	n.fakeRM.release(allocationID)
}

// TestExcludeNodeRestartsTheTrialOnAnotherAgent: a log_policies entry whose
// action is exclude_node sends the trial's next run to another agent.
func TestExcludeNodeRestartsTheTrialOnAnotherAgent(t *testing.T) {
	rm := &nodesRM{eventfulRM: &eventfulRM{fakeRM: &fakeRM{total: 1, held: map[string][]int{}}, events: make(chan resolute.AllocationEvent)},
		placed: map[string]string{}}
	p := newPumpedOn(t, rm, rm.fakeRM, rm.events)
	e := p.create(excludeConfig)
	p.admit()
	first := p.rm.running()[0]
	bad := rm.where(first.AllocationID)
	p.logs(first.AllocationID, "NVRM: Xid 79, GPU has fallen off the bus")
	rm.release(first.AllocationID)
	p.fails(first.AllocationID)
	// Both agents are free; the trial goes to the one it did not exclude,
	// every time the scheduler looks.
	for range 3 {
		p.admit()
	}
	run := p.rm.running()
	if len(run) != 1 {
		t.Fatalf("running %+v", run)
	}
	if got := rm.where(run[0].AllocationID); got == bad || got == "" {
		t.Fatalf("the trial ran again on %q, which its log policy excluded", got)
	}
	trials, _ := p.db.Trials(p.ctx, e.ID)
	if trials[0].LogPolicyMatched != "Bad GPU" || strings.Join(trials[0].ExcludedAgents, ",") != bad {
		t.Fatalf("trial %+v", trials[0])
	}
}
