package cli

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/messages"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestMain lets the test binary act as the wildawm command for
// subprocess tests (the stdio MCP server).
func TestMain(m *testing.M) {
	if os.Getenv("WILDAWM_CLI_MAIN") == "1" {
		// As cmd/wildawm's main: an interrupt ends the command's context.
		ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		if err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestMCPServeStdio(t *testing.T) {
	dir := state.MakeTestWorld(t, t.TempDir(), state.TestWorld{})
	messages.MakeTestDB(t, world.DBPath(dir, "messages"))
	before, err := state.Hash(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "mcp", "serve", "--world", dir, "--service", "messages", "--self", messages.TestSelf)
	cmd.Env = append(os.Environ(), "WILDAWM_CLI_MAIN=1")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) < 4 {
		t.Fatalf("tools/list over stdio: %v %v", err, tools)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_threads", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_threads over stdio: %v %+v", err, res)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_thread", Arguments: map[string]any{"thread": "no-such-thread"}})
	if err != nil || !res.IsError {
		t.Fatalf("a bad call over stdio is a tool error: %v %+v", err, res)
	}
	cs.Close()
	if after, _ := state.Hash(context.Background(), dir); after != before {
		t.Error("read-only calls and a rejected call changed the world")
	}
	// The harness's pipe is read through dbtool.StdioTransport (stdin made
	// pollable), which answers a broken line with a parse error and goes
	// on; the SDK's transport, its fallback, would end the session.
	raw := exec.Command(os.Args[0], "mcp", "serve", "--world", dir, "--service", "messages", "--self", messages.TestSelf)
	raw.Env = append(os.Environ(), "WILDAWM_CLI_MAIN=1")
	in, err := raw.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := raw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	for _, c := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, `"id":1,"result":{`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"broken`, `"id":null,"error":{"code":-32700`},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"result":{}}`},
	} {
		if _, err := io.WriteString(in, c.send+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, c.want) {
			t.Fatalf("sent %s: got %q (%v), want %s", c.send, line, err, c.want)
		}
	}
	in.Close()
	if err := raw.Wait(); err != nil {
		t.Errorf("mcp serve after its stdin closed: %v", err)
	}

	// Node harnesses hand their servers socket pairs: a socket stdin is
	// read through dbtool.StdioTransport too (a broken line gets a parse
	// error, the session goes on).
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	sock := exec.Command(os.Args[0], "mcp", "serve", "--world", dir, "--service", "messages", "--self", messages.TestSelf)
	sock.Env = append(os.Environ(), "WILDAWM_CLI_MAIN=1")
	sock.Stdin = theirs
	sout, err := sock.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	sr := bufio.NewReader(sout)
	for _, c := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, `"id":1,"result":{`},
		{`{"broken`, `"id":null,"error":{"code":-32700`},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"result":{}}`},
	} {
		if _, err := io.WriteString(ours, c.send+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := sr.ReadString('\n')
		if err != nil || !strings.Contains(line, c.want) {
			sock.Process.Kill()
			t.Fatalf("over a socket, sent %s: got %q (%v), want %s", c.send, line, err, c.want)
		}
	}
	ours.Close()
	if err := sock.Wait(); err != nil {
		t.Errorf("mcp serve after its socket closed: %v", err)
	}

	// A harness that writes its requests and closes the pipe before the
	// server reads (echo ... | wildawm mcp serve) gets every answer.
	piped := exec.Command(os.Args[0], "mcp", "serve", "--world", dir, "--service", "messages", "--self", messages.TestSelf)
	piped.Env = append(os.Environ(), "WILDAWM_CLI_MAIN=1")
	piped.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_threads","arguments":{"limit":1}}}
`)
	outb, err := piped.Output()
	if err != nil {
		t.Fatalf("mcp serve with a closed stdin: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(string(outb)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text"`) {
		t.Errorf("mcp serve with a closed stdin answered:\n%s", outb)
	}

	// Over streamable HTTP: the first line of the output is the endpoint.
	// An unspecified host (":0") is printed as 127.0.0.1, which the DNS
	// rebinding protection accepts.
	hs := exec.Command(os.Args[0], "mcp", "serve", "--world", dir, "--service", "messages", "--self", messages.TestSelf, "--http", ":0")
	hs.Env = append(os.Environ(), "WILDAWM_CLI_MAIN=1")
	hout, err := hs.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := hs.Start(); err != nil {
		t.Fatal(err)
	}
	url, err := bufio.NewReader(hout).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp\n") {
		hs.Process.Kill()
		t.Fatalf("mcp serve --http printed %q (%v), want its URL", url, err)
	}
	hcs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: strings.TrimSpace(url)}, nil)
	if err != nil {
		hs.Process.Kill()
		t.Fatal(err)
	}
	if res, err := hcs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_threads", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Errorf("list_threads over HTTP: %v %+v", err, res)
	}
	// An interrupt ends the server promptly although the client still
	// holds its session (and its event stream) open.
	hs.Process.Signal(os.Interrupt)
	waited := make(chan error, 1)
	go func() { waited <- hs.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("mcp serve --http after an interrupt: %v", err)
		}
	case <-time.After(3 * time.Second):
		hs.Process.Kill()
		t.Error("mcp serve --http took more than 3 s to end after an interrupt, with a client connected")
	}
	hcs.Close()
	if after, _ := state.Hash(context.Background(), dir); after != before {
		t.Error("read-only calls over HTTP changed the world")
	}

	if _, _, err := run(t, filepath.Join(t.TempDir(), "s"), "mcp", "serve", "--world", dir, "--service", "nope"); err == nil || !strings.Contains(err.Error(), "known: messages") {
		t.Errorf("unknown service: %v", err)
	}
}
