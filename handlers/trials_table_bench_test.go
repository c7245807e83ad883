package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// BenchmarkTrialsTabAt1000Trials seeds an experiment of 1,000 trials (a
// varying and a shared hyperparameter, a best loss on most, twenty
// validation reports each) and prints the time of its trials tab through
// the real router, request to last byte, over sorts and pages: p50 and
// p95 in ms. The page is 50 rows, sorted and cut by PostgreSQL.
func BenchmarkTrialsTabAt1000Trials(b *testing.B) {
	m := handlerstest.Start(b, handlerstest.Options{})
	ctx := b.Context()
	admin, err := m.DB.UserByUsername(ctx, "admin")
	if err != nil {
		b.Fatal(err)
	}
	e, err := m.Experiments.Create(ctx, authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: `
name: wide
entrypoint: sleep 30
hyperparameters:
  lr: {type: log, base: 10, minval: -4, maxval: -1}
  batch: 32
searcher: {name: single, metric: loss}
`})
	if err != nil {
		b.Fatal(err)
	}
	var reports []resolute.MetricsReport
	for i := range 1000 {
		tr, err := m.DB.CreateTrial(ctx, e.ID, 100+i, resolute.StatePaused, fmt.Appendf(nil, `{"lr": %g, "batch": 32}`, 0.0001*float64(i+1)), 1)
		if err != nil {
			b.Fatal(err)
		}
		if i%10 == 9 {
			continue
		}
		if err := m.DB.SetTrialBestValidation(ctx, tr.ID, float64((i*37)%1000)); err != nil {
			b.Fatal(err)
		}
		for step := int64(1); step <= 20; step++ {
			reports = append(reports, resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step * 10, Group: "validation",
				Metrics: fmt.Appendf(nil, `{"avg_metrics": {"loss": %g, "accuracy": %g}}`, float64(i%97)/float64(step), float64(step)/20)})
		}
	}
	if err := m.DB.InsertMetrics(ctx, reports); err != nil {
		b.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := c.PostForm(m.URL+"/login", url.Values{"username": {"admin"}, "password": {""}}); err != nil || resp.StatusCode != http.StatusSeeOther {
		b.Fatalf("sign in: %v %v", err, resp)
	}
	base := "/experiments/" + fmt.Sprint(e.ID)
	paths := []string{"?tab=trials", "?page=12&tab=trials", "?sort=best&tab=trials", "?order=desc&page=20&sort=best&tab=trials",
		"?sort=hp.lr&tab=trials", "?order=desc&sort=m.loss&tab=trials", "?sort=duration&tab=trials", "?sort=checkpoints&tab=trials",
		"?cols=state%2Chp.lr%2Cbest%2Cm.accuracy%2Cm.loss%2Cduration&sort=m.accuracy&tab=trials"}
	// The notes tab: the same header without the table, for comparison.
	var notes []time.Duration
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range append(paths, "?tab=notes") {
			start := time.Now()
			resp, err := c.Get(m.URL + base + p)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("%s: %d", p, resp.StatusCode)
			}
			if p == "?tab=notes" {
				notes = append(notes, time.Since(start))
			} else {
				took = append(took, time.Since(start))
			}
		}
	}
	b.StopTimer()
	slices.Sort(took)
	slices.Sort(notes)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*95/100]), "p95-ms")
	b.Logf("the trials tab of 1,000 trials: p50 %.1f ms, p95 %.1f ms, max %.1f ms over %d requests; the notes tab p50 %.1f ms",
		ms(took[len(took)/2]), ms(took[len(took)*95/100]), ms(took[len(took)-1]), len(took), ms(notes[len(notes)/2]))
}
