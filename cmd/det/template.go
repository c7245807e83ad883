package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) templateCmd() *cobra.Command {
	cmd := group("template", "Manage configuration templates", "tpl")
	cmd.AddCommand(a.templateListCmd(), a.templateDescribeCmd(), a.templateCreateCmd(),
		a.templateSetCmd(), a.templateRemoveCmd())
	return cmd
}

// readFile reads a config file; "-" is standard input.
func (a *app) readFile(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(a.stdin)
	}
	return os.ReadFile(path)
}

func (a *app) templateListCmd() *cobra.Command {
	var details bool
	var lf listFlags
	cmd := &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List templates", Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			list, err := s.Templates(cmd.Context())
			if err != nil {
				return err
			}
			list = page(lf, list)
			if lf.asJSON {
				return printJSON(a.stdout, list)
			}
			if details {
				for _, t := range list {
					fmt.Fprintf(a.stdout, "# %s (workspace %s, by %s)\n%s\n", t.Name, t.WorkspaceName, t.Username, t.ConfigYAML)
				}
				return nil
			}
			rows := make([][]string, len(list))
			for i, t := range list {
				rows[i] = []string{t.Name, t.WorkspaceName, t.Username, date(t.UpdatedAt)}
			}
			return table(lf.out(a.stdout), []string{"Name", "Workspace", "Owner", "Updated"}, rows)
		},
	}
	lf.add(cmd)
	cmd.Flags().BoolVarP(&details, "details", "d", false, "print every template's YAML")
	return cmd
}

func (a *app) templateDescribeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "describe NAME", Short: "Print a template's YAML", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			t, err := s.Template(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, t)
			}
			_, err = io.WriteString(a.stdout, t.ConfigYAML)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) templateCreateCmd() *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use: "create NAME FILE", Short: "Create a template from a YAML file ('-' reads standard input)",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			data, err := a.readFile(argv[1])
			if err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			var wsID int64
			if workspace != "" {
				ws, err := s.WorkspaceByName(cmd.Context(), workspace)
				if err != nil {
					return err
				}
				wsID = ws.ID
			}
			t, err := s.CreateTemplate(cmd.Context(), argv[0], string(data), wsID)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Created template %s in workspace %s.\n", t.Name, t.WorkspaceName)
			return nil
		},
	}
	cmd.Flags().StringVarP(&workspace, "workspace", "w", "", "workspace of the template (default Uncategorized)")
	return cmd
}

func (a *app) templateSetCmd() *cobra.Command {
	return &cobra.Command{
		Use: "set NAME FILE", Aliases: []string{"set-value"}, Short: "Create a template or replace its YAML",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			data, err := a.readFile(argv[1])
			if err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			t, err := s.SetTemplate(cmd.Context(), argv[0], string(data))
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Set template %s.\n", t.Name)
			return nil
		},
	}
}

func (a *app) templateRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use: "remove NAME", Aliases: []string{"rm"}, Short: "Delete a template", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.DeleteTemplate(cmd.Context(), argv[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Removed template %s.\n", argv[0])
			return nil
		},
	}
}

// previewSearchCmd is `det preview-search CONFIG`: the searcher's plan for a
// config (trials, ASHA rungs and their time_metric targets), or every error.
func (a *app) previewSearchCmd() *cobra.Command {
	var template string
	var overrides []string
	var asJSON bool
	cmd := &cobra.Command{
		Use: "preview-search CONFIG", Short: "Show the trials a config's hyperparameter search would create",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			data, err := a.readFile(argv[0])
			if err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			p, err := s.PreviewSearch(cmd.Context(), resolute.ExperimentConfigRequest{Config: string(data), Template: template, Overrides: overrides})
			if err != nil {
				return err
			}
			for _, w := range p.Warnings {
				fmt.Fprintln(a.stderr, "Warning:", w)
			}
			if asJSON {
				return printJSON(a.stdout, p.Plan)
			}
			_, err = io.WriteString(a.stdout, p.Summary)
			return err
		},
	}
	cmd.Flags().StringVar(&template, "template", "", "configuration template to merge under the config")
	cmd.Flags().StringArrayVar(&overrides, "config", nil, "override a key: --config searcher.max_trials=8 (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	return cmd
}
