package views

import (
	"net/url"
	"strconv"
)

// UsagePage is Cluster → Usage: the slot-hours allocations used from Start
// to End (YYYY-MM-DD), in all and by user, resource pool and workspace.
type UsagePage struct {
	Shell
	Start, End string
	Monthly    bool
	Error      string // why the range was refused; "" when it was not
	// TotalHours is every allocation's slot-hours in the range.
	TotalHours float64
	// By are the totals of each grouping, in order: users, pools,
	// workspaces.
	By []UsageGroup
}

// UsageGroup is the totals of one grouping (users, pools or workspaces),
// largest first.
type UsageGroup struct {
	Title, Field string // "User", "byUsername"
	Rows         []UsageRow
}

// UsageRow is one user's, pool's or workspace's slot-hours.
type UsageRow struct {
	Name  string
	Hours float64
}

// APIURL is the aggregated usage the chart reads.
func (u UsagePage) APIURL() string {
	q := url.Values{"start_date": {u.Start}, "end_date": {u.End}}
	if u.Monthly {
		q.Set("period", "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY")
	}
	return "/api/v1/resources/allocation/aggregated?" + q.Encode()
}

// hours is slot-hours as the page shows them.
func hours(h float64) string { return strconv.FormatFloat(h, 'f', 2, 64) }
