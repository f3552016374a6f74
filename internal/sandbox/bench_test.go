package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkEcho compares `echo hi` in the sandbox with a plain
// exec.Command("/bin/sh", "-c", "echo hi"); each reports its p50.
func BenchmarkEcho(b *testing.B) {
	b.Run("sandbox", func(b *testing.B) {
		requireSandbox(b)
		opts := Options{Home: newHome(b, 0, 0)}
		bench(b, func() error {
			res, err := Run(context.Background(), opts, "echo hi")
			if err == nil && string(res.Stdout) != "hi\n" {
				b.Fatalf("stdout %q", res.Stdout)
			}
			return err
		})
	})
	b.Run("exec", func(b *testing.B) {
		bench(b, func() error {
			out, err := exec.Command("/bin/sh", "-c", "echo hi").Output()
			if err == nil && string(out) != "hi\n" {
				b.Fatalf("stdout %q", out)
			}
			return err
		})
	})
}

// bench times each call of f and reports the median as p50-ms.
func bench(b *testing.B, f func() error) {
	var ds []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), "p50-ms")
}

// BenchmarkEchoInstances is `echo hi` with the mounts of N live instances
// (two tmpfs each, as the overlay strategy mounts) in the caller's
// namespace, cloned from it (plain) and from a Host made before them, side
// by side: go test -run '^$' -bench EchoInstances -benchtime 100x ./internal/sandbox/
func BenchmarkEchoInstances(b *testing.B) {
	requireSandbox(b)
	h := newHost(b)
	mounted := 0
	for _, n := range []int{1, 64, 256} {
		mountMany(b, 2*(n-mounted))
		mounted = n
		home := newHome(b, 0, 0)
		for _, mode := range []struct {
			name string
			host *Host
		}{{"plain", nil}, {"host", h}} {
			b.Run(fmt.Sprintf("instances=%d/%s", n, mode.name), func(b *testing.B) {
				opts := Options{Home: home, Host: mode.host}
				bench(b, func() error {
					res, err := Run(context.Background(), opts, "echo hi")
					if err == nil && string(res.Stdout) != "hi\n" {
						b.Fatalf("stdout %q", res.Stdout)
					}
					return err
				})
			})
		}
	}
}

// BenchmarkEchoSeccomp is `echo hi` in the sandbox with the seccomp filter
// and without it, interleaved (the order alternating) so that both see the
// same load; it reports each p50 and their ratio:
// go test -run '^$' -bench EchoSeccomp -benchtime 200x ./internal/sandbox/
func BenchmarkEchoSeccomp(b *testing.B) {
	requireSandbox(b)
	home := newHome(b, 0, 0)
	var on, off []time.Duration
	once := func(noSeccomp bool) time.Duration {
		start := time.Now()
		res, err := Run(context.Background(), Options{Home: home, noSeccomp: noSeccomp}, "echo hi")
		if err != nil {
			b.Fatal(err)
		}
		if string(res.Stdout) != "hi\n" {
			b.Fatalf("stdout %q", res.Stdout)
		}
		return time.Since(start)
	}
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			on = append(on, once(false))
			off = append(off, once(true))
		} else {
			off = append(off, once(true))
			on = append(on, once(false))
		}
		i++
	}
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	a, c := p50(on), p50(off)
	b.ReportMetric(a, "p50-ms-seccomp")
	b.ReportMetric(c, "p50-ms-without")
	b.ReportMetric(a/c, "ratio")
}
