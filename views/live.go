package views

import (
	"strings"

	"github.com/resolute-ml/resolute/live"
)

// liveOn is the hx-trigger of a live region that shows topics (objects
// such as trial:27, or collections such as experiments; see package live):
// it fetches itself again when one changes (pushed, see web/static/app.js)
// and every so often, in case the stream is down.
func liveOn(every string, topics ...string) string {
	var b strings.Builder
	for _, t := range topics {
		b.WriteString("live:" + t + " from:body, ")
	}
	return b.String() + "every " + every
}

// object is the live topic of one object, e.g. trial:27.
func object(kind string, id any) string { return live.Object(kind, id) }
