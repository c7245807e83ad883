package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// tokenStore is the file of session tokens, per master and user, in the
// layout of Determined's auth.json (version 1):
//
//	{"version": 1, "masters": {"http://host:8080": {"active_user": "admin", "tokens": {"admin": "..."}}}}
type tokenStore struct {
	path string
	file storeFile
}

type storeFile struct {
	Version int                     `json:"version"`
	Masters map[string]*masterStore `json:"masters"`
}

type masterStore struct {
	ActiveUser string            `json:"active_user,omitempty"`
	Tokens     map[string]string `json:"tokens"`
}

// configDir is where det keeps its files: $XDG_CONFIG_HOME/resolute when
// set (through getenv, so tests can point it elsewhere), else the
// platform's user config directory.
func configDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "resolute"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the config directory: %w", err)
	}
	return filepath.Join(d, "resolute"), nil
}

// loadTokens reads the token store; a missing file is an empty store.
func loadTokens(getenv func(string) string) (*tokenStore, error) {
	dir, err := configDir(getenv)
	if err != nil {
		return nil, err
	}
	s := &tokenStore{path: filepath.Join(dir, "auth.json"), file: storeFile{Version: 1}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	} else if err != nil {
		return nil, fmt.Errorf("read the token store: %w", err)
	}
	if err := json.Unmarshal(b, &s.file); err != nil || s.file.Version != 1 {
		return nil, fmt.Errorf("the token store %s is damaged; delete it and log in again", s.path)
	}
	return s, nil
}

func (s *tokenStore) master(url string) *masterStore {
	if s.file.Masters == nil {
		s.file.Masters = map[string]*masterStore{}
	}
	m := s.file.Masters[url]
	if m == nil {
		m = &masterStore{Tokens: map[string]string{}}
		s.file.Masters[url] = m
	}
	if m.Tokens == nil {
		m.Tokens = map[string]string{}
	}
	return m
}

// activeUser is the user who last logged in to master, or "".
func (s *tokenStore) activeUser(master string) string {
	if m := s.file.Masters[master]; m != nil {
		return m.ActiveUser
	}
	return ""
}

// token is user's stored token for master, or "".
func (s *tokenStore) token(master, user string) string {
	if m := s.file.Masters[master]; m != nil {
		return m.Tokens[user]
	}
	return ""
}

// users lists the users with a token for master.
func (s *tokenStore) users(master string) []string {
	var out []string
	if m := s.file.Masters[master]; m != nil {
		for u := range m.Tokens {
			out = append(out, u)
		}
	}
	return out
}

// setToken stores user's token for master, making user active if asked.
func (s *tokenStore) setToken(master, user, token string, active bool) {
	m := s.master(master)
	m.Tokens[user] = token
	if active {
		m.ActiveUser = user
	}
}

// drop forgets user's token for master.
func (s *tokenStore) drop(master, user string) {
	m := s.master(master)
	delete(m.Tokens, user)
	if m.ActiveUser == user {
		m.ActiveUser = ""
	}
	if len(m.Tokens) == 0 {
		delete(s.file.Masters, master)
	}
}

// save writes the store atomically: directory 0700, file 0600.
func (s *tokenStore) save() error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(s.file, "", "    ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "auth.json.*")
	if err != nil {
		return fmt.Errorf("save the token store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(append(b, '\n'))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path)
	}
	if err != nil {
		return fmt.Errorf("save the token store: %w", err)
	}
	return nil
}
