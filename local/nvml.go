//go:build cgo && linux

package local

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/resolute-ml/resolute"
)

// NVML reads the machine's NVIDIA GPUs through NVML: go-nvml opens the
// driver's libnvidia-ml.so.1 with dlopen on first use, so the binary runs
// (with CPU slots) where there is no driver. It is safe for concurrent use.
type NVML struct {
	path string // of the library; "" for libnvidia-ml.so.1 on the loader's path

	mu      sync.Mutex
	lib     nvml.Interface
	initErr error // of the first Init; NVML is not tried again
	tried   bool
}

// NewNVML returns the NVML of the library at path ("" for the driver's
// libnvidia-ml.so.1); nothing is loaded until List or Usage.
func NewNVML(path string) *NVML { return &NVML{path: path} }

// init loads and initializes the library once.
func (n *NVML) init() error {
	if n.tried {
		return n.initErr
	}
	n.tried = true
	var opts []nvml.LibraryOption
	if n.path != "" {
		opts = append(opts, nvml.WithLibraryPath(n.path))
	}
	lib := nvml.New(opts...)
	switch ret := lib.Init(); ret {
	case nvml.SUCCESS:
		n.lib = lib
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		n.initErr = fmt.Errorf("%w: %s not found (no NVIDIA driver)", ErrNoNVML, n.libraryName())
	default:
		n.initErr = fmt.Errorf("%w: nvmlInit: %s", ErrNoNVML, lib.ErrorString(ret))
	}
	return n.initErr
}

func (n *NVML) libraryName() string {
	if n.path == "" {
		return "libnvidia-ml.so.1"
	}
	return n.path
}

// List implements GPUs: every device NVML counts, by its index.
func (n *NVML) List(ctx context.Context) ([]GPU, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.init(); err != nil {
		return nil, err
	}
	count, ret := n.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvmlDeviceGetCount: %s", n.lib.ErrorString(ret))
	}
	gpus := make([]GPU, 0, count)
	for i := range count {
		dev, ret := n.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvmlDeviceGetHandleByIndex(%d): %s", i, n.lib.ErrorString(ret))
		}
		g := GPU{Index: i}
		if g.UUID, ret = n.lib.DeviceGetUUID(dev); ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvmlDeviceGetUUID(%d): %s", i, n.lib.ErrorString(ret))
		}
		g.Name, _ = n.lib.DeviceGetName(dev) // a name is for people: unknown is fine
		if mem, ret := n.lib.DeviceGetMemoryInfo(dev); ret == nvml.SUCCESS {
			g.MemoryBytes = mem.Total
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

// Usage implements GPUs: each device's utilization over NVML's last sample
// period and its memory in use. A device that cannot say is left out.
func (n *NVML) Usage(ctx context.Context) ([]resolute.GPUUsage, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.init(); err != nil {
		return nil, err
	}
	count, ret := n.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvmlDeviceGetCount: %s", n.lib.ErrorString(ret))
	}
	now := time.Now()
	var out []resolute.GPUUsage
	for i := range count {
		dev, ret := n.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		uuid, ret := n.lib.DeviceGetUUID(dev)
		if ret != nvml.SUCCESS {
			continue
		}
		u := resolute.GPUUsage{UUID: uuid, SampledAt: now}
		if util, ret := n.lib.DeviceGetUtilizationRates(dev); ret == nvml.SUCCESS {
			u.UtilizationPercent = float64(util.Gpu)
		}
		if mem, ret := n.lib.DeviceGetMemoryInfo(dev); ret == nvml.SUCCESS {
			u.MemoryUsedBytes, u.MemoryTotalBytes = mem.Used, mem.Total
		}
		out = append(out, u)
	}
	return out, nil
}

// Close shuts NVML down when it was initialized.
func (n *NVML) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lib != nil {
		n.lib.Shutdown()
		n.lib = nil
	}
	return nil
}
