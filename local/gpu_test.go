package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
)

// fakeGPUs is a machine's GPUs as a test says: a list, and a usage that
// can change.
type fakeGPUs struct {
	list  func(context.Context) ([]GPU, error)
	mu    sync.Mutex
	usage []resolute.GPUUsage
	err   error
}

func (f *fakeGPUs) List(ctx context.Context) ([]GPU, error) { return f.list(ctx) }

func (f *fakeGPUs) Usage(context.Context) ([]resolute.GPUUsage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.usage, f.err
}

func (f *fakeGPUs) set(usage []resolute.GPUUsage, err error) {
	f.mu.Lock()
	f.usage, f.err = usage, err
	f.mu.Unlock()
}

// logLines collects a manager's log lines.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) matching(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

func cpuSlots(n int) []Slot {
	out := make([]Slot, n)
	for i := range out {
		out[i] = Slot{ID: i, Type: SlotCPU, DeviceIndex: i, Device: "cpu"}
	}
	return out
}

func TestTheSlotsFollowTheGPUsFound(t *testing.T) {
	tests := map[string]struct {
		list    func(context.Context) ([]GPU, error)
		want    []Slot
		wantLog string
	}{
		"GPUs become CUDA slots in index order": {
			list: func(context.Context) ([]GPU, error) {
				return []GPU{{Index: 1, UUID: "GPU-b", Name: "B", MemoryBytes: 2}, {Index: 0, UUID: "GPU-a", Name: "A", MemoryBytes: 1}}, nil
			},
			want: []Slot{
				{ID: 0, Type: SlotCUDA, DeviceIndex: 0, Device: "A", UUID: "GPU-a", MemoryBytes: 1},
				{ID: 1, Type: SlotCUDA, DeviceIndex: 1, Device: "B", UUID: "GPU-b", MemoryBytes: 2},
			},
			wantLog: "GPUs found",
		},
		"NVML absent gives CPU slots": {
			list: func(context.Context) ([]GPU, error) {
				return nil, fmt.Errorf("%w: libnvidia-ml.so.1 not found", ErrNoNVML)
			},
			want:    cpuSlots(2),
			wantLog: "libnvidia-ml.so.1 not found",
		},
		"a failing NVML gives CPU slots": {
			list:    func(context.Context) ([]GPU, error) { return nil, errors.New("nvmlDeviceGetCount: GPU is lost") },
			want:    cpuSlots(2),
			wantLog: "GPU is lost",
		},
		"a panicking discovery gives CPU slots": {
			list:    func(context.Context) ([]GPU, error) { panic("driver mismatch") },
			want:    cpuSlots(2),
			wantLog: "driver mismatch",
		},
		"a driver with no device gives CPU slots": {
			list:    func(context.Context) ([]GPU, error) { return nil, nil },
			want:    cpuSlots(2),
			wantLog: "no GPU device found",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var logs logLines
			m := newManager(t, func(o *Options) {
				o.GPUs, o.Slots = &fakeGPUs{list: tc.list}, 2
				o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			snap := m.Capacity()
			if diff := cmp.Diff(tc.want, snap.Slots); diff != "" {
				t.Errorf("slots (-want +got):\n%s", diff)
			}
			lines := append(logs.matching("no GPUs"), logs.matching("GPUs found")...)
			if len(lines) != 1 || !strings.Contains(lines[0], tc.wantLog) {
				t.Errorf("log lines about GPUs = %q, want one saying %q", lines, tc.wantLog)
			}
		})
	}
}

// TestNVMLWithoutTheLibraryFallsBackToCPUSlots runs the real NVML path on
// a machine without libnvidia-ml (this one, in CI): the library is not
// found, which says so, and the manager gets CPU slots and one log line.
func TestNVMLWithoutTheLibraryFallsBackToCPUSlots(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	for name, path := range map[string]string{"at a path that does not exist": missing, "on the loader's path": ""} {
		t.Run(name, func(t *testing.T) {
			n := NewNVML(path)
			defer n.Close()
			gpus, err := n.List(context.Background())
			if path == "" && err == nil {
				t.Skipf("this machine has NVML and %d GPUs", len(gpus))
			}
			if !errors.Is(err, ErrNoNVML) {
				t.Fatalf("List = %v, %v; want ErrNoNVML", gpus, err)
			}
			if _, err := n.Usage(context.Background()); !errors.Is(err, ErrNoNVML) {
				t.Errorf("Usage: %v, want ErrNoNVML", err)
			}
			var logs logLines
			m := newManager(t, func(o *Options) {
				o.GPUs, o.Slots = n, 3
				o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			if diff := cmp.Diff(cpuSlots(3), m.Capacity().Slots); diff != "" {
				t.Errorf("slots (-want +got):\n%s", diff)
			}
			if lines := logs.matching("no GPUs: using CPU slots"); len(lines) != 1 || !strings.Contains(lines[0], "NVML") {
				t.Errorf("log = %q, want one line naming NVML", lines)
			}
		})
	}
}

// TestAgentsCarryEachGPUsUsage gives the manager two GPUs and changes
// their usage: Agents shows the latest sample per slot, keeps it when a
// read fails, and CPU machines show none.
func TestAgentsCarryEachGPUsUsage(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	gpus := &fakeGPUs{list: func(context.Context) ([]GPU, error) {
		return []GPU{{Index: 0, UUID: "GPU-a", Name: "A"}, {Index: 1, UUID: "GPU-b", Name: "B"}}, nil
	}}
	first := []resolute.GPUUsage{{UUID: "GPU-b", UtilizationPercent: 30, MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 80 << 30, SampledAt: at}}
	gpus.set(first, nil)
	m := newManager(t, func(o *Options) { o.GPUs, o.GPUSampleInterval = gpus, time.Hour })
	usageOf := func() []*resolute.GPUUsage {
		var out []*resolute.GPUUsage
		for _, s := range m.Agents("")[0].Slots {
			out = append(out, s.Usage)
		}
		return out
	}
	if diff := cmp.Diff([]*resolute.GPUUsage{nil, &first[0]}, usageOf()); diff != "" {
		t.Errorf("after New (-want +got):\n%s", diff)
	}
	second := []resolute.GPUUsage{
		{UUID: "GPU-a", UtilizationPercent: 99, MemoryUsedBytes: 70 << 30, MemoryTotalBytes: 80 << 30, SampledAt: at.Add(5 * time.Second)},
		{UUID: "GPU-b", UtilizationPercent: 0, MemoryUsedBytes: 0, MemoryTotalBytes: 80 << 30, SampledAt: at.Add(5 * time.Second)},
	}
	gpus.set(second, nil)
	m.sampleGPUs()
	if diff := cmp.Diff([]*resolute.GPUUsage{&second[0], &second[1]}, usageOf()); diff != "" {
		t.Errorf("after a sample (-want +got):\n%s", diff)
	}
	gpus.set(nil, errors.New("GPU is lost"))
	m.sampleGPUs()
	if diff := cmp.Diff([]*resolute.GPUUsage{&second[0], &second[1]}, usageOf()); diff != "" {
		t.Errorf("after a failed read (-want +got):\n%s", diff)
	}

	cpu := newManager(t, nil)
	for _, s := range cpu.Agents("")[0].Slots {
		if s.Usage != nil {
			t.Errorf("CPU slot %d has GPU usage %+v", s.ID, s.Usage)
		}
	}
}
