package handlers_test

import (
	"strings"
	"testing"
)

// TestTheHyperparametersTabChartsTheTrialsMetricsForTheBrush: the tab
// that brushes trials has the experiment's metric charts too (a line per
// trial, which brush.js highlights as the brush moves, loaded between
// chartgrid.js and charts.js), with uPlot loaded once for them and the
// scatter plots.
func TestTheHyperparametersTabChartsTheTrialsMetricsForTheBrush(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	_, body := get(t, c, f.m, f.path("?tab=hyperparameters"))
	wants(t, "the hyperparameters tab", body, `id="parallel-coordinates"`, `id="experiment-chart" hx-preserve="true" data-chart="experiment"`,
		`data-url="/api/v1/experiments/`+itoa(f.e.ID)+`/metrics"`, `data-metric="loss"`, `/static/chartgrid.`, `/static/charts.`, `/static/hparams.`, `id="scatter-lr"`)
	if n := strings.Count(body, "/static/vendor/uPlot.iife.min."); n != 1 {
		t.Errorf("the tab loads uPlot %d times, want once", n)
	}
	if i := strings.Index(body, "/static/brush."); i < 0 || i < strings.Index(body, "/static/chartgrid.") || i > strings.Index(body, "/static/charts.") {
		t.Error("brush.js is not loaded between chartgrid.js, which it extends, and charts.js, whose grids follow it")
	}
	if strings.Index(body, "/static/charts.") > strings.Index(body, "/static/hparams.") {
		t.Error("hparams.js loads before the charts it tells of the brush")
	}
}
