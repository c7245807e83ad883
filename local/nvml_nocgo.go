//go:build !cgo || !linux

package local

import (
	"context"
	"fmt"

	"github.com/resolute-ml/resolute"
)

// NVML stands in for the NVML of cgo builds on Linux: go-nvml needs cgo,
// and a binary built without it (the Kubernetes image, which never runs
// the local resource manager) finds no GPU and uses CPU slots.
type NVML struct{}

// NewNVML returns the stand-in; path is not used.
func NewNVML(path string) *NVML { return &NVML{} }

// List implements GPUs: always ErrNoNVML.
func (n *NVML) List(context.Context) ([]GPU, error) {
	return nil, fmt.Errorf("%w: this build has no cgo (CGO_ENABLED=0)", ErrNoNVML)
}

// Usage implements GPUs: always ErrNoNVML.
func (n *NVML) Usage(context.Context) ([]resolute.GPUUsage, error) {
	return nil, fmt.Errorf("%w: this build has no cgo (CGO_ENABLED=0)", ErrNoNVML)
}

// Close does nothing.
func (n *NVML) Close() error { return nil }
