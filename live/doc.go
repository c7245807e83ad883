// Package live tells the web UI what changed, so that live pages are pushed
// rather than polled. PostgreSQL is the source: statement triggers on the
// tables that pages show send NOTIFY resolute_changes with the table's name
// (db/migrations/00011_change_notifications.sql); a Listener holds one
// dedicated connection that LISTENs, reconnecting when it drops, and fans the
// topics out to Subscriptions, each of which delivers a topic at most once
// per window, however many changes arrive in a burst.
//
// It only says which table changed, never what changed or to whom: pages ask
// for their own fragments again, through the usual authorization. It must
// not query or interpret the data.
package live
