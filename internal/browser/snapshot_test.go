package browser_test

import (
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/browser"
)

var update = flag.Bool("update", false, "rewrite testdata/snapshot.txt")

// snapshotServer serves testdata/snapshot.html at /page and a second page.
func snapshotServer(t *testing.T) *httptest.Server {
	t.Helper()
	page, err := os.ReadFile("testdata/snapshot.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/page":
			w.Write(page)
		case "/do":
			r.ParseForm()
			w.Write([]byte(`<title>done</title><p id="got">` + r.Form.Encode() + `</p>`))
		default:
			w.Write([]byte(`<title>other</title><p id="where">` + r.URL.Path + `</p>`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSnapshot: the snapshot of testdata/snapshot.html, with the server's
// address written as ORIGIN, is testdata/snapshot.txt (-update rewrites
// it); a second snapshot is the same; refs select the numbered elements.
func TestSnapshot(t *testing.T) {
	b := newBrowser(t)
	ctx := t.Context()
	srv := snapshotServer(t)
	if err := b.Navigate(ctx, srv.URL+"/page"); err != nil {
		t.Fatal(err)
	}
	snap, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(snap, srv.URL, "ORIGIN")
	if *update {
		if err := os.WriteFile("testdata/snapshot.txt", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/snapshot.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("snapshot:\n%s\nwant:\n%s", got, want)
	}
	again, err := b.Snapshot(ctx)
	if err != nil || again != snap {
		t.Errorf("a second snapshot differs: %v\n%s", err, again)
	}
	html, err := b.HTML(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(html, browser.RefAttr+"="); n != strings.Count(snap, "\n[") {
		t.Errorf("%d marked elements, %d numbered lines", n, strings.Count(snap, "\n["))
	}
	// [1] is the home link.
	if txt, err := b.Text(ctx, browser.Ref(1)); err != nil || txt != "Home page" {
		t.Errorf("Text(Ref(1)) = %q, %v", txt, err)
	}
	if err := b.Click(ctx, browser.Ref(1)); err != nil {
		t.Fatal(err)
	}
	if txt, err := b.Text(ctx, "#where"); err != nil || txt != "/" {
		t.Errorf("after clicking Ref(1): %q, %v", txt, err)
	}
}

// TestActions: Select, Scroll, Back and Submit.
func TestActions(t *testing.T) {
	b := newBrowser(t)
	ctx := t.Context()
	srv := snapshotServer(t)
	if err := b.Back(ctx); err == nil || !strings.Contains(err.Error(), "no previous page") {
		t.Errorf("Back on a fresh tab: %v", err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.Navigate(ctx, srv.URL+"/page"))
	must(b.Select(ctx, "#s", "new"))
	must(b.Select(ctx, "#s", "By price"))
	err := b.Select(ctx, "#s", "cheapest")
	if err == nil || !strings.Contains(err.Error(), `"Newest" (value "new")`) || !strings.Contains(err.Error(), "#s") {
		t.Errorf("Select of a missing option: %v", err)
	}
	if err := b.Select(ctx, "#name", "x"); err == nil || !strings.Contains(err.Error(), "not a <select>") {
		t.Errorf("Select on an input: %v", err)
	}
	must(b.Scroll(ctx, 400))
	must(b.Scroll(ctx, -100))
	must(b.SetValue(ctx, "#name", "Grace"))
	must(b.Submit(ctx, "#name"))
	got, err := b.Text(ctx, "#got")
	must(err)
	for _, want := range []string{"csrf_token=t0k", "name=Grace", "sort=price", "agree=on"} {
		if !strings.Contains(got, want) {
			t.Errorf("the form sent %q, lacking %q", got, want)
		}
	}
	must(b.Back(ctx))
	if u, err := b.URL(ctx); err != nil || u != srv.URL+"/page" {
		t.Errorf("after Back: %q, %v", u, err)
	}
	must(b.Navigate(ctx, srv.URL+"/elsewhere"))
	must(b.Back(ctx))
	if _, err := b.Text(ctx, "#name"); err != nil {
		u, _ := b.URL(ctx)
		h, _ := b.HTML(ctx)
		t.Errorf("after Back to the form: %v (%s) %.300s", err, u, h)
	}
	must(b.Close(ctx))
	if err := b.Back(ctx); !errors.Is(err, browser.ErrGone) {
		t.Errorf("Back after Close: %v, want ErrGone", err)
	}
	if err := b.Select(ctx, "#s", "new"); !errors.Is(err, browser.ErrGone) {
		t.Errorf("Select after Close: %v, want ErrGone", err)
	}
}
