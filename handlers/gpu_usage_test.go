package handlers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/local"
)

// twoGPUs is a machine with two GPUs, as NVML would list them, and their
// usage.
type twoGPUs struct{ usage []resolute.GPUUsage }

func (g twoGPUs) List(context.Context) ([]local.GPU, error) {
	return []local.GPU{{Index: 0, UUID: "GPU-a", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 << 30},
		{Index: 1, UUID: "GPU-b", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 << 30}}, nil
}

func (g twoGPUs) Usage(context.Context) ([]resolute.GPUUsage, error) { return g.usage, nil }

// TestTheClusterPageShowsEachGPUsUsage runs the local resource manager on
// a machine whose GPUs report their usage: the Cluster page shows each
// GPU's utilization and memory, and /api/v1/agents carries them.
func TestTheClusterPageShowsEachGPUsUsage(t *testing.T) {
	at := time.Now()
	m := handlerstest.Start(t, handlerstest.Options{GPUs: twoGPUs{usage: []resolute.GPUUsage{
		{UUID: "GPU-a", UtilizationPercent: 87, MemoryUsedBytes: 3 << 30, MemoryTotalBytes: 80 << 30, SampledAt: at},
		{UUID: "GPU-b", UtilizationPercent: 0, MemoryUsedBytes: 0, MemoryTotalBytes: 80 << 30, SampledAt: at},
	}}})
	pages := signInPages(t, m, "admin", "")
	resp, body := get(t, pages, m, "/cluster")
	if resp.StatusCode != 200 {
		t.Fatalf("/cluster: %d", resp.StatusCode)
	}
	wants(t, "the cluster page", body, `id="slot-default-0-usage"`, "87% · 3.0 of 80.0 GiB", `id="slot-default-1-usage"`,
		"0% · 0.0 of 80.0 GiB", "NVIDIA H100 80GB HBM3")
	if strings.Count(body, "<meter") != 2 {
		t.Errorf("want a meter per GPU:\n%s", body)
	}
	admin := login(t, m, "admin", "")
	var agents resolute.AgentsResponse
	if code := api(t, m, "GET", "/api/v1/agents", admin, "", &agents); code != 200 || len(agents.Agents) != 1 {
		t.Fatalf("agents: %d %+v", code, agents)
	}
	if u := agents.Agents[0].Slots[0].Usage; u == nil || u.UtilizationPercent != 87 || u.UUID != "GPU-a" {
		t.Errorf("slot 0 usage = %+v", u)
	}
}
