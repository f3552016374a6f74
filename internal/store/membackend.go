package store

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"
)

// MemBackend is an in-memory Backend, for tests and tools.
type MemBackend struct {
	mu    sync.Mutex
	files map[FileType]map[string][]byte
}

// NewMemBackend returns an empty MemBackend.
func NewMemBackend() *MemBackend {
	return &MemBackend{files: make(map[FileType]map[string][]byte)}
}

func (m *MemBackend) Save(ctx context.Context, t FileType, name string, data []byte) error {
	if err := checkName(t, name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files[t] == nil {
		m.files[t] = make(map[string][]byte)
	}
	m.files[t][name] = bytes.Clone(data)
	return nil
}

func (m *MemBackend) Load(ctx context.Context, t FileType, name string, offset, length int64) ([]byte, error) {
	if err := checkName(t, name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.files[t][name]
	if !ok {
		return nil, fmt.Errorf("load %s/%s: %w", t, name, fs.ErrNotExist)
	}
	if offset < 0 {
		return nil, fmt.Errorf("load %s/%s: negative offset %d", t, name, offset)
	}
	if length < 0 {
		length = max(int64(len(data))-offset, 0)
	}
	if offset+length > int64(len(data)) {
		return nil, fmt.Errorf("load %s/%s: %d bytes at offset %d of %d: %w", t, name, length, offset, len(data), io.ErrUnexpectedEOF)
	}
	return bytes.Clone(data[offset : offset+length]), nil
}

func (m *MemBackend) List(ctx context.Context, t FileType) ([]File, error) {
	if err := checkName(t, "x"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	files := make([]File, 0, len(m.files[t]))
	for name, data := range m.files[t] {
		files = append(files, File{Name: name, Size: int64(len(data))})
	}
	slices.SortFunc(files, func(a, b File) int { return cmp.Compare(a.Name, b.Name) })
	return files, nil
}

func (m *MemBackend) Remove(ctx context.Context, t FileType, name string) error {
	if err := checkName(t, name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[t][name]; !ok {
		return fmt.Errorf("remove %s/%s: %w", t, name, fs.ErrNotExist)
	}
	delete(m.files[t], name)
	return nil
}
