// Command det is Resolute's command-line client, compatible with the habits
// of Determined's det: the same nouns, verbs, flags, aliases and
// environment variables (DET_MASTER, DET_USER, DET_PASS, DET_USER_TOKEN).
//
// It is thin over package client: one file per noun parses arguments, calls
// the API and prints tables for people or JSON (--json) for scripts. It owns
// the token store in the user's config directory and the password prompts.
// It must hold no business rules; the master decides and explains.
package main
