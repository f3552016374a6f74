package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"testing"
)

// TestBackend runs the suite every Backend implementation must pass. newBackend
// returns an empty backend.
func TestBackend(t *testing.T, newBackend func(t *testing.T) Backend) {
	ctx := t.Context()
	t.Run("SaveLoad", func(t *testing.T) {
		b := newBackend(t)
		data := []byte("hello, store")
		for _, ft := range fileTypes {
			if err := b.Save(ctx, ft, "a1", data); err != nil {
				t.Fatalf("Save(%s): %v", ft, err)
			}
			got, err := b.Load(ctx, ft, "a1", 0, -1)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Load(%s, whole) = %q, %v; want %q", ft, got, err, data)
			}
			got, err = b.Load(ctx, ft, "a1", 7, 5)
			if err != nil || string(got) != "store" {
				t.Fatalf("Load(%s, 7, 5) = %q, %v; want \"store\"", ft, got, err)
			}
			got, err = b.Load(ctx, ft, "a1", 12, 0)
			if err != nil || len(got) != 0 {
				t.Fatalf("Load(%s, 12, 0) = %q, %v; want empty", ft, got, err)
			}
		}
		data[0] = 'X' // the backend must have copied
		got, _ := b.Load(ctx, PackFile, "a1", 0, 1)
		if string(got) != "h" {
			t.Errorf("Load after caller mutated its buffer = %q, want \"h\"", got)
		}
	})
	t.Run("Overwrite", func(t *testing.T) {
		b := newBackend(t)
		for _, s := range []string{"one", "two"} {
			if err := b.Save(ctx, IndexFile, "x", []byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.Load(ctx, IndexFile, "x", 0, -1)
		if err != nil || string(got) != "two" {
			t.Fatalf("Load = %q, %v; want \"two\"", got, err)
		}
	})
	t.Run("ShortRead", func(t *testing.T) {
		b := newBackend(t)
		if err := b.Save(ctx, PackFile, "p", []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Load(ctx, PackFile, "p", 8, 5); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Load past end: err = %v, want io.ErrUnexpectedEOF", err)
		}
		if _, err := b.Load(ctx, PackFile, "p", 20, 1); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Load beyond end: err = %v, want io.ErrUnexpectedEOF", err)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		b := newBackend(t)
		if _, err := b.Load(ctx, SnapshotFile, "nope", 0, -1); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load missing: err = %v, want fs.ErrNotExist", err)
		}
		if err := b.Remove(ctx, SnapshotFile, "nope"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Remove missing: err = %v, want fs.ErrNotExist", err)
		}
	})
	t.Run("ListRemove", func(t *testing.T) {
		b := newBackend(t)
		for _, n := range []string{"c", "a", "b"} {
			if err := b.Save(ctx, SnapshotFile, n, []byte(n+n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Save(ctx, PackFile, "z", []byte("z")); err != nil {
			t.Fatal(err)
		}
		got, err := b.List(ctx, SnapshotFile)
		want := []File{{"a", 2}, {"b", 2}, {"c", 2}}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("List = %v, %v; want %v", got, err, want)
		}
		if err := b.Remove(ctx, SnapshotFile, "b"); err != nil {
			t.Fatal(err)
		}
		got, _ = b.List(ctx, SnapshotFile)
		if want := []File{{"a", 2}, {"c", 2}}; !slices.Equal(got, want) {
			t.Fatalf("List after Remove = %v, want %v", got, want)
		}
	})
	t.Run("BadNames", func(t *testing.T) {
		b := newBackend(t)
		for _, n := range []string{"", ".", "..", "a/b", `a\b`} {
			if err := b.Save(ctx, PackFile, n, nil); err == nil {
				t.Errorf("Save(%q) succeeded, want error", n)
			}
		}
		if err := b.Save(ctx, FileType("etc"), "x", nil); err == nil {
			t.Errorf("Save with unknown type succeeded, want error")
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		b := newBackend(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := b.Save(cctx, PackFile, "p", []byte("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("Save with cancelled ctx: err = %v, want context.Canceled", err)
		}
	})
}
