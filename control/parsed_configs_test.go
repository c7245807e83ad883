package control

import "testing"

func TestAParsedConfigIsReusedOnlyForTheSameBytes(t *testing.T) {
	var p parsedConfigs
	a := []byte(`{"searcher": {"name": "single", "metric": "loss"}, "max_restarts": 3}`)
	first, err := p.parse(1, a)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := p.parse(1, append([]byte(nil), a...)); again != first {
		t.Errorf("the same bytes were parsed again")
	}
	if other, _ := p.parse(2, a); other == first {
		t.Errorf("another experiment got experiment 1's config")
	}
	edited, err := p.parse(1, []byte(`{"searcher": {"name": "single", "metric": "loss"}, "max_restarts": 5}`))
	if err != nil || edited == first || edited.MaxRestarts != 5 {
		t.Errorf("an edited config: %+v, %v", edited, err)
	}
	if _, err := p.parse(3, []byte(`{"searcher": 7}`)); err == nil {
		t.Errorf("a config that does not parse was accepted")
	}
	for id := int64(10); id < 10+2*maxParsedConfigs; id++ {
		if _, err := p.parse(id, a); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.m) > maxParsedConfigs {
		t.Errorf("%d configs kept, at most %d", len(p.m), maxParsedConfigs)
	}
}
