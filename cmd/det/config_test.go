package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	getenv := func(k string) string { return map[string]string{"XDG_CONFIG_HOME": dir}[k] }
	s, err := loadTokens(getenv)
	if err != nil {
		t.Fatal(err)
	}
	s.setToken("http://a:8080", "admin", "t1", true)
	s.setToken("http://a:8080", "determined", "t2", false)
	s.setToken("http://b:8080", "bob", "t3", true)
	if err := s.save(); err != nil {
		t.Fatal(err)
	}

	s, err = loadTokens(getenv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"a active": s.activeUser("http://a:8080"), "a admin": s.token("http://a:8080", "admin"),
		"a determined": s.token("http://a:8080", "determined"), "b active": s.activeUser("http://b:8080"),
		"c active": s.activeUser("http://c:8080"),
	}
	want := map[string]string{"a active": "admin", "a admin": "t1", "a determined": "t2", "b active": "bob", "c active": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	s.drop("http://a:8080", "admin")
	s.drop("http://b:8080", "bob")
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "resolute", "auth.json"))
	wantFile := "{\n    \"version\": 1,\n    \"masters\": {\n        \"http://a:8080\": {\n            \"tokens\": {\n                \"determined\": \"t2\"\n            }\n        }\n    }\n}\n"
	if diff := cmp.Diff(wantFile, string(b)); diff != "" {
		t.Errorf("auth.json (-want +got):\n%s", diff)
	}
}

func TestDamagedTokenStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "resolute"), 0o700)
	os.WriteFile(filepath.Join(dir, "resolute", "auth.json"), []byte("{not json"), 0o600)
	_, err := loadTokens(func(k string) string { return map[string]string{"XDG_CONFIG_HOME": dir}[k] })
	if err == nil || !strings.Contains(err.Error(), "is damaged; delete it and log in again") {
		t.Errorf("err = %v", err)
	}
}
