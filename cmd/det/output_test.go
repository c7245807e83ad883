package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFields(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		kv   [][2]string
		want string
	}{
		"values line up after the longest key": {
			kv:   [][2]string{{"ID", "1"}, {"Description", "x"}},
			want: "ID:           1\nDescription:  x\n",
		},
		"further lines of a value stay in its column": {
			kv:   [][2]string{{"Name", "cats"}, {"Description", "one\ntwo"}, {"ID", "2"}},
			want: "Name:         cats\nDescription:  one\n              two\nID:           2\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := fields(&b, tc.kv); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	table(&b, []string{"ID", "Name"}, [][]string{{"1", "Uncategorized"}, {"22", "x"}})
	want := "ID  Name\n--  ----\n1   Uncategorized\n22  x\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
