package handlers

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// logQuery is what a request to a logs endpoint of the API asks for: the
// filter the database applies, and how many lines from the start (head) or
// the end (tail) to send; 0 for all.
type logQuery struct {
	filter     db.LogFilter
	head, tail int
	follow     bool
}

// param is the first of a query parameter's names that is set: the API
// takes Determined's snake_case names and its camelCase ones (rankIds).
func param(q url.Values, names ...string) string {
	for _, n := range names {
		if v := q.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// params is every value of a repeated parameter under any of its names,
// commas splitting values too (sources=task,master).
func params(q url.Values, names ...string) []string {
	var out []string
	for _, n := range names {
		for _, v := range q[n] {
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// parseLogQuery reads the filters of GET /api/v1/trials/{id}/logs and
// /api/v1/tasks/{id}/logs, as Determined's endpoints take them: level (this
// level and above), search, timestamp_before and timestamp_after (RFC 3339),
// rank_ids, agent_ids, container_ids, sources and stdtypes (repeated), limit (the first lines, or
// with order_by=ORDER_BY_DESC the last ones; tail=N says the same), follow.
func parseLogQuery(q url.Values) (logQuery, error) {
	var lq logQuery
	f := db.LogFilter{Level: strings.ToUpper(param(q, "level")), Search: param(q, "search", "searchText", "search_text")}
	if f.Level != "" && !slices.Contains(views.LogLevels, f.Level) {
		return lq, resolute.Errorf(resolute.EInvalid, "level: expected one of %s, got %q", strings.Join(views.LogLevels, ", "), f.Level)
	}
	for _, t := range []struct {
		names []string
		dst   **time.Time
	}{{[]string{"timestamp_after", "timestampAfter"}, &f.Since}, {[]string{"timestamp_before", "timestampBefore"}, &f.Until}} {
		if v := param(q, t.names...); v != "" {
			ts, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return lq, resolute.Errorf(resolute.EInvalid, "%s: expected a time like 2026-01-02T15:04:05Z, got %q", t.names[0], v)
			}
			*t.dst = &ts
		}
	}
	for _, v := range params(q, "rank_ids", "rankIds") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return lq, resolute.Errorf(resolute.EInvalid, "rank_ids: expected ranks (whole numbers), got %q", v)
		}
		f.Ranks = append(f.Ranks, n)
	}
	f.Sources = params(q, "sources", "source")
	f.StdTypes = params(q, "stdtypes", "stdtype")
	f.AgentIDs = params(q, "agent_ids", "agentIds")
	f.ContainerIDs = params(q, "container_ids", "containerIds")
	limit, err := optInt(param(q, "limit"), "limit")
	if err != nil {
		return lq, err
	}
	tail, err := optInt(param(q, "tail"), "tail")
	if err != nil {
		return lq, err
	}
	switch order := param(q, "order_by", "orderBy"); order {
	case "", "ORDER_BY_ASC", "ORDER_BY_UNSPECIFIED", "asc":
		lq.head = limit
	case "ORDER_BY_DESC", "desc":
		if tail == 0 {
			tail = limit
		}
	default:
		return lq, resolute.Errorf(resolute.EInvalid, "order_by: expected ORDER_BY_ASC or ORDER_BY_DESC, got %q", order)
	}
	if lq.head > 0 && tail > 0 {
		return lq, resolute.Errorf(resolute.EInvalid, "limit and tail: give one, the first lines or the last ones")
	}
	lq.tail = tail
	lq.follow = q.Get("follow") == "true" || q.Get("follow") == "1"
	lq.filter = f
	return lq, nil
}
