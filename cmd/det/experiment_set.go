package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) experimentWaitCmd() *cobra.Command {
	var interval float64
	cmd := &cobra.Command{
		Use:   "wait ID [--polling-interval SECONDS]",
		Short: "Wait until an experiment ends; exit 0 only if it completed",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID("experiment", argv[0])
			if err != nil {
				return err
			}
			if interval <= 0 {
				return usageError{fmt.Errorf("--polling-interval must be more than 0, got %v", interval)}
			}
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			for {
				e, err := s.Experiment(ctx, id)
				if err != nil {
					return err
				}
				if resolute.Terminal(e.State) {
					fmt.Fprintf(a.stdout, "Experiment %d terminated with state %s\n", id, e.State)
					if e.State != resolute.StateCompleted {
						return fmt.Errorf("experiment %d did not complete", id)
					}
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Duration(interval * float64(time.Second))):
				}
			}
		},
	}
	cmd.Flags().Float64Var(&interval, "polling-interval", 5, "seconds between looks at the experiment's state")
	return cmd
}

// settable are the `det experiment set` fields: how to check a value and
// where it goes in a PATCH body.
var settable = []struct {
	name, what string
	check      func(string) error
	patch      func(string) any
}{
	{"description", "description", nil, func(v string) any { return map[string]any{"description": v} }},
	{"name", "name", nil, func(v string) any { return map[string]any{"name": v} }},
	{"priority", "`priority`", isInt, func(v string) any { return resources("priority", v) }},
	{"weight", "weight", isFloat, func(v string) any { return resources("weight", v) }},
	{"max-slots", "`max_slots`", isInt, func(v string) any { return resources("max_slots", v) }},
}

func isInt(v string) error {
	_, err := strconv.Atoi(v)
	if err != nil {
		return usageError{fmt.Errorf("expected an integer, got %q", v)}
	}
	return nil
}

func isFloat(v string) error {
	_, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return usageError{fmt.Errorf("expected a number, got %q", v)}
	}
	return nil
}

func resources(key, v string) any {
	return map[string]any{"resources": map[string]json.RawMessage{key: json.RawMessage(v)}}
}

// patchRequest turns a map shaped like the PATCH body into its type.
func patchRequest(body any) (resolute.PatchExperimentRequest, error) {
	var req resolute.PatchExperimentRequest
	b, err := json.Marshal(body)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	return req, err
}

func (a *app) experimentSetCmd() *cobra.Command {
	cmd := group("set", "Change an experiment's name, description or scheduling")
	for _, f := range settable {
		cmd.AddCommand(&cobra.Command{
			Use: f.name + " ID VALUE", Short: "Set an experiment's " + f.what, Args: args(cobra.ExactArgs(2)),
			RunE: func(cmd *cobra.Command, argv []string) error {
				id, err := parseID("experiment", argv[0])
				if err != nil {
					return err
				}
				if f.check != nil {
					if err := f.check(argv[1]); err != nil {
						return err
					}
				}
				req, err := patchRequest(f.patch(argv[1]))
				if err != nil {
					return err
				}
				s, err := a.login(cmd.Context())
				if err != nil {
					return err
				}
				if _, err := s.PatchExperiment(cmd.Context(), id, req); err != nil {
					return err
				}
				if f.check == nil {
					fmt.Fprintf(a.stdout, "Set %s of experiment %d to '%s'\n", f.what, id, argv[1])
				} else {
					fmt.Fprintf(a.stdout, "Set %s of experiment %d to %s\n", f.what, id, argv[1])
				}
				return nil
			},
		})
	}
	cmd.AddCommand(a.experimentLogRetentionCmd())
	return cmd
}

func (a *app) experimentLabelCmd() *cobra.Command {
	cmd := group("label", "Add or remove an experiment's labels")
	for _, add := range []bool{true, false} {
		verb, done, prep := "remove", "Removed", "from"
		if add {
			verb, done, prep = "add", "Added", "to"
		}
		cmd.AddCommand(&cobra.Command{
			Use: verb + " ID LABEL", Short: capitalize(verb) + " a label", Args: args(cobra.ExactArgs(2)),
			RunE: func(cmd *cobra.Command, argv []string) error {
				s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
				if err != nil {
					return err
				}
				e, err := s.Experiment(cmd.Context(), id)
				if err != nil {
					return err
				}
				labels := slices.DeleteFunc(slices.Clone(e.Labels), func(l string) bool { return l == argv[1] })
				if add {
					labels = append(labels, argv[1])
				}
				if labels == nil {
					labels = []string{}
				}
				if _, err := s.PatchExperiment(cmd.Context(), id, resolute.PatchExperimentRequest{Labels: &labels}); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "%s label '%s' %s experiment %d\n", done, argv[1], prep, id)
				return nil
			},
		})
	}
	return cmd
}
