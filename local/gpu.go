package local

import (
	"context"
	"errors"

	"github.com/resolute-ml/resolute"
)

// GPU is one GPU found on the machine.
type GPU struct {
	Index       int // the NVML / PCI bus order index, as CUDA_VISIBLE_DEVICES counts with CUDA_DEVICE_ORDER=PCI_BUS_ID
	UUID        string
	Name        string
	MemoryBytes uint64
}

// GPUs is what the manager asks of the machine's GPUs: their list, once
// when it starts (an error or an empty list gives the machine CPU slots),
// and their usage, every few seconds while it runs. NVML is the real one;
// tests give fakes.
type GPUs interface {
	List(ctx context.Context) ([]GPU, error)
	Usage(ctx context.Context) ([]resolute.GPUUsage, error)
}

// ErrNoNVML says NVML cannot be used here: libnvidia-ml.so.1 (the NVIDIA
// driver's) is not installed, or this binary was built without cgo.
var ErrNoNVML = errors.New("NVML is not available")

// DiscoverFunc lists GPUs and knows nothing of their usage: a GPUs made of
// a function, for tests and for machines whose GPUs are known otherwise.
type DiscoverFunc func(ctx context.Context) ([]GPU, error)

// List implements GPUs.
func (f DiscoverFunc) List(ctx context.Context) ([]GPU, error) { return f(ctx) }

// Usage implements GPUs: nothing is known.
func (f DiscoverFunc) Usage(context.Context) ([]resolute.GPUUsage, error) { return nil, nil }
