package control

import (
	"bytes"
	"sync"

	"github.com/resolute-ml/resolute/expconf"
)

// parsedConfigs keeps each experiment's config as last parsed, with the
// stored bytes it came from: an experiment is locked (and its config read)
// on every metrics report, and parsing it was about a fifth of ingestion's
// CPU. Stored bytes that differ are parsed again, so an edited config is
// never served stale. The configs are shared between callers: read them,
// never change them.
type parsedConfigs struct {
	mu sync.Mutex
	m  map[int64]parsedConfig
}

type parsedConfig struct {
	raw []byte
	cfg *expconf.ExperimentConfig
}

// maxParsedConfigs bounds the cache; past it, it starts again empty.
const maxParsedConfigs = 1024

// parse returns experiment id's config parsed from raw.
func (p *parsedConfigs) parse(id int64, raw []byte) (*expconf.ExperimentConfig, error) {
	p.mu.Lock()
	c, ok := p.m[id]
	p.mu.Unlock()
	if ok && bytes.Equal(c.raw, raw) {
		return c.cfg, nil
	}
	cfg, err := expconf.ParseExperiment(raw)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || len(p.m) >= maxParsedConfigs {
		p.m = make(map[int64]parsedConfig)
	}
	p.m[id] = parsedConfig{raw: bytes.Clone(raw), cfg: cfg}
	return cfg, nil
}
