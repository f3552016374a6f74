package verify

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// SDKPy is the content of verifier/scripts/_verify_sdk.py.
//
//go:embed _verify_sdk.py
var SDKPy string

// WriteSDK writes SDKPy to verifierDir/scripts/_verify_sdk.py (creating the
// directories), replacing any older copy.
func WriteSDK(verifierDir string) error {
	p := filepath.Join(verifierDir, filepath.FromSlash(task.SDKScript))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write SDK: %w", err)
	}
	if err := world.WriteFileAtomic(p, []byte(SDKPy), 0o644); err != nil {
		return fmt.Errorf("write SDK: %w", err)
	}
	return nil
}
