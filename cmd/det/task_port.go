package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

// taskOpenPortCmd is `det task open-port ID PORT [--no-browser]`: a link
// that opens one of a task's HTTP proxy ports (environment.proxy_ports
// with proxy_tcp: false) on the task origin, printed and opened in the
// desktop's browser when there is one. The link holds a ticket that works
// once, for a minute; the port stays open to that browser afterwards.
func (a *app) taskOpenPortCmd() *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "open-port TASK_ID PORT [--no-browser]",
		Short: "Print a link to one of a task's HTTP proxy ports and open it in a browser",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			port, err := strconv.Atoi(argv[1])
			if err != nil || port < 1 || port > 65535 {
				return fmt.Errorf("PORT: must be a port number 1..65535, got %q", argv[1])
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			link, err := s.OpenTaskPort(cmd.Context(), argv[0], port)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "Port %d of %s is at (a link that works once, within a minute; `det task open-port %s %d` makes another):\n",
				port, argv[0], argv[0], port)
			fmt.Fprintln(a.stdout, link.URL)
			if noBrowser || (a.getenv("DISPLAY") == "" && a.getenv("WAYLAND_DISPLAY") == "") {
				return nil
			}
			if err := openBrowser(link.URL); err != nil {
				fmt.Fprintf(a.stderr, "Warning: could not open a browser: %v\n", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the link")
	return cmd
}
