// Package live tells the web UI what changed, so that live pages are pushed
// rather than polled. PostgreSQL is the source: statement triggers on the
// tables that pages show send NOTIFY resolute_changes with the table's name
// (the collection topic, e.g. experiments) and one topic per object the
// statement changed, e.g. trial:27 or experiment:3, named from its
// transition table (db/migrations/00016_object_topics.sql), so a bulk insert
// notifies once per object, not once per row. A Listener holds one
// dedicated connection that LISTENs, reconnecting when it drops, and fans
// the topics out to Subscriptions, each to the topics its page shows, and
// each of which delivers a topic at most once per window, however many
// changes arrive in a burst.
//
// It only says which object changed, never what changed or to whom: pages
// ask for their own fragments again, through the usual authorization. It
// must not query or interpret the data.
package live
