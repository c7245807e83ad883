package views

import (
	"github.com/a-h/templ"
	"github.com/resolute-ml/resolute"
)

// navTab is one tab of a tabBar: its key (its link's id is "tab-"+Key),
// its label and its address.
type navTab struct {
	Key, Label, URL string
}

// workspaceTabs are a workspace page's tabs: its overview, Members and
// Settings.
func workspaceTabs(ws resolute.Workspace, current string) templ.Component {
	base := "/workspaces/" + itoa(ws.ID)
	return tabBar("Workspace", "workspace-tabs", []navTab{
		{"overview", "Overview", base},
		{"members", "Members", base + "/members"},
		{"settings", "Settings", base + "/settings"},
	}, current)
}

// adminTabs link the administrators' pages of users, groups and webhooks.
func adminTabs(current string) templ.Component {
	return tabBar("Administration", "admin-tabs", []navTab{
		{"users", "Users", "/admin/users"},
		{"groups", "Groups", "/admin/groups"},
		{"webhooks", "Webhooks", "/admin/webhooks"},
	}, current)
}

// experimentTabs link an experiment's tabs (ExperimentTabs).
func experimentTabs(id int64, current string) templ.Component {
	tabs := make([]navTab, len(ExperimentTabs))
	for i, t := range ExperimentTabs {
		tabs[i] = navTab{t.Key, t.Label, experimentTabURL(id, t.Key)}
	}
	return tabBar("Experiment sections", "experiment-tabs", tabs, current)
}

// trialTabs link the tabs the trial offers (TrialLive.Tabs).
func trialTabs(l TrialLive) templ.Component {
	var tabs []navTab
	for _, t := range l.Tabs() {
		tabs = append(tabs, navTab{t.Key, t.Label, trialTabURL(l.Trial.ID, t.Key)})
	}
	return tabBar("Trial sections", "trial-tabs", tabs, l.Tab)
}
