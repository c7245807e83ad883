package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// printJSON writes v as indented JSON, for scripts.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes aligned columns under a header and a rule, as Determined's
// tables look.
func table(w io.Writer, headers []string, rows [][]string) error {
	if _, ok := w.(csvOut); ok {
		return writeCSV(w, headers, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	rule := make([]string, len(headers))
	for i, h := range headers {
		rule[i] = strings.Repeat("-", max(len(h), 1))
	}
	fmt.Fprintln(tw, strings.Join(rule, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// fields writes "Key:  value" lines for one object; the further lines of
// a multi-line value stay in the value column.
func fields(w io.Writer, kv [][2]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range kv {
		lines := strings.Split(strings.TrimRight(f[1], "\n"), "\n")
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(tw, "\t%s\n", l)
		}
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// oneLine keeps table cells on one line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// listFlags are the output flags every list command takes, as Determined's
// do: --json or --csv instead of a table, and --limit/--offset to page.
type listFlags struct {
	asJSON, csv   bool
	limit, offset int
}

// add puts the flags on cmd.
func (f *listFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&f.csv, "csv", false, "print CSV")
	cmd.Flags().IntVar(&f.limit, "limit", 0, "print at most this many (0: all)")
	cmd.Flags().IntVar(&f.offset, "offset", 0, "skip this many first")
}

// check refuses negative pages, and JSON and CSV at once.
func (f *listFlags) check() error {
	if f.asJSON && f.csv {
		return usageError{errors.New("--json and --csv: give one")}
	}
	if f.limit < 0 || f.offset < 0 {
		return usageError{errors.New("--limit and --offset: must not be negative")}
	}
	return nil
}

// out is where a list's table goes: w, or with --csv w made to write CSV
// (table writes CSV to it).
func (f *listFlags) out(w io.Writer) io.Writer {
	if f.csv {
		return csvOut{w}
	}
	return w
}

// page is the part of list --offset and --limit ask for, for lists the
// master returns whole.
func page[T any](f listFlags, list []T) []T {
	list = list[min(f.offset, len(list)):]
	if f.limit > 0 {
		list = list[:min(f.limit, len(list))]
	}
	if list == nil {
		list = []T{} // "[]" in JSON, not "null"
	}
	return list
}

// printList pages list (page) and prints it to w: as JSON with --json,
// else by tab, a table or with --csv CSV (listFlags.out).
func printList[T any](w io.Writer, f listFlags, list []T, tab func(io.Writer, []T) error) error {
	list = page(f, list)
	if f.asJSON {
		return printJSON(w, list)
	}
	return tab(f.out(w), list)
}

// csvOut is a writer that table writes CSV to, a header row then a row
// each (RFC 4180), instead of aligned columns.
type csvOut struct{ io.Writer }

// writeCSV writes a header and rows as CSV.
func writeCSV(w io.Writer, headers []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	cw.Write(headers)
	cw.WriteAll(rows)
	return cw.Error()
}
