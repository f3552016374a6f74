package attack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/world"
)

// fileDir is the directory of A's home the file attacks work in.
const fileDir = "fa"

// callWait bounds one tool call of a file attack: the tools answer a
// refusal in milliseconds, a call blocked in open never.
const callWait = 10 * time.Second

// bombPy writes a 600-byte PNG declaring 100000x100000 pixels of 16-bit
// RGBA (80 GB decoded) with Python's standard library, as an agent would.
const bombPy = `python3 - <<'EOF'
import struct, zlib
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 100000, 100000, 16, 6, 0, 0, 0))
png += chunk(b'IDAT', zlib.compress(b'\0' * (1 + 65536 * 8), 9)) + chunk(b'IEND', b'')
open('fa/bomb.png', 'wb').write(png)
print(len(png))
EOF`

// fileCall is one tool call an attack makes, and what its answer must say.
type fileCall struct {
	tool, args string
	// refused is a substring of the tool error the call must end in; ""
	// means the call must succeed.
	refused string
}

// filesAttack prepares A's home with setup (a shell command run in A, in
// fileDir), then makes the calls through a rollout session on A (the
// tools rl serve, eval, rollout and openenv give an agent) or, with
// gateway, through the MCP gateway external harnesses use. Every call must
// answer within callWait with a tool error the agent sees (never
// agent.ErrInfra), and check must hold after.
func filesAttack(setup string, gateway bool, calls []fileCall, check func(ctx context.Context, f *fixture) error) func(context.Context, *fixture) (string, error) {
	return func(ctx context.Context, f *fixture) (string, error) {
		home := filepath.Join(f.a.Dir(), world.HomeDir)
		defer func() {
			releaseFifos(filepath.Join(home, fileDir))
			run(context.WithoutCancel(ctx), f.a, "rm -rf "+fileDir)
		}()
		res, err := run(ctx, f.a, "rm -rf "+fileDir+" && mkdir "+fileDir+" && "+setup)
		if err != nil {
			return "", err
		}
		if res.ExitCode != 0 {
			return "", fmt.Errorf("setup exit %d: %s", res.ExitCode, res.Stderr)
		}
		sess, err := f.p.Env.Open(ctx, f.a, &agent.Trajectory{Version: agent.TrajectoryVersion})
		if err != nil {
			return "", err
		}
		defer sess.Close(ctx)
		call := sess.Env.Call
		var g *agent.Gateway
		if gateway {
			if g, err = agent.NewGateway(ctx, sess.Env, false); err != nil {
				return "", err
			}
			cs, err := connectGateway(ctx, g)
			if err != nil {
				return "", err
			}
			defer cs.Close()
			call = func(ctx context.Context, tool, args string) (string, error) { return gatewayCall(ctx, cs, tool, args) }
		}
		var obs []string
		for _, c := range calls {
			type answer struct {
				obs string
				err error
			}
			done := make(chan answer, 1)
			start := time.Now()
			go func() {
				o, err := call(ctx, c.tool, c.args)
				done <- answer{o, err}
			}()
			var a answer
			select {
			case a = <-done:
			case <-time.After(callWait):
				// Free the call before the next attack.
				releaseFifos(filepath.Join(home, fileDir))
				return strings.Join(obs, "; "), fmt.Errorf("%s %s: still blocked after %s", c.tool, c.args, callWait)
			}
			took := time.Since(start).Round(time.Millisecond)
			switch {
			case errors.Is(a.err, agent.ErrInfra):
				return "", fmt.Errorf("%s %s: an infrastructure failure: %v", c.tool, c.args, a.err)
			case c.refused == "" && a.err != nil:
				return "", fmt.Errorf("%s %s: %v", c.tool, c.args, a.err)
			case c.refused != "" && (a.err == nil || !strings.Contains(a.err.Error(), c.refused)):
				return "", fmt.Errorf("%s %s: got %q, %v; want a tool error saying %q", c.tool, c.args, a.obs, a.err, c.refused)
			case c.refused != "":
				obs = append(obs, fmt.Sprintf("%s refused in %s: %v", c.tool, took, a.err))
			default:
				obs = append(obs, fmt.Sprintf("%s done in %s", c.tool, took))
			}
		}
		if g != nil {
			if err := g.Err(); err != nil {
				return "", fmt.Errorf("the gateway recorded an infrastructure failure: %v", err)
			}
		}
		if check != nil {
			if err := check(ctx, f); err != nil {
				return strings.Join(obs, "; "), err
			}
		}
		return strings.Join(obs, "; "), nil
	}
}

// releaseFifos opens every fifo below dir read-write without blocking, so
// that a tool blocked opening one (before the fix) returns.
func releaseFifos(dir string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type()&os.ModeNamedPipe != 0 {
			if fd, err := unix.Open(p, unix.O_RDWR|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0); err == nil {
				unix.Close(fd)
			}
		}
		return nil
	})
}

// connectGateway connects an MCP client to g in memory.
func connectGateway(ctx context.Context, g *agent.Gateway) (*mcp.ClientSession, error) {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return mcp.NewClient(&mcp.Implementation{Name: "attacker", Version: "1"}, nil).Connect(ctx, ct, nil)
}

// gatewayCall calls a tool of the gateway: a tool error comes back as an
// error with its text; a protocol error (what the gateway answers for
// ErrInfra) wraps agent.ErrInfra.
func gatewayCall(ctx context.Context, cs *mcp.ClientSession, tool, args string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		return "", err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: m})
	if err != nil {
		return "", fmt.Errorf("%w: a protocol error from the gateway: %v", agent.ErrInfra, err)
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	if res.IsError {
		return "", errors.New(strings.Join(text, "\n"))
	}
	return strings.Join(text, "\n"), nil
}

// homeFile checks a file of A's home on the host: a regular file holding
// want.
func homeFile(rel, want string) func(context.Context, *fixture) error {
	return func(ctx context.Context, f *fixture) error {
		p := filepath.Join(f.a.Dir(), world.HomeDir, rel)
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("%s after the write: %v %v", rel, st, err)
		}
		if b, _ := os.ReadFile(p); string(b) != want {
			return fmt.Errorf("%s holds %q, want %q", rel, b, want)
		}
		return nil
	}
}

func filesAttacks(f *fixture) []attack {
	_ = f
	path := func(rel string) string { return fmt.Sprintf(`{"path":%q}`, fileDir+"/"+rel) }
	bombCalls := []fileCall{{"describe_image", path("bomb.png"), "100000x100000"}}
	fifoCalls := []fileCall{
		{"read_file", path("pipe"), "is a fifo, not a regular file"},
		{"describe_image", path("photo.png"), "is a fifo, not a regular file"},
	}
	const fifos = "mkfifo fa/pipe fa/photo.png"
	return []attack{
		{
			name: "describe a PNG bomb", category: "files",
			action:  "in A's shell, write a 600-byte PNG declaring 100000x100000 16-bit RGBA pixels (80 GB decoded); describe_image it from a rollout session",
			contain: "a tool error from the header (the pixel bound) before any pixel buffer exists; the host process lives",
			needs:   "chromium",
			try:     filesAttack(bombPy, false, bombCalls, nil),
		},
		{
			name: "describe a PNG bomb through the MCP gateway", category: "files",
			action:  "the same bomb, describe_image called by an MCP client of the gateway an external harness uses",
			contain: "an isError tool result, no protocol error, no infrastructure failure; the host process lives",
			needs:   "chromium",
			try:     filesAttack(bombPy, true, bombCalls, nil),
		},
		{
			name: "read and describe a fifo", category: "files",
			action:  "mkfifo in A's home, then read_file and describe_image it from a rollout session",
			contain: "each a prompt tool error naming the fifo (opened O_NONBLOCK, fstat'ed); no host thread blocks in open",
			needs:   "chromium",
			try:     filesAttack(fifos, false, fifoCalls, nil),
		},
		{
			name: "read and describe a fifo through the MCP gateway", category: "files",
			action:  "the same fifos, read_file and describe_image called through the gateway",
			contain: "prompt isError tool results; the gateway records no infrastructure failure",
			needs:   "chromium",
			try:     filesAttack(fifos, true, fifoCalls, nil),
		},
		{
			name: "write_file over a fifo and its temporary names", category: "files",
			action:  "mkfifo the target and the temporary name write_file used (.NAME.wildawm-tmp), a symlink to /etc/passwd at a likely new one, then write_file the target",
			contain: "the write succeeds at once: the temporary file is created O_EXCL|O_NOFOLLOW under a random name, the fifo replaced by the file, never opened",
			needs:   "chromium",
			try: filesAttack("mkfifo fa/out.md fa/.out.md.wildawm-tmp && ln -s /etc/passwd fa/.out.md.wildawm-AAAAAAAAAAAAAAAA", false,
				[]fileCall{{"write_file", `{"path":"fa/out.md","content":"written"}`, ""}}, homeFile("fa/out.md", "written")),
		},
		{
			name: "read the host through symlinks", category: "files",
			action:  "ln -s /etc/shadow and ln -s / in A's home; read_file and describe_image the links and a path through the directory link",
			contain: "each refused as a symlink (no link is followed, inside the home or out); nothing of the host is read",
			needs:   "chromium",
			try: filesAttack("ln -s /etc/shadow fa/shadow && ln -s / fa/root", false, []fileCall{
				{"read_file", path("shadow"), "is a symlink"},
				{"read_file", path("root/etc/shadow"), "is a symlink"},
				{"describe_image", path("root/etc/shadow"), "is a symlink"},
			}, nil),
		},
		{
			name: "write into B's home through a symlinked directory", category: "files",
			action:  "ln -s B's home directory (its host path, as mountinfo shows it) into A's home; write_file through it, and make a new directory below it",
			contain: "refused as a symlink; B's world is unchanged",
			needs:   "chromium",
			try: func(ctx context.Context, f *fixture) (string, error) {
				bHome := filepath.Join(f.b.Dir(), world.HomeDir)
				return filesAttack(fmt.Sprintf("ln -s %q fa/b", bHome), false, []fileCall{
					{"write_file", `{"path":"fa/b/pwned.md","content":"pwned"}`, "is a symlink"},
					{"write_file", `{"path":"fa/b/new/pwned.md","content":"pwned"}`, "is a symlink"},
				}, func(ctx context.Context, f *fixture) error {
					for _, p := range []string{"pwned.md", "new"} {
						if _, err := os.Lstat(filepath.Join(bHome, p)); err == nil {
							return fmt.Errorf("%s made in B's home", p)
						}
					}
					return nil
				})(ctx, f)
			},
		},
		{
			name: "read a file of a terabyte", category: "files",
			action:  "truncate -s 1T a file of A's home (sparse: no space), then read_file and describe_image it",
			contain: "refused from its size (8 MiB bound) before a byte is read",
			needs:   "chromium",
			try: filesAttack("truncate -s 1T fa/huge.log", false, []fileCall{
				{"read_file", path("huge.log"), "larger than 8 MiB"},
				{"describe_image", path("huge.log"), "larger than 8 MiB"},
			}, nil),
		},
	}
}
