package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/resolute-ml/resolute"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	if err != nil {
		os.Exit(report(os.Stderr, err))
	}
}

// usageError is a mistake in how det was called: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// report prints err for people as "Error: <message>" and returns the exit
// status: 2 for usage mistakes, 1 for everything else (server errors
// included), 130 when interrupted, and that of `det cmd run`'s command.
func report(stderr io.Writer, err error) int {
	var ue usageError
	var es exitStatus
	switch {
	case errors.Is(err, context.Canceled):
		return 130
	case errors.As(err, &es):
		return es.code
	case errors.As(err, &ue), strings.HasPrefix(err.Error(), "unknown command "):
		fmt.Fprintf(stderr, "Error: %s\n", err.Error())
		return 2
	}
	fmt.Fprintf(stderr, "Error: %s\n", message(err))
	return 1
}

// message is what people see of err: the server's message for API errors,
// the error text otherwise.
func message(err error) string {
	var re *resolute.Error
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}
