package views

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParallelCoordinatesLayOutEachTrial(t *testing.T) {
	d := HParamData{
		Metric: "loss", SmallerIsBetter: true,
		Names: []string{"fixed", "lr", "opt"}, Log: []bool{false, true, false},
		Trials: []HParamTrial{
			{ID: 1, Values: []any{1.0, 0.001, "sgd"}, Metric: 0.5},
			{ID: 2, Values: []any{1.0, 0.01, "adam"}, Metric: 0.3},
			{ID: 3, Values: []any{1.0, 0.1, "adam"}, Metric: 0.1},
		},
	}
	if diff := cmp.Diff([]int{1, 2}, d.Varying()); diff != "" {
		t.Fatalf("varying (-want +got):\n%s", diff)
	}
	p := d.parallel()
	var names []string
	for _, a := range p.Axes {
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{"lr", "opt", "loss"}, names); diff != "" {
		t.Fatalf("axes (-want +got):\n%s", diff)
	}
	// lr is searched on a log scale: 0.01 sits half way up its axis.
	bottom, top := pcHeight-pcBottom, pcTop
	mid := num((bottom + top) / 2)
	if got := p.Lines[1].Points; !strings.HasPrefix(got, num(pcLeft)+","+mid+" ") {
		t.Errorf("trial 2 starts at %s, want y %s on the lr axis", got, mid)
	}
	// The best trial is drawn last, in blue; the worst in orange.
	if p.Lines[len(p.Lines)-1].TrialID != 3 || !strings.HasPrefix(p.Lines[len(p.Lines)-1].Color, "hsl(212,") {
		t.Errorf("last line %+v", p.Lines[len(p.Lines)-1])
	}
	if p.Lines[0].TrialID != 1 || !strings.HasPrefix(p.Lines[0].Color, "hsl(24,") {
		t.Errorf("first line %+v", p.Lines[0])
	}
	if got := p.Lines[0].Title; got != "Trial 1: lr = 0.001, opt = sgd, loss = 0.5" {
		t.Errorf("title %q", got)
	}
	want := `{"name":"opt","metric":"loss","categories":["adam","sgd"],"points":[[1,0.5,1],[0,0.3,2],[0,0.1,3]]}`
	if got := d.scatterJSON(2); got != want {
		t.Errorf("scatter of opt:\n got %s\nwant %s", got, want)
	}
	if got := d.scatterJSON(1); !strings.Contains(got, `"log":true`) {
		t.Errorf("scatter of lr is not logarithmic: %s", got)
	}
}
