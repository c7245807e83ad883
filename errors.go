package resolute

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to one HTTP status in handlers.
const (
	EInvalid       = "invalid"       // bad input: 400
	EUnprocessable = "unprocessable" // well-formed but rejected input, e.g. a form: 422
	EUnauthorized  = "unauthorized"  // no or bad credentials: 401
	EForbidden     = "forbidden"     // authenticated but not allowed: 403
	ENotFound      = "not_found"     // 404
	EConflict      = "conflict"      // duplicate or state conflict: 409
	EGone          = "gone"          // existed once, finished: 410
	ETooLarge      = "too_large"     // request body over the limit: 413
	ETooMany       = "too_many"      // slowed down, e.g. repeated failed logins: 429
	EInternal      = "internal"      // everything else: 500
	EUnavailable   = "unavailable"   // a dependency is not ready: 503
	ETimeout       = "timeout"       // the client stopped sending its request: 408
)

// Error is the one error type of Resolute: a code for machines and a message
// for people. Messages must be safe to show to users.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("resolute error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EInternal for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the message of the first *Error in err's chain, or
// "internal error" for any other error, so internal details never reach users.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
