package resolute

import "time"

// GPUUsage is one GPU's latest utilization and memory, as the local
// resource manager reads them through NVML every few seconds.
type GPUUsage struct {
	UUID string `json:"uuid"`
	// UtilizationPercent is the share of the last sample period in which a
	// kernel ran on the GPU, 0 to 100.
	UtilizationPercent float64   `json:"utilizationPercent"`
	MemoryUsedBytes    uint64    `json:"memoryUsedBytes"`
	MemoryTotalBytes   uint64    `json:"memoryTotalBytes"`
	SampledAt          time.Time `json:"sampledAt"`
}
