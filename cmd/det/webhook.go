package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

// webhookCmd is `det webhook`: the webhooks of Admin › Webhooks
// (/api/v1/webhooks), for administrators. Determined manages webhooks only
// in its web UI; these verbs and flags are Resolute's.
func (a *app) webhookCmd() *cobra.Command {
	cmd := group("webhook", "Manage webhooks (administrators)")
	cmd.AddCommand(a.webhookCreateCmd(), a.webhookListCmd(), a.webhookDeleteCmd(), a.webhookTestCmd())
	return cmd
}

func (a *app) webhookCreateCmd() *cobra.Command {
	var typ, mode, workspace, logRegex string
	var expStates, taskStates []string
	cmd := &cobra.Command{
		Use:   "create NAME URL [--type default|slack] [--mode workspace|specific] [--workspace W] [--experiment-state S]... [--task-state S]... [--task-log REGEX]",
		Short: "Add a webhook: URL is called when an experiment or task reaches a state, or a trial logs a matching line",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			w := resolute.Webhook{Name: argv[0], URL: argv[1], WebhookType: typ, Mode: mode}
			for _, st := range expStates {
				w.Triggers = append(w.Triggers, resolute.Trigger{TriggerType: resolute.TriggerExperimentStateChange,
					Condition: map[string]any{"state": strings.ToUpper(st)}})
			}
			for _, st := range taskStates {
				w.Triggers = append(w.Triggers, resolute.Trigger{TriggerType: resolute.TriggerTaskStateChange,
					Condition: map[string]any{"state": strings.ToUpper(st)}})
			}
			if logRegex != "" {
				w.Triggers = append(w.Triggers, resolute.Trigger{TriggerType: resolute.TriggerTaskLog,
					Condition: map[string]any{"regex": logRegex}})
			}
			if len(w.Triggers) == 0 {
				return usageError{fmt.Errorf("give at least one trigger: --experiment-state, --task-state or --task-log")}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if workspace != "" {
				ws, err := s.WorkspaceByName(cmd.Context(), workspace)
				if err != nil {
					return err
				}
				w.WorkspaceID = ws.ID
			}
			created, err := s.CreateWebhook(cmd.Context(), w)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Created webhook %d (%s)\n", created.ID, created.Name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&typ, "type", "default", "default (a JSON body, as Determined sends) or slack (a Slack message)")
	f.StringVar(&mode, "mode", "workspace", "workspace: every experiment (of --workspace); specific: only experiments whose integrations.webhooks names it")
	f.StringVar(&workspace, "workspace", "", "only experiments and tasks of this workspace (default every workspace)")
	f.StringArrayVar(&expStates, "experiment-state", nil, "fire when an experiment reaches this state, e.g. COMPLETED or ERROR (repeatable)")
	f.StringArrayVar(&taskStates, "task-state", nil, "fire when a command, notebook, shell or TensorBoard reaches this state, e.g. TERMINATED (repeatable)")
	f.StringVar(&logRegex, "task-log", "", "fire when a line of a trial's logs matches this regular expression")
	return cmd
}

func (a *app) webhookListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list [--json]", Aliases: []string{"ls"}, Short: "List the webhooks", Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			hooks, err := s.Webhooks(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, resolute.WebhooksResponse{Webhooks: hooks})
			}
			rows := make([][]string, len(hooks))
			for i, w := range hooks {
				var triggers []string
				for _, t := range w.Triggers {
					switch t.TriggerType {
					case resolute.TriggerTaskLog:
						triggers = append(triggers, "TASK_LOG /"+t.Regex()+"/")
					default:
						triggers = append(triggers, strings.TrimPrefix(t.TriggerType, "TRIGGER_TYPE_")+" "+t.State())
					}
				}
				ws := "all"
				if w.WorkspaceID != 0 {
					ws = strconv.FormatInt(w.WorkspaceID, 10)
				}
				rows[i] = []string{strconv.FormatInt(w.ID, 10), w.Name, w.URL, strings.TrimPrefix(w.WebhookType, "WEBHOOK_TYPE_"),
					strings.TrimPrefix(w.Mode, "WEBHOOK_MODE_"), ws, strings.Join(triggers, "; ")}
			}
			return table(a.stdout, []string{"ID", "Name", "URL", "Type", "Mode", "Workspace", "Triggers"}, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) webhookDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use: "delete ID", Short: "Delete a webhook", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "webhook", argv[0])
			if err != nil {
				return err
			}
			if err := s.DeleteWebhook(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Deleted webhook %d\n", id)
			return nil
		},
	}
}

func (a *app) webhookTestCmd() *cobra.Command {
	return &cobra.Command{
		Use: "test ID", Short: "Send a test event to a webhook now", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "webhook", argv[0])
			if err != nil {
				return err
			}
			if err := s.TestWebhook(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Webhook %d accepted the test event\n", id)
			return nil
		},
	}
}

// experimentLogRetentionCmd is `det experiment set log-retention ID
// (--days N | --forever)`, as Determined's.
func (a *app) experimentLogRetentionCmd() *cobra.Command {
	var days int
	var forever bool
	cmd := &cobra.Command{
		Use: "log-retention ID (--days N | --forever)", Short: "Set how many days an experiment's logs are kept",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("experiment", argv[0])
			if err != nil {
				return err
			}
			daysSet := cmd.Flags().Changed("days")
			switch {
			case daysSet == forever:
				return usageError{fmt.Errorf("give one of --days N or --forever")}
			case forever:
				days = -1
			case days < -1 || days > 32767:
				return usageError{fmt.Errorf("--days must be between -1 (for ever) and 32767, got %d", days)}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.SetExperimentLogRetention(cmd.Context(), id, days); err != nil {
				return err
			}
			if days < 0 {
				fmt.Fprintf(a.stdout, "Experiment %d's logs are kept for ever\n", id)
			} else {
				fmt.Fprintf(a.stdout, "Experiment %d's logs are kept for %d days\n", id, days)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&days, "days", 0, "days to keep the logs, from each line's time (-1: for ever)")
	cmd.Flags().BoolVar(&forever, "forever", false, "keep the logs for ever")
	return cmd
}

// taskCleanupLogsCmd is `det task cleanup-logs` (administrators): the
// retention cleanup, now.
func (a *app) taskCleanupLogsCmd() *cobra.Command {
	return &cobra.Command{
		Use: "cleanup-logs", Short: "Delete the task logs past their retention now (administrators)", Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			n, err := s.CleanupLogs(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Removed %d log lines\n", n)
			return nil
		},
	}
}
