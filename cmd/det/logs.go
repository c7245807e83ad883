package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

// logFlags are the flags of `det trial logs`, `det task logs` and
// `det experiment logs`, as Determined's: the master filters, so --tail 10
// reads ten lines, not the whole log.
type logFlags struct {
	follow, asJSON     bool
	head, tail         int
	level, search      string
	before, after      string
	ranks              []int
	sources, stdtypes  []string
	agents, containers []string
}

// logLevels are the levels --level takes, lowest first.
var logLevels = []string{"TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}

// add puts the flags on cmd; followHelp says what -f does there.
func (f *logFlags) add(cmd *cobra.Command, followHelp string) {
	fl := cmd.Flags()
	fl.BoolVarP(&f.follow, "follow", "f", false, followHelp)
	fl.IntVar(&f.head, "head", 0, "number of lines to show, counting from the beginning of the log (default is all)")
	fl.IntVar(&f.tail, "tail", 0, "number of lines to show, counting from the end of the log (default is all)")
	fl.StringVar(&f.level, "level", "", "show logs with this level or higher (TRACE, DEBUG, INFO, WARNING, ERROR, CRITICAL)")
	fl.StringVar(&f.search, "search", "", "show only lines containing this text")
	fl.StringVar(&f.before, "timestamp-before", "", "show logs only from before (RFC 3339 format), e.g. '2021-10-26T23:17:12Z'")
	fl.StringVar(&f.after, "timestamp-after", "", "show logs only from after (RFC 3339 format), e.g. '2021-10-26T23:17:12Z'")
	fl.IntSliceVar(&f.ranks, "rank-id", nil, "ranks to show logs from (repeat for multiple values)")
	fl.StringArrayVar(&f.agents, "agent-id", nil, "agent IDs to show logs from (repeat for multiple values)")
	fl.StringArrayVar(&f.containers, "container-id", nil, "container IDs to show logs from (repeat for multiple values)")
	fl.StringArrayVar(&f.sources, "source", nil, "sources to show logs from: task, master (repeat for multiple values)")
	fl.StringArrayVar(&f.stdtypes, "stdtype", nil, "output stream to show logs from: stdout, stderr (repeat for multiple values)")
	fl.BoolVar(&f.asJSON, "json", false, "print each line as JSON")
}

// query checks the flags and turns them into what the master reads.
func (f *logFlags) query() (client.LogQuery, error) {
	q := client.LogQuery{Follow: f.follow, Head: f.head, Tail: f.tail, Search: f.search,
		Ranks: f.ranks, Sources: f.sources, StdTypes: f.stdtypes, AgentIDs: f.agents, ContainerIDs: f.containers}
	if f.head < 0 || f.tail < 0 {
		return q, usageError{errors.New("--head and --tail: must not be negative")}
	}
	if f.head > 0 && f.tail > 0 {
		return q, usageError{errors.New("--head and --tail: give one, not both")}
	}
	if f.level != "" {
		q.Level = strings.ToUpper(f.level)
		if !slices.Contains(logLevels, q.Level) {
			return q, usageError{fmt.Errorf("--level: expected one of %s, got %q", strings.Join(logLevels, ", "), f.level)}
		}
		if q.Level == "TRACE" {
			q.Level = "" // every line: Resolute stores nothing below DEBUG
		}
	}
	for _, t := range []struct {
		flag, v string
		dst     *time.Time
	}{{"--timestamp-before", f.before, &q.Before}, {"--timestamp-after", f.after, &q.After}} {
		if t.v == "" {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, t.v)
		if err != nil {
			return q, usageError{fmt.Errorf("%s: expected an RFC 3339 time like 2021-10-26T23:17:12Z, got %q", t.flag, t.v)}
		}
		*t.dst = ts
	}
	return q, nil
}

// printer is how each line is written: JSON with --json, else as
// Determined's master formats it.
func (f *logFlags) printer(a *app) func(resolute.TaskLog) error {
	if f.asJSON {
		return func(l resolute.TaskLog) error { return printJSON(a.stdout, l) }
	}
	return a.printLog
}

// print reads a log's lines with read and prints each; when the filters
// left none, it says so on stderr (stdout stays the lines alone).
func (f *logFlags) print(a *app, read func(func(resolute.TaskLog) error) error) error {
	n := 0
	p := f.printer(a)
	err := read(func(l resolute.TaskLog) error { n++; return p(l) })
	if filters := f.filters(); err == nil && n == 0 && !f.follow && filters != "" {
		fmt.Fprintf(a.stderr, "No log lines match %s.\n", filters)
	}
	return err
}

// filters are the filter flags given, as typed ("--agent-id a1 --level
// ERROR"); "" for none.
func (f *logFlags) filters() string {
	var out []string
	add := func(flag string, vals ...string) {
		for _, v := range vals {
			if v != "" {
				out = append(out, flag+" "+v)
			}
		}
	}
	add("--level", f.level)
	add("--search", f.search)
	add("--timestamp-before", f.before)
	add("--timestamp-after", f.after)
	for _, r := range f.ranks {
		add("--rank-id", strconv.Itoa(r))
	}
	add("--source", f.sources...)
	add("--stdtype", f.stdtypes...)
	add("--agent-id", f.agents...)
	add("--container-id", f.containers...)
	return strings.Join(out, " ")
}
