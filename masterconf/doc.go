// Package masterconf reads the master's configuration: master.yaml, then
// RESOLUTE_* environment variables, then command-line flags, each overriding
// the one before. Keys follow Determined's master.yaml where one exists.
//
// Unknown keys and bad values are errors naming the key path and what was
// expected; start-up stops on them. The package only parses and validates:
// it opens no files other than the config and starts nothing.
package masterconf
