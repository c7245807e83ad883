package local

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseNvidiaSMI(t *testing.T) {
	tests := map[string]struct {
		out     string
		want    []GPU
		wantErr bool
	}{
		"two GPUs": {
			out: "0, GPU-aaa, NVIDIA H100 80GB HBM3, 81559\n1, GPU-bbb, NVIDIA H100 80GB HBM3, 81559\n",
			want: []GPU{
				{Index: 0, UUID: "GPU-aaa", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20},
				{Index: 1, UUID: "GPU-bbb", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20},
			},
		},
		"unknown memory is left zero": {out: "0, GPU-a, Some GPU, [N/A]\n", want: []GPU{{UUID: "GPU-a", Name: "Some GPU"}}},
		"no GPU":                      {out: "", want: []GPU{}},
		"garbage is an error":         {out: "No devices were found, really\n", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseNvidiaSMI(tc.out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); !tc.wantErr && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewDiscoversSlots(t *testing.T) {
	tests := map[string]struct {
		discover DiscoverFunc
		want     []Slot
	}{
		"GPUs become CUDA slots in index order": {
			discover: func(context.Context) ([]GPU, error) {
				return []GPU{{Index: 1, UUID: "GPU-b", Name: "B", MemoryBytes: 2}, {Index: 0, UUID: "GPU-a", Name: "A", MemoryBytes: 1}}, nil
			},
			want: []Slot{
				{ID: 0, Type: SlotCUDA, DeviceIndex: 0, Device: "A", UUID: "GPU-a", MemoryBytes: 1},
				{ID: 1, Type: SlotCUDA, DeviceIndex: 1, Device: "B", UUID: "GPU-b", MemoryBytes: 2},
			},
		},
		"a discovery error gives CPU slots": {
			discover: func(context.Context) ([]GPU, error) { return nil, errors.New("libnvidia-ml.so.1 not found") },
			want:     []Slot{{ID: 0, Type: SlotCPU, DeviceIndex: 0, Device: "cpu"}, {ID: 1, Type: SlotCPU, DeviceIndex: 1, Device: "cpu"}},
		},
		"a panicking discovery gives CPU slots": {
			discover: func(context.Context) ([]GPU, error) { panic("driver mismatch") },
			want:     []Slot{{ID: 0, Type: SlotCPU, DeviceIndex: 0, Device: "cpu"}, {ID: 1, Type: SlotCPU, DeviceIndex: 1, Device: "cpu"}},
		},
		"no GPUs gives CPU slots": {
			discover: func(context.Context) ([]GPU, error) { return nil, nil },
			want:     []Slot{{ID: 0, Type: SlotCPU, DeviceIndex: 0, Device: "cpu"}, {ID: 1, Type: SlotCPU, DeviceIndex: 1, Device: "cpu"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, func(o *Options) { o.Discover, o.Slots = tc.discover, 2 })
			snap := m.Capacity()
			if diff := cmp.Diff(tc.want, snap.Slots); diff != "" {
				t.Errorf("slots (-want +got):\n%s", diff)
			}
			if snap.AgentID != "test-agent" {
				t.Errorf("agent = %q", snap.AgentID)
			}
		})
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := map[string]Options{
		"a missing state dir": {},
		"negative slots":      {StateDir: t.TempDir(), Slots: -1},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := New(o); code(err) != "invalid" {
				t.Errorf("New = %v, want invalid", err)
			}
		})
	}
}

func TestDiscoverNVIDIAWithoutDriverFails(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if gpus, err := DiscoverNVIDIA(context.Background()); err == nil {
		t.Errorf("DiscoverNVIDIA without nvidia-smi = %v, want an error", gpus)
	}
}
