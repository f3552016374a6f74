package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/wildawm/wildawm/internal/world"
)

// TrajectoryVersion is the version of the trajectory format.
const TrajectoryVersion = 1

// Interfaces.
const (
	GUI = "gui"
	MCP = "mcp"
	CLI = "cli"
)

// Step is one tool call.
type Step struct {
	Index       int            `json:"index"`
	Interface   string         `json:"interface"`
	Tool        string         `json:"tool"`
	Args        map[string]any `json:"args,omitempty"`
	Observation string         `json:"observation"`
	Error       string         `json:"error,omitempty"`
	DurationMS  float64        `json:"duration_ms"`
}

// Trajectory is the record of one rollout.
type Trajectory struct {
	Version int    `json:"version"`
	TaskID  string `json:"task_id"`
	Rollout string `json:"rollout"`
	Policy  string `json:"policy"`
	Hint    bool   `json:"hint"`
	Steps   []Step `json:"steps"`
	Answer  string `json:"answer"`
	// Outcome is how the policy ended: "done", "stopped" (gave up early),
	// "gave_up" (stopped on an error it could not get past; Error says
	// which) or "infra_error" (the harness failed: not the agent's doing).
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Attempts is how many fresh instances the rollout took (more than 1
	// after an infrastructure failure); InfraErrors says what failed in
	// each attempt that did not count.
	Attempts    int      `json:"attempts,omitempty"`
	InfraErrors []string `json:"infra_errors,omitempty"`
	WallMS      float64  `json:"wall_ms"`
	Start       world.ID `json:"start_snapshot"`
}

// InterfacesUsed lists the interfaces of the steps that succeeded, sorted.
func (t *Trajectory) InterfacesUsed() []string {
	var out []string
	for _, s := range t.Steps {
		if s.Error == "" && s.Interface != "" && !slices.Contains(out, s.Interface) {
			out = append(out, s.Interface)
		}
	}
	slices.Sort(out)
	return out
}

// Switches counts interface switches between consecutive steps.
func (t *Trajectory) Switches() int {
	n := 0
	for i := 1; i < len(t.Steps); i++ {
		if t.Steps[i].Interface != t.Steps[i-1].Interface {
			n++
		}
	}
	return n
}

// Save writes the trajectory as indented JSON, atomically.
func (t *Trajectory) Save(path string) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("encode trajectory: %w", err)
	}
	return world.WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// LoadTrajectory reads a trajectory, checking its version.
func LoadTrajectory(path string) (*Trajectory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Trajectory
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("trajectory %s: %w", path, err)
	}
	if t.Version != TrajectoryVersion {
		return nil, fmt.Errorf("trajectory %s: field version: got %d, this build reads %d", path, t.Version, TrajectoryVersion)
	}
	return &t, nil
}
