package local

import (
	"context"
	"maps"
	"time"

	"github.com/resolute-ml/resolute"
)

// sampleGPUsEvery reads the GPUs' usage every interval until Close.
func (m *Manager) sampleGPUsEvery(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.sampleGPUs()
		}
	}
}

// sampleGPUs reads the GPUs' usage once and keeps it for Agents (the
// Cluster page, /metrics). A failed read keeps the last sample, logged
// once per failure streak.
func (m *Manager) sampleGPUs() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	usage, err := m.opts.GPUs.Usage(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		if !m.usageFailing {
			m.log.Warn("read GPU usage", "err", err)
		}
		m.usageFailing = true
		return
	}
	m.usageFailing = false
	m.usage = make(map[string]resolute.GPUUsage, len(usage))
	for _, u := range usage {
		m.usage[u.UUID] = u
	}
}

// gpuUsage is the latest sample of each GPU, by UUID.
func (m *Manager) gpuUsage() map[string]resolute.GPUUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.usage)
}
