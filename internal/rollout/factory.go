package rollout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/vision"
	"github.com/wildawm/wildawm/internal/world"
)

// Factory makes the rollout environments of one command: every Env it
// makes shares its store, materialiser, browser, shells and uid allocator,
// and has a work directory of its own, WorkDir/KEY. A command that runs
// rollouts makes one Factory, so no two of its sandboxes share a uid.
// Safe for concurrent use.
type Factory struct {
	Store        *store.Store
	Materializer *reset.Materializer
	CatalogDir   string
	Services     *service.Library
	// WorkDir holds one directory per Env.
	WorkDir    string
	NewBrowser func(ctx context.Context, origins []string) (Browser, error)
	// UIDs is the process's uid allocator; nil is one of the Factory's
	// own, shared by its Envs.
	UIDs        *sandbox.UIDs
	SandboxHost *sandbox.Host
	ShellSetups *semaphore.Weighted
	ShellNice   int
	Timeout     time.Duration
	Vision      func(ctx context.Context, img []byte) (*vision.Description, error)

	mu   sync.Mutex
	envs map[string]*Env
}

// Env returns the environment named key (a persona's ID: its sessions
// send messages as self), made on its first use: the same *Env for the
// same key.
func (f *Factory) Env(key, self string) (*Env, error) {
	if err := world.CheckName("", "environment key", key); err != nil {
		return nil, fmt.Errorf("rollout: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if env := f.envs[key]; env != nil {
		return env, nil
	}
	if f.UIDs == nil {
		f.UIDs = &sandbox.UIDs{}
	}
	env := &Env{Store: f.Store, Materializer: f.Materializer, CatalogDir: f.CatalogDir, WorkDir: filepath.Join(f.WorkDir, key), Self: self,
		Services: f.Services, NewBrowser: f.NewBrowser, UIDs: f.UIDs, SandboxHost: f.SandboxHost, ShellSetups: f.ShellSetups, ShellNice: f.ShellNice,
		Timeout: f.Timeout, Vision: f.Vision}
	// The sandbox uids read the instances there.
	if err := os.MkdirAll(env.WorkDir, 0o755); err != nil {
		return nil, err
	}
	if f.envs == nil {
		f.envs = map[string]*Env{}
	}
	f.envs[key] = env
	return env, nil
}
