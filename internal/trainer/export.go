package trainer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ExportLine is one line of Export: a Sample and whether it carries
// token ids (a scripted policy's samples have none: train on none of
// them).
type ExportLine struct {
	Sample
	Tokens bool `json:"tokens"`
}

// Export writes the samples of the batches saved in batchesDir, steps from
// from to to (to 0: the last saved), as JSONL to out, one Sample a line, in
// step order: the same samples the service returned, for offline SFT/RL.
// The file appears whole or not at all. It returns the samples and steps
// written.
func Export(batchesDir, out string, from, to int) (int, int, error) {
	steps, err := savedSteps(batchesDir)
	if err != nil {
		return 0, 0, err
	}
	if len(steps) == 0 {
		return 0, 0, fmt.Errorf("no batches saved in %s: run wildawm rl serve and let a trainer ask for steps first", batchesDir)
	}
	if from < 1 || (to != 0 && to < from) {
		return 0, 0, fmt.Errorf("--from %d --to %d: give 1 <= from <= to (to 0: the last step)", from, to)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return 0, 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".export-*.jsonl")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	enc := json.NewEncoder(w)
	n, ns := 0, 0
	for _, step := range steps {
		if step < from || (to != 0 && step > to) {
			continue
		}
		b, err := loadBatch(filepath.Join(batchesDir, batchID(step)+".json"))
		if err != nil {
			tmp.Close()
			return 0, 0, err
		}
		ns++
		for _, s := range b.Samples {
			if err := enc.Encode(ExportLine{Sample: s, Tokens: len(s.PromptTokenIDs)+len(s.ResponseTokenIDs) > 0}); err != nil {
				tmp.Close()
				return 0, 0, err
			}
			n++
		}
	}
	if ns == 0 {
		tmp.Close()
		return 0, 0, fmt.Errorf("no saved batch between steps %d and %d (saved: %d..%d)", from, to, steps[0], steps[len(steps)-1])
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return 0, 0, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return 0, 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, 0, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, 0, err
	}
	return n, ns, os.Rename(tmp.Name(), out)
}
