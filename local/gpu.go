package local

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// GPU is one GPU found on the machine.
type GPU struct {
	Index       int // the NVML / PCI bus order index, as CUDA_VISIBLE_DEVICES counts with CUDA_DEVICE_ORDER=PCI_BUS_ID
	UUID        string
	Name        string
	MemoryBytes uint64
}

// DiscoverFunc lists the GPUs of the machine. An error or an empty list
// means the machine gets CPU slots.
type DiscoverFunc func(ctx context.Context) ([]GPU, error)

// DiscoverNVIDIA lists NVIDIA GPUs by asking nvidia-smi, which ships with
// the driver and reads NVML. It needs no cgo and fails with an error, never
// a panic, where the driver or nvidia-smi is missing.
func DiscoverNVIDIA(ctx context.Context) ([]GPU, error) {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, fmt.Errorf("discover gpus: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path,
		"--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("discover gpus: nvidia-smi: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return parseNvidiaSMI(stdout.String())
}

// parseNvidiaSMI reads nvidia-smi's CSV: index, uuid, name, memory in MiB.
func parseNvidiaSMI(out string) ([]GPU, error) {
	r := csv.NewReader(strings.NewReader(out))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = 4
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("discover gpus: parse nvidia-smi output: %w", err)
	}
	gpus := make([]GPU, 0, len(records))
	for _, rec := range records {
		idx, err := strconv.Atoi(strings.TrimSpace(rec[0]))
		if err != nil {
			return nil, fmt.Errorf("discover gpus: bad index %q", rec[0])
		}
		g := GPU{Index: idx, UUID: strings.TrimSpace(rec[1]), Name: strings.TrimSpace(rec[2])}
		// "[N/A]" and the like leave the memory unknown rather than failing.
		if mib, err := strconv.ParseUint(strings.TrimSpace(rec[3]), 10, 64); err == nil {
			g.MemoryBytes = mib << 20
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}
