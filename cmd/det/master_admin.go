package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
)

// masterConfigCmd is `det master config [show]`: the running master's
// configuration, secrets masked (administrators).
func (a *app) masterConfigCmd() *cobra.Command {
	var asJSON, asYAML bool
	show := func(cmd *cobra.Command, _ []string) error {
		if asJSON && asYAML {
			return usageError{errors.New("--json and --yaml: give one")}
		}
		s, err := a.login(cmd.Context())
		if err != nil {
			return err
		}
		cfg, err := s.MasterConfig(cmd.Context())
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(a.stdout, cfg)
		}
		enc := yaml.NewEncoder(a.stdout)
		enc.SetIndent(2)
		if err := enc.Encode(cfg); err != nil {
			return err
		}
		return enc.Close()
	}
	flags := func(c *cobra.Command) {
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		c.Flags().BoolVar(&asYAML, "yaml", false, "print YAML (the default)")
	}
	cmd := &cobra.Command{Use: "config [show]", Short: "Show the master's configuration, secrets masked (administrators)",
		Args: args(cobra.NoArgs), RunE: show}
	flags(cmd)
	showCmd := &cobra.Command{Use: "show", Short: "Show the master's configuration, secrets masked (administrators)",
		Args: args(cobra.NoArgs), RunE: show}
	flags(showCmd)
	cmd.AddCommand(showCmd)
	return cmd
}

// clusterMessageCmd is `det master cluster-message set|clear|get`.
func (a *app) clusterMessageCmd() *cobra.Command {
	cmd := group("cluster-message", "Set or clear the message every user sees on every page")
	cmd.AddCommand(a.clusterMessageSetCmd(), a.clusterMessageClearCmd(), a.clusterMessageGetCmd())
	return cmd
}

func (a *app) clusterMessageSetCmd() *cobra.Command {
	var message, start, end, duration string
	cmd := &cobra.Command{
		Use:   "set -m MESSAGE [-s START] [-e END | -d DURATION]",
		Short: "Create or replace the cluster-wide message (administrators)",
		Long: "Create or replace the cluster-wide message (administrators).\n\n" +
			"As in Determined, -m after `set` is the message; name the master with $DET_MASTER, or --master.",
		Args: args(cobra.NoArgs),
		// -m is the message here, as in Determined; det's -m (the master)
		// is a persistent flag, so -m's value arrives as the master.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if message == "" && cmd.Flags().Lookup("master").Changed {
				message, a.masterFlag = a.masterFlag, ""
			}
			return a.resolveMaster()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if message == "" {
				return usageError{errors.New("provide a message using the -m flag")}
			}
			if end != "" && duration != "" {
				return usageError{errors.New("--end and --duration: give one")}
			}
			req := resolute.SetClusterMessageRequest{Message: message, Duration: duration}
			for _, t := range []struct {
				flag, v string
				dst     **time.Time
			}{{"--start", start, &req.StartTime}, {"--end", end, &req.EndTime}} {
				if t.v == "" {
					continue
				}
				ts, err := time.Parse(time.RFC3339Nano, t.v)
				if err != nil {
					return usageError{fmt.Errorf("%s: must be RFC 3339, i.e. of the form YYYY-MM-DDThh:mm:ssZ, got %q", t.flag, t.v)}
				}
				*t.dst = &ts
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			m, err := s.SetClusterMessage(cmd.Context(), req)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Set the cluster message, shown %s\n", messageWindow(m))
			return nil
		},
	}
	cmd.Flags().StringVar(&message, "message", "", "text of the message to display to users (-m)")
	cmd.Flags().StringVarP(&start, "start", "s", "", "timestamp to start displaying the message (RFC 3339 format), e.g. '2021-10-26T23:17:12Z'; default is now")
	cmd.Flags().StringVarP(&end, "end", "e", "", "timestamp to end displaying the message (RFC 3339 format); default is indefinite")
	cmd.Flags().StringVarP(&duration, "duration", "d", "", "how long the message should last, e.g. 24h, 5d, 2w; not with --end")
	return cmd
}

// messageWindow says when a message shows, for people.
func messageWindow(m resolute.ClusterMessage) string {
	w := "from " + date(m.StartTime)
	if m.EndTime != nil {
		return w + " until " + date(*m.EndTime)
	}
	return w + " until cleared"
}

func (a *app) clusterMessageClearCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use: "clear", Short: "Clear the cluster-wide message (administrators)", Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.ClearClusterMessage(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "Cleared the cluster message")
			return nil
		},
	}
	// Determined's -c/--clear is accepted: there is only one message.
	cmd.Flags().BoolVarP(&all, "clear", "c", false, "clear all cluster-wide messages (there is one at most)")
	return cmd
}

func (a *app) clusterMessageGetCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "get", Short: "Show the cluster-wide message", Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			m, err := s.ClusterMessage(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, resolute.ClusterMessageResponse{ClusterMessage: m})
			}
			if m == nil {
				fmt.Fprintln(a.stdout, "No cluster message")
				return nil
			}
			return fields(a.stdout, [][2]string{{"Message", m.Message}, {"Shown", messageWindow(*m)}, {"Set", date(m.CreatedTime)}})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
