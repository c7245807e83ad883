package masterconf

import (
	"fmt"
	"sort"
)

// Pool is a resource pool as the master runs it: its scheduler settings and
// the local slots it owns.
type Pool struct {
	Name        string
	Description string
	Scheduler   Scheduler // resolved: the pool's block, or the resource manager's
	SlotIDs     []int
}

// DefaultPriority is a job's priority when neither it nor its pool's scheduler
// names one, as Determined's: 42 on the local resource manager, where a lower
// number runs first, and 50 on Kubernetes, where a higher one does (the value
// of the determined-medium-priority class).
func (c *Config) DefaultPriority() int {
	if c.ResourceManager.Type == "kubernetes" {
		return 50
	}
	return 42
}

// resolve fills a scheduler block's defaults; blank means fair_share when
// blankIsFairShare (a pool's own block, as the seeds' example says).
func (s Scheduler) resolve(blankIsFairShare bool, defaultPriority int) Scheduler {
	if s.Priority != nil {
		s.Preemption = s.Preemption || s.Priority.Preemption
		if s.DefaultPriority == 0 {
			s.DefaultPriority = s.Priority.DefaultPriority
		}
		s.Priority = nil
	}
	if s.Type == "" {
		s.Type = "priority"
		if blankIsFairShare {
			s.Type = "fair_share"
		}
	}
	if s.FittingPolicy == "" {
		s.FittingPolicy = "best"
	}
	if s.DefaultPriority == 0 {
		s.DefaultPriority = defaultPriority
	}
	return s
}

// Pools assigns the machine's slots (ids 0..total-1) to the configured pools:
// slot_ids, or a count of the next free slots; the first pool with neither
// gets the rest. Without resource_pools there is one pool, "default", with
// every slot. Per-pool scheduler blocks replace resource_manager.scheduler
// whole: they inherit nothing from it.
func (c *Config) Pools(total int) ([]Pool, error) {
	// Without a scheduler block: Determined's priority scheduler, no
	// preemption, best fit.
	base := Scheduler{Type: "priority", FittingPolicy: "best", DefaultPriority: c.DefaultPriority()}
	if c.ResourceManager.Scheduler != nil {
		base = c.ResourceManager.Scheduler.resolve(false, c.DefaultPriority())
	}
	if len(c.ResourcePools) == 0 {
		ids := make([]int, total)
		for i := range ids {
			ids[i] = i
		}
		return []Pool{{Name: "default", Scheduler: base, SlotIDs: ids}}, nil
	}
	taken := map[int]string{}
	pools := make([]Pool, len(c.ResourcePools))
	rest := -1
	for i, rp := range c.ResourcePools {
		p := Pool{Name: rp.PoolName, Description: rp.Description, Scheduler: base}
		if rp.Scheduler != nil {
			p.Scheduler = rp.Scheduler.resolve(true, c.DefaultPriority())
		}
		for _, id := range rp.SlotIDs {
			if id < 0 || id >= total {
				return nil, fmt.Errorf("resource_pools[%d].slot_ids: slot %d does not exist (this machine has %d)", i, id, total)
			}
			if other, ok := taken[id]; ok {
				return nil, fmt.Errorf("resource_pools[%d].slot_ids: slot %d is already in pool %q", i, id, other)
			}
			taken[id] = rp.PoolName
			p.SlotIDs = append(p.SlotIDs, id)
		}
		if len(rp.SlotIDs) == 0 && rp.Slots == 0 && rest < 0 {
			rest = i
		}
		pools[i] = p
	}
	next := 0
	for i, rp := range c.ResourcePools {
		for n := 0; n < rp.Slots; n++ {
			for next < total && taken[next] != "" {
				next++
			}
			if next >= total {
				return nil, fmt.Errorf("resource_pools[%d].slots: %d slots asked, but this machine has only %d in all", i, rp.Slots, total)
			}
			taken[next] = rp.PoolName
			pools[i].SlotIDs = append(pools[i].SlotIDs, next)
		}
	}
	if rest >= 0 {
		for id := 0; id < total; id++ {
			if taken[id] == "" {
				pools[rest].SlotIDs = append(pools[rest].SlotIDs, id)
			}
		}
	}
	for i := range pools {
		sort.Ints(pools[i].SlotIDs)
	}
	return pools, nil
}

// checkScheduler validates a scheduler block.
func checkScheduler(path string, s *Scheduler) Errors {
	if s == nil {
		return nil
	}
	var errs Errors
	switch s.Type {
	case "", "priority", "fair_share", "round_robin":
	default:
		errs = append(errs, FieldError{Path: path + ".type", Message: fmt.Sprintf("must be priority, fair_share or round_robin (got %q)", s.Type)})
	}
	switch s.FittingPolicy {
	case "", "best", "worst":
	default:
		errs = append(errs, FieldError{Path: path + ".fitting_policy", Message: fmt.Sprintf("must be best or worst (got %q)", s.FittingPolicy)})
	}
	if s.DefaultPriority < 0 || s.DefaultPriority > 99 {
		errs = append(errs, FieldError{Path: path + ".default_priority", Message: fmt.Sprintf("must be between 1 and 99 (got %d)", s.DefaultPriority)})
	}
	return errs
}

// PoolNames lists the configured pool names ("default" without any).
func (c *Config) PoolNames() []string {
	if len(c.ResourcePools) == 0 {
		return []string{"default"}
	}
	names := make([]string, len(c.ResourcePools))
	for i, p := range c.ResourcePools {
		names[i] = p.PoolName
	}
	return names
}

// ComputePool is where experiments and tasks with slots go by default: the
// configured default_compute_resource_pool, else the first pool.
func (c *Config) ComputePool() string {
	if c.ResourceManager.DefaultComputeResourcePool != "" {
		return c.ResourceManager.DefaultComputeResourcePool
	}
	return c.PoolNames()[0]
}

// AuxPool is where zero-slot tasks go by default: the configured
// default_aux_resource_pool, else the first pool.
func (c *Config) AuxPool() string {
	if c.ResourceManager.DefaultAuxResourcePool != "" {
		return c.ResourceManager.DefaultAuxResourcePool
	}
	return c.PoolNames()[0]
}
