package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShellQuoteIsReadBackByAShellAsTheSameWords(t *testing.T) {
	for name, tc := range map[string]struct {
		argv []string
		want string
	}{
		"plain words stay bare":          {[]string{"ssh", "-o", "IdentitiesOnly=yes", "ann@shell-1"}, "ssh -o IdentitiesOnly=yes ann@shell-1"},
		"spaces are single-quoted":       {[]string{"ProxyCommand=/x/det -m http://m:8080 shell ssh-proxy shell-1"}, "'ProxyCommand=/x/det -m http://m:8080 shell ssh-proxy shell-1'"},
		"a single quote is closed first": {[]string{"it's"}, `'it'\''s'`},
		"an empty word is kept":          {[]string{""}, "''"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := shellQuote(tc.argv); got != tc.want {
				t.Errorf("shellQuote(%q) = %s, want %s", tc.argv, got, tc.want)
			}
		})
	}
}

func TestSafeNameKeepsTheMastersHostAndPort(t *testing.T) {
	if diff := cmp.Diff([]string{"localhost_8080", "shell-12", "a_b"}, []string{safeName("http://localhost:8080"), safeName("shell-12"), safeName("a/b")}); diff != "" {
		t.Error(diff)
	}
}

func TestExtraSSHArgumentsGoAroundTheDestination(t *testing.T) {
	base := []string{"-o", "IdentitiesOnly=yes", "ann@shell-1"}
	for name, tc := range map[string]struct {
		extra, want []string
	}{
		"none":                             {nil, base},
		"a command after the destination":  {[]string{"echo", "-n", "hi"}, []string{"-o", "IdentitiesOnly=yes", "ann@shell-1", "echo", "-n", "hi"}},
		"an option's value stays with it":  {[]string{"-L", "8888:127.0.0.1:8888", "jupyter", "lab"}, []string{"-o", "IdentitiesOnly=yes", "-L", "8888:127.0.0.1:8888", "ann@shell-1", "jupyter", "lab"}},
		"flags without values stand alone": {[]string{"-N", "-v", "-L8888:127.0.0.1:8888"}, []string{"-o", "IdentitiesOnly=yes", "-N", "-v", "-L8888:127.0.0.1:8888", "ann@shell-1"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, withExtra(base, tc.extra)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
