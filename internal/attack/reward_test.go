package attack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// rewardAttacks try to escape a reward by breaking what judges it: an
// answer or a final world the verifier cannot take. Each must be judged
// the agent's failure (V 0, a result), never a harness error, which the
// scorers would count as infrastructure and leave out.
func rewardAttacks(f *fixture) []attack {
	long := strings.Repeat("x", 200<<10)
	return []attack{
		{
			name: "a 200 KB final answer", category: "reward",
			action:  "verify W0 with a 200 KB answer through rollout.Env.Verify (over the 128 KiB an environment string may hold)",
			contain: "a result, not an error: V 0, every criterion failed, the cause (verify.MaxAnswerBytes) in fault",
			try: func(ctx context.Context, f *fixture) (string, error) {
				vr, err := f.p.Env.Verify(ctx, f.p.Task, f.p.VerifierDir, f.p.W0(), long)
				if err != nil {
					return "", fmt.Errorf("an error the scorers count as infrastructure: %w", err)
				}
				if vr.V != 0 || vr.Passed != 0 || !strings.Contains(vr.Fault, "MaxAnswerBytes") {
					return "", fmt.Errorf("V %d, %d/%d passed, fault %q", vr.V, vr.Passed, vr.Total, vr.Fault)
				}
				if !errors.Is(verify.CheckAnswer(long), world.ErrAgentFault) {
					return "", errors.New("the cause does not wrap world.ErrAgentFault")
				}
				return fmt.Sprintf("V 0, 0/%d criteria, fault %q", vr.Total, vr.Fault), nil
			},
		},
		{
			name: "a final answer with a NUL byte", category: "reward",
			action:  "verify W0 with the expected answer followed by a NUL byte (no environment variable can hold it)",
			contain: "a result, not an error: the scripts run (the answer in $VERIFY_ANSWER_FILE), V 0 on W0",
			try: func(ctx context.Context, f *fixture) (string, error) {
				vr, err := f.p.Env.Verify(ctx, f.p.Task, f.p.VerifierDir, f.p.W0(), f.p.Task.Answer+"\x00")
				if err != nil {
					return "", fmt.Errorf("an error the scorers count as infrastructure: %w", err)
				}
				if vr.V != 0 || vr.Fault != "" {
					return "", fmt.Errorf("V %d, fault %q", vr.V, vr.Fault)
				}
				return fmt.Sprintf("V 0, %d/%d criteria, %d script errors", vr.Passed, vr.Total, vr.ScriptErrors), nil
			},
		},
		sabotage("the verified files made mode 000", "chmod 000 the shortlist and the restock note", func(p string) error {
			if err := os.WriteFile(p, []byte("rank,sku\n1,X\n"), 0o644); err != nil {
				return err
			}
			return os.Chmod(p, 0)
		}),
		{
			name: "the solved deliverables made unreadable", category: "reward",
			action:  "solve the task (the reference completion), then chmod 000 the shortlist and the restock note, and chmod 0600 their directory in a second copy; verify each",
			contain: "V 0, the criteria that read them failed as the agent's doing (no error), although the verifier runs as root; the readable copy passes",
			try: func(ctx context.Context, f *fixture) (string, error) {
				var seen []string
				for _, c := range []struct {
					name string
					mode func(file, dir string) error
					v    int
				}{
					{"readable", func(string, string) error { return nil }, 1},
					{"mode 000", func(file, _ string) error { return os.Chmod(file, 0) }, 0},
					{"directory 0600", func(_, dir string) error { return os.Chmod(dir, 0o600) }, 0},
				} {
					vr, err := verifyEdited(ctx, f, f.solved, func(p string) error { return c.mode(p, filepath.Dir(p)) })
					if err != nil {
						return "", fmt.Errorf("%s: %w", c.name, err)
					}
					if vr.V != c.v {
						return "", fmt.Errorf("%s: V %d, want %d (%d/%d criteria)", c.name, vr.V, c.v, vr.Passed, vr.Total)
					}
					for _, cr := range vr.Criteria {
						if c.v == 0 && (cr.ID == "shortlist-header" || cr.ID == "restock-note") && (cr.Pass || cr.Error != "") {
							return "", fmt.Errorf("%s: criterion %s: pass %t, error %q: want failed as the agent's doing", c.name, cr.ID, cr.Pass, cr.Error)
						}
					}
					seen = append(seen, fmt.Sprintf("%s V %d", c.name, vr.V))
				}
				return strings.Join(seen, ", "), nil
			},
		},
		sabotage("the verified files replaced by directories", "a directory at the shortlist's and the restock note's paths", func(p string) error {
			return os.Mkdir(p, 0o755)
		}),
		sabotage("the verified files filled with garbage", "the shortlist and the restock note as 64 KiB of binary garbage", func(p string) error {
			b := make([]byte, 64<<10)
			for i := range b {
				b[i] = byte(i*7919 + i>>3)
			}
			return os.WriteFile(p, b, 0o644)
		}),
		sabotage("the verified files as links out of home", "the shortlist and the restock note as symlinks to /etc/shadow and ../../../manifest.json", func(p string) error {
			target := "/etc/shadow"
			if strings.HasSuffix(p, ".md") {
				target = "../../../manifest.json"
			}
			return os.Symlink(target, p)
		}),
	}
}

// sabotage is an attack on a final world: W0 with the files the case
// study's csv, file and script criteria read broken by breakFile, verified
// with the task's verifier and scripts in the sandbox as an unprivileged
// uid. It must be a result with V 0 and those criteria failed, never a
// harness error.
func sabotage(name, action string, breakFile func(path string) error) attack {
	return attack{
		name: name, category: "reward", action: action + "; verify the world (verify.Verify, scripts in the sandbox)",
		contain: "a result, not an error: V 0, the shortlist and restock criteria failed",
		try: func(ctx context.Context, f *fixture) (string, error) {
			vr, err := verifyEdited(ctx, f, f.lower, func(p string) error {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				os.Remove(p)
				return breakFile(p)
			})
			if err != nil {
				return "", err
			}
			var failed []string
			for _, c := range vr.Criteria {
				if !c.Pass {
					failed = append(failed, c.ID)
				}
			}
			for _, id := range []string{"shortlist-header", "shortlist-script", "restock-note"} {
				if !strings.Contains(" "+strings.Join(failed, " ")+" ", " "+id+" ") {
					return "", fmt.Errorf("criterion %s passed on a broken file (failed: %v)", id, failed)
				}
			}
			if vr.V != 0 {
				return "", fmt.Errorf("V %d", vr.V)
			}
			return fmt.Sprintf("V 0, failed %v, %d script errors", failed, vr.ScriptErrors), nil
		},
	}
}

// verifyEdited verifies a copy of the world at base (W0 or the solved
// world) whose shortlist and restock note edit changed, with the task's
// verifier and its scripts in the sandbox as an unprivileged uid. An error
// is the harness's, which the scorers would count as infrastructure.
func verifyEdited(ctx context.Context, f *fixture, base string, edit func(path string) error) (*verify.Result, error) {
	dir, err := os.MkdirTemp(f.runDir, "reward-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	final := filepath.Join(dir, "final")
	if err := state.Copy(ctx, base, final); err != nil {
		return nil, err
	}
	for _, rel := range []string{synth.PathShortlist, synth.PathRestock} {
		if err := edit(filepath.Join(final, world.HomeDir, filepath.FromSlash(rel))); err != nil {
			return nil, err
		}
	}
	vdir := filepath.Join(dir, "verifier")
	if err := verify.CopyDir(ctx, f.p.VerifierDir, vdir); err != nil {
		return nil, err
	}
	vr, err := verify.Verify(ctx, f.p.Task, verify.Input{Initial: f.lower, Final: final, Answer: f.p.Task.Answer, VerifierDir: vdir,
		Runner: rollout.SandboxRunner{UID: 299990}, Scratch: dir})
	if err != nil {
		return nil, fmt.Errorf("an error the scorers count as infrastructure: %w", err)
	}
	return vr, nil
}
