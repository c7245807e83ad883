package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

// The model registry: `det model ...` (alias `m`), as Determined's.

func (a *app) modelCmd() *cobra.Command {
	cmd := group("model", "Manage the model registry", "m")
	cmd.AddCommand(a.modelCreateCmd(), a.modelListCmd(), a.modelDescribeCmd(), a.modelListVersionsCmd(),
		a.modelRegisterVersionCmd(), a.modelAliasCmd(), a.modelDeleteCmd(), a.modelMoveCmd(),
		a.modelArchiveCmd("archive", true), a.modelArchiveCmd("unarchive", false), a.modelDownloadCmd())
	return cmd
}

// versionChoice is the --version N, --alias A or --latest flags of commands
// that pick one version of a model.
type versionChoice struct {
	version int
	alias   string
	latest  bool
}

func (v *versionChoice) flags(cmd *cobra.Command) {
	cmd.Flags().IntVar(&v.version, "version", 0, "the version numbered N")
	cmd.Flags().StringVar(&v.alias, "alias", "", "the version the alias points at")
	cmd.Flags().BoolVar(&v.latest, "latest", false, "the newest version")
}

// ref is the choice as the API's {num}: "3", "@production" or "latest";
// "" when nothing was chosen. More than one choice is a usage error.
func (v versionChoice) ref() (string, error) {
	var refs []string
	if v.version != 0 {
		if v.version < 0 {
			return "", usageError{fmt.Errorf("--version must be a positive number, got %d", v.version)}
		}
		refs = append(refs, strconv.Itoa(v.version))
	}
	if v.alias != "" {
		refs = append(refs, "@"+v.alias)
	}
	if v.latest {
		refs = append(refs, "latest")
	}
	if len(refs) > 1 {
		return "", usageError{fmt.Errorf("choose one of --version, --alias and --latest")}
	}
	if len(refs) == 0 {
		return "", nil
	}
	return refs[0], nil
}

func modelTable(w io.Writer, list []resolute.Model) error {
	rows := make([][]string, len(list))
	for i, m := range list {
		rows[i] = []string{strconv.FormatInt(m.ID, 10), m.Name, oneLine(m.Description), strconv.Itoa(m.NumVersions),
			strings.Join(m.Labels, ", "), m.WorkspaceName, m.Username, date(m.UpdatedAt), yesNo(m.Archived)}
	}
	return table(w, []string{"ID", "Name", "Description", "Versions", "Labels", "Workspace", "Owner", "Last Updated", "Archived"}, rows)
}

func versionTable(w io.Writer, list []resolute.ModelVersion) error {
	rows := make([][]string, len(list))
	for i, v := range list {
		rows[i] = []string{strconv.Itoa(v.Version), oneLine(v.Name), strings.Join(v.Aliases, ", "), v.CheckpointUUID,
			strconv.FormatInt(v.ExperimentID, 10), strconv.FormatInt(v.TrialID, 10), strconv.FormatInt(v.StepsCompleted, 10),
			oneLine(v.Comment), date(v.CreatedAt)}
	}
	return table(w, []string{"Version", "Name", "Aliases", "Checkpoint UUID", "Experiment ID", "Trial ID", "# of Batches", "Comment", "Creation Time"}, rows)
}

// compact shows JSON on one line; "" for an empty object or nothing.
func compact(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "{}" || s == "null" {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// validationLines lists a version's validation metrics, one per line,
// sorted by name.
func validationLines(raw json.RawMessage) string {
	var v struct {
		Avg map[string]any `json:"avg_metrics"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	names := make([]string, 0, len(v.Avg))
	for k := range v.Avg {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		val := fmt.Sprint(v.Avg[k])
		if f, ok := v.Avg[k].(float64); ok {
			val = strconv.FormatFloat(f, 'g', 6, 64)
		}
		fmt.Fprintf(&b, "%s=%s\n", k, val)
	}
	return b.String()
}

func describeModel(w io.Writer, m resolute.Model) error {
	return fields(w, [][2]string{
		{"ID", strconv.FormatInt(m.ID, 10)}, {"Name", m.Name}, {"Description", m.Description},
		{"Labels", strings.Join(m.Labels, ", ")}, {"Metadata", compact(m.Metadata)}, {"Notes", m.Notes},
		{"Workspace", m.WorkspaceName}, {"Owner", m.Username}, {"Archived", yesNo(m.Archived)},
		{"Versions", strconv.Itoa(m.NumVersions)}, {"Creation Time", date(m.CreatedAt)}, {"Last Updated", date(m.UpdatedAt)},
	})
}

func describeVersion(w io.Writer, v resolute.ModelVersion) error {
	return fields(w, [][2]string{
		{"Model", v.ModelName}, {"Version", strconv.Itoa(v.Version)}, {"Name", v.Name},
		{"Aliases", strings.Join(v.Aliases, ", ")}, {"Checkpoint UUID", v.CheckpointUUID},
		{"Experiment ID", strconv.FormatInt(v.ExperimentID, 10)}, {"Trial ID", strconv.FormatInt(v.TrialID, 10)},
		{"# of Batches", strconv.FormatInt(v.StepsCompleted, 10)}, {"Checkpoint Size", humanBytes(v.CheckpointSize)},
		{"Validation", validationLines(v.Validation)}, {"Comment", v.Comment}, {"Notes", v.Notes},
		{"Metadata", compact(v.Metadata)}, {"Labels", strings.Join(v.Labels, ", ")},
		{"Registered By", v.Username}, {"Creation Time", date(v.CreatedAt)},
	})
}

func (a *app) modelCreateCmd() *cobra.Command {
	var description, workspace string
	var labels []string
	var asJSON bool
	cmd := &cobra.Command{
		Use: "create NAME [--description D] [--workspace W]", Short: "Add a model to the registry", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			req := resolute.ModelRequest{Name: &argv[0], Description: &description}
			if len(labels) > 0 {
				req.Labels = &labels
			}
			if workspace != "" {
				ws, err := s.WorkspaceByName(ctx, workspace)
				if err != nil {
					return err
				}
				req.WorkspaceID = ws.ID
			}
			m, err := s.CreateModel(ctx, req)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, m)
			}
			fmt.Fprintf(a.stdout, "Created model %s in workspace %s\n", m.Name, m.WorkspaceName)
			return nil
		},
	}
	cmd.Flags().StringVarP(&description, "description", "d", "", "what the model is")
	cmd.Flags().StringVarP(&workspace, "workspace", "w", "", "workspace to create it in (default Uncategorized)")
	cmd.Flags().StringArrayVarP(&labels, "label", "l", nil, "a label (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) modelListCmd() *cobra.Command {
	var all bool
	var lf listFlags
	var labels []string
	var sortBy string
	cmd := &cobra.Command{
		Use: "list [--all] [--label L] [--sort-by name|updated|versions]", Aliases: []string{"ls"},
		Short: "List models (--all: archived ones too)", Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			switch sortBy {
			case "", "name", "updated", "versions":
			default:
				return usageError{fmt.Errorf("--sort-by: expected name, updated or versions, got %q", sortBy)}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			list, err := s.Models(cmd.Context(), client.ModelFilter{Archived: unarchivedUnless(all), Labels: labels, SortBy: sortBy})
			if err != nil {
				return err
			}
			return printList(a.stdout, lf, list, modelTable)
		},
	}
	lf.add(cmd)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include archived models")
	cmd.Flags().StringArrayVarP(&labels, "label", "l", nil, "only models with this label (repeatable)")
	cmd.Flags().StringVar(&sortBy, "sort-by", "", "name, updated or versions (default newest first)")
	return cmd
}

func (a *app) modelDescribeCmd() *cobra.Command {
	var asJSON bool
	var choice versionChoice
	cmd := &cobra.Command{
		Use:   "describe NAME [--version N | --alias A | --latest]",
		Short: "Show a model and its versions, or one version",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ref, err := choice.ref()
			if err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if ref != "" {
				v, err := s.ModelVersion(cmd.Context(), argv[0], ref)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(a.stdout, v)
				}
				return describeVersion(a.stdout, v)
			}
			mv, err := s.ModelVersions(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, mv)
			}
			if err := describeModel(a.stdout, mv.Model); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "\nVersions:")
			return versionTable(a.stdout, mv.ModelVersions)
		},
	}
	choice.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) modelListVersionsCmd() *cobra.Command {
	var lf listFlags
	cmd := &cobra.Command{
		Use: "list-versions NAME", Aliases: []string{"lv"}, Short: "List a model's versions, newest first",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			mv, err := s.ModelVersions(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			return printList(a.stdout, lf, mv.ModelVersions, versionTable)
		},
	}
	lf.add(cmd)
	return cmd
}

func (a *app) modelRegisterVersionCmd() *cobra.Command {
	var name, comment string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "register-version NAME CHECKPOINT_UUID [--name N] [--comment C]",
		Short: "Register a checkpoint as a model's next version",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			req := resolute.ModelVersionRequest{CheckpointUUID: argv[1]}
			if cmd.Flags().Changed("name") {
				req.Name = &name
			}
			if cmd.Flags().Changed("comment") {
				req.Comment = &comment
			}
			v, err := s.RegisterModelVersion(cmd.Context(), argv[0], req)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, v)
			}
			fmt.Fprintf(a.stdout, "Registered checkpoint %s as version %d of model %s\n", v.CheckpointUUID, v.Version, v.ModelName)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "a name for the version")
	cmd.Flags().StringVar(&comment, "comment", "", "a comment on the version")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) modelAliasCmd() *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "alias NAME ALIAS (VERSION | --remove)",
		Short: "Point an alias (e.g. production) at a version, or remove it",
		Args:  args(cobra.RangeArgs(2, 3)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if remove != (len(argv) == 2) {
				return usageError{fmt.Errorf("give either a VERSION or --remove\nRun '%s --help' for usage.", cmd.CommandPath())}
			}
			var n int
			if !remove {
				var err error
				if n, err = strconv.Atoi(argv[2]); err != nil || n < 1 {
					return usageError{fmt.Errorf("version: expected a positive number, got %q", argv[2])}
				}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if remove {
				if err := s.DeleteModelAlias(cmd.Context(), argv[0], argv[1]); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "Removed alias %s of model %s\n", argv[1], argv[0])
				return nil
			}
			if _, err := s.SetModelAlias(cmd.Context(), argv[0], argv[1], n); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Alias %s of model %s now points at version %d\n", argv[1], argv[0], n)
			return nil
		},
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the alias")
	return cmd
}

// deleteModelQuestion is the confirmation of `det model delete`, worded as
// the model page's.
func deleteModelQuestion(m resolute.Model) string {
	return fmt.Sprintf("Delete model %s and its %d versions?", m.Name, m.NumVersions)
}

func (a *app) modelDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use: "delete NAME [--yes]", Short: "Delete a model with its versions and aliases (the checkpoints stay)",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			m, err := s.Model(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			if !yes {
				if !a.terminal() {
					return usageError{fmt.Errorf("%s stdin is not a terminal, so det cannot ask for confirmation: pass --yes", deleteModelQuestion(m))}
				}
				ok, err := a.confirm(deleteModelQuestion(m), "--yes")
				if err != nil || !ok {
					if err == nil {
						fmt.Fprintln(a.stderr, "Aborting deletion of model.")
					}
					return err
				}
			}
			if err := s.DeleteModel(cmd.Context(), m.Name); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Deleted model %s and its %d versions.\n", m.Name, m.NumVersions)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

func (a *app) modelMoveCmd() *cobra.Command {
	return &cobra.Command{
		Use: "move NAME WORKSPACE", Short: "Move a model to another workspace", Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, argv[1])
			if err != nil {
				return err
			}
			if err := s.MoveModel(ctx, argv[0], ws.ID); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Moved model %s to workspace %s\n", argv[0], ws.Name)
			return nil
		},
	}
}

func (a *app) modelArchiveCmd(verb string, archived bool) *cobra.Command {
	return &cobra.Command{
		Use: verb + " NAME", Short: capitalize(verb) + " a model", Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.SetModelArchived(cmd.Context(), argv[0], archived); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%sd model %s\n", capitalize(verb), argv[0])
			return nil
		},
	}
}

func (a *app) modelDownloadCmd() *cobra.Command {
	var outDir string
	var choice versionChoice
	cmd := &cobra.Command{
		Use:   "download NAME [--version N | --alias A | --latest] [-o DIR]",
		Short: "Download the checkpoint of a model's version (default the latest)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ref, err := choice.ref()
			if err != nil {
				return err
			}
			if ref == "" {
				ref = "latest"
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			return a.downloadVersion(cmd.Context(), s, argv[0], ref, outDir)
		},
	}
	choice.flags(cmd)
	cmd.Flags().StringVarP(&outDir, "output-dir", "o", "", "directory to download into (default checkpoints/<uuid>)")
	return cmd
}

// downloadVersion finds a version and downloads its checkpoint.
func (a *app) downloadVersion(ctx context.Context, s *session, name, ref, dir string) error {
	v, err := s.ModelVersion(ctx, name, ref)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Version %d of model %s is checkpoint %s\n", v.Version, v.ModelName, v.CheckpointUUID)
	return a.downloadCheckpoint(ctx, s, v.CheckpointUUID, dir)
}
