// Package auth holds the pure parts of logging in: password hashing, session
// tokens and their hashes, and the throttle that slows down repeated failed
// logins. It stores nothing; sessions live in PostgreSQL through package db.
package auth
