package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// terminal says whether stdin is a terminal that a person types into.
func (a *app) terminal() bool {
	f, ok := a.stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// readLine reads one line of stdin without its line ending. At the end of
// input it returns what it has, and io.EOF only when that is nothing.
func (a *app) readLine() (string, error) {
	if a.lines == nil {
		a.lines = bufio.NewReader(a.stdin)
	}
	line, err := a.lines.ReadString('\n')
	if errors.Is(err, io.EOF) && line != "" {
		err = nil
	}
	return strings.TrimRight(line, "\r\n"), err
}

// prompt asks for a line of text, showing the question on stderr.
func (a *app) prompt(question string) (string, error) {
	fmt.Fprint(a.stderr, question)
	s, err := a.readLine()
	if errors.Is(err, io.EOF) {
		return "", fmt.Errorf("no answer to %q: stdin ended", strings.TrimSpace(question))
	}
	return s, err
}

// secret asks for a password: without echo on a terminal, else one line of
// stdin (an empty line or the end of input is the empty password).
func (a *app) secret(question string) (string, error) {
	if !a.terminal() {
		s, err := a.readLine()
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		return s, err
	}
	fmt.Fprint(a.stderr, question)
	b, err := term.ReadPassword(int(a.stdin.(*os.File).Fd()))
	fmt.Fprintln(a.stderr)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	return string(b), nil
}

// password returns $DET_PASS when it is set (Determined's variable for
// scripts), else asks as secret does. getenv cannot tell an empty DET_PASS
// from an unset one; scripts give the empty password on stdin instead.
func (a *app) password(question string) (string, error) {
	if p := a.getenv("DET_PASS"); p != "" {
		return p, nil
	}
	return a.secret(question)
}

// newPassword asks for a new password twice on a terminal; elsewhere it
// reads it once.
func (a *app) newPassword(username string) (string, error) {
	p, err := a.secret(fmt.Sprintf("New password for user '%s': ", username))
	if err != nil || !a.terminal() {
		return p, err
	}
	again, err := a.secret("Confirm password: ")
	if err != nil {
		return "", err
	}
	if p != again {
		return "", errors.New("passwords do not match")
	}
	return p, nil
}

// confirm asks a yes/no question on a terminal. Without one it refuses, so
// scripts must say --yes.
func (a *app) confirm(question, flag string) (bool, error) {
	if !a.terminal() {
		return false, usageError{fmt.Errorf("stdin is not a terminal, so det cannot ask for confirmation: pass %s", flag)}
	}
	answer, err := a.prompt(question + " [y/N] ")
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
