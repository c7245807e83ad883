package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

// maxContextBytes is the largest context det uploads; tests lower it.
var maxContextBytes int64 = client.MaxContextBytes

func (a *app) experimentCreateCmd() *cobra.Command {
	var template string
	var overrides, includes []string
	var follow, paused bool
	var projectID int64
	cmd := &cobra.Command{
		Use:   "create CONFIG [CONTEXT_DIR]",
		Short: "Create an experiment from a config file and a context directory",
		Long: "Create an experiment from a config file ('-' reads standard input) and a context directory.\n\n" +
			"The context directory is uploaded as a tar.gz archive, at most 96 MiB; a .detignore\n" +
			"file in it lists what to leave out, as .gitignore does. .git and __pycache__ are\n" +
			"always left out.",
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			config, err := a.readFile(argv[0])
			if err != nil {
				return err
			}
			dir := ""
			if len(argv) == 2 {
				dir = argv[1]
				// Determined takes a single file as the whole context too.
				if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
					includes, dir = append([]string{dir}, includes...), ""
				}
			}
			tgz, size, err := a.packContext(dir, includes)
			if err != nil {
				return err
			}
			if tgz != nil {
				defer os.Remove(tgz.Name())
				defer tgz.Close()
			}
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			activate := !paused
			req := resolute.CreateExperimentRequest{
				ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: string(config), Template: template,
					Overrides: overrides, ProjectID: projectID},
				Activate: &activate,
			}
			var body io.Reader
			if tgz != nil {
				body = tgz
			}
			bar := newUploadProgress(a.stderr, size, time.Now)
			resp, err := s.CreateExperiment(ctx, req, body, size, bar.update)
			bar.done()
			if err != nil {
				return err
			}
			for _, w := range resp.Warnings {
				fmt.Fprintln(a.stderr, "Warning:", w)
			}
			fmt.Fprintf(a.stdout, "Created experiment %d\n", resp.Experiment.ID)
			if !follow {
				return nil
			}
			return a.followFirstTrial(ctx, s, resp.Experiment.ID)
		},
	}
	cmd.Flags().StringVar(&template, "template", "", "configuration template to merge under the config")
	cmd.Flags().StringArrayVar(&overrides, "config", nil, "override a key: --config resources.slots_per_trial=2 (repeatable)")
	cmd.Flags().BoolVarP(&follow, "follow-first-trial", "f", false, "print the first trial's logs until it ends")
	cmd.Flags().BoolVar(&paused, "paused", false, "create the experiment paused")
	cmd.Flags().Int64Var(&projectID, "project-id", 0, "project to put the experiment in (default: the config's, or Uncategorized)")
	// Determined spells it --project_id.
	cmd.Flags().Int64Var(&projectID, "project_id", 0, "")
	cmd.Flags().MarkHidden("project_id")
	cmd.Flags().StringArrayVarP(&includes, "include", "i", nil, "a further file or directory to upload, at the top of the context (repeatable)")
	return cmd
}

// packContext scans and packs the context into a temporary file, refusing
// a context larger than maxContextBytes before anything is uploaded. It
// returns nil when there is nothing to upload.
func (a *app) packContext(dir string, includes []string) (*os.File, int64, error) {
	if dir == "" && len(includes) == 0 {
		return nil, 0, nil
	}
	c, err := client.ScanContext(dir, includes)
	if err != nil {
		return nil, 0, err
	}
	for _, name := range c.Skipped {
		fmt.Fprintf(a.stderr, "Warning: %s is a link to a directory; it is not uploaded\n", name)
	}
	what := dir
	if what == "" {
		what = strings.Join(includes, ", ")
	}
	if c.Size > maxContextBytes {
		return nil, 0, tooLarge(what, c, maxContextBytes)
	}
	fmt.Fprintf(a.stderr, "Preparing files to send to master... %s and %d files\n", humanBytes(c.Size), c.NumFiles())
	f, err := os.CreateTemp("", "det-context-*.tar.gz")
	if err != nil {
		return nil, 0, err
	}
	fail := func(err error) (*os.File, int64, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	if err := c.WriteTarGz(f); err != nil {
		return fail(err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fail(err)
	}
	if size > maxContextBytes {
		return fail(fmt.Errorf("the context %s packs to %s; the limit is %s", what, humanBytes(size), humanBytes(maxContextBytes)))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, size, nil
}

// tooLarge explains a refused context and names its largest files.
func tooLarge(what string, c *client.Context, limit int64) error {
	files := make([]client.ContextFile, 0, len(c.Files))
	for _, f := range c.Files {
		if !f.Dir {
			files = append(files, f)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Size > files[j].Size })
	var b strings.Builder
	fmt.Fprintf(&b, "the context %s holds %s in %d files; the limit is %s.\n"+
		"List what the trials do not need in %s (as in .gitignore) and try again. The largest files:",
		what, humanBytes(c.Size), len(files), humanBytes(limit), client.IgnoreFile)
	for _, f := range files[:min(5, len(files))] {
		fmt.Fprintf(&b, "\n  %10s  %s", humanBytes(f.Size), f.Name)
	}
	return fmt.Errorf("%s", b.String())
}

// humanBytes renders a size as people read it.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// uploadProgress shows an upload's percentage on one rewritten stderr line,
// once the context is larger than 1 MiB or the upload has taken a second.
type uploadProgress struct {
	mu    sync.Mutex
	w     io.Writer
	total int64
	start time.Time
	now   func() time.Time
	shown bool
	last  int // percentage last printed
}

func newUploadProgress(w io.Writer, total int64, now func() time.Time) *uploadProgress {
	return &uploadProgress{w: w, total: total, start: now(), now: now, last: -1}
}

// update is called with the bytes sent so far.
func (p *uploadProgress) update(sent int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.total <= 0 {
		return
	}
	if !p.shown && p.total <= 1<<20 && p.now().Sub(p.start) < time.Second {
		return
	}
	p.shown = true
	pct := int(sent * 100 / p.total)
	if pct == p.last {
		return
	}
	p.last = pct
	fmt.Fprintf(p.w, "\rUploading context: %3d%% (%s of %s)", pct, humanBytes(sent), humanBytes(p.total))
}

// done ends the progress line, if one was shown; later updates (from an
// upload the master cut short) print nothing.
func (p *uploadProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = 0
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// firstTrial returns the id of an experiment's first trial. With wait it
// polls until the searcher has made one, failing if the experiment ends
// without any.
func (a *app) firstTrial(ctx context.Context, s *session, expID int64, wait bool) (int64, error) {
	told := false
	for {
		trials, err := s.ExperimentTrials(ctx, expID)
		if err != nil {
			return 0, err
		}
		if len(trials) > 0 {
			first := trials[0].ID
			for _, t := range trials[1:] {
				first = min(first, t.ID)
			}
			return first, nil
		}
		e, err := s.Experiment(ctx, expID)
		if err != nil {
			return 0, err
		}
		if !wait || resolute.Terminal(e.State) {
			return 0, fmt.Errorf("experiment %d has no trials (it is %s)", expID, e.State)
		}
		if !told {
			fmt.Fprintln(a.stderr, "Waiting for first trial to begin...")
			told = true
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// followFirstTrial prints the first trial's logs as they come, until the
// trial ends, as `det experiment create -f` does.
func (a *app) followFirstTrial(ctx context.Context, s *session, expID int64) error {
	id, err := a.firstTrial(ctx, s, expID, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "Following first trial with ID %d\n", id)
	err = s.TrialLogs(ctx, id, true, "", "", a.printLog)
	fmt.Fprintf(a.stderr, "Trial log stream ended. To reopen log stream, run: det trial logs -f %d\n", id)
	return err
}

// printLog writes one task log line as Determined's master formats it.
func (a *app) printLog(l resolute.TaskLog) error {
	var b strings.Builder
	b.WriteString("[" + l.Time.UTC().Format("2006-01-02T15:04:05.000000Z") + "]")
	if l.ContainerID != "" {
		// Determined shows the first 8 characters of a Docker container's
		// id here; Resolute's container names are short, and shown whole
		// (the pods of one trial differ only at their ends).
		b.WriteString(" " + l.ContainerID)
	}
	if l.Rank != nil {
		fmt.Fprintf(&b, " [rank=%d]", *l.Rank)
	}
	b.WriteString(" || ")
	if l.Level != "" && l.Level != "INFO" {
		b.WriteString(l.Level + ": ")
	}
	b.WriteString(strings.TrimRight(l.Log, "\n"))
	b.WriteString("\n")
	_, err := io.WriteString(a.stdout, b.String())
	return err
}
