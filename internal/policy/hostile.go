package policy

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/task"
)

// Hostile attacks: what an agent can do to its own world or answer to
// break what judges it (issue 29). None may score as anything but the
// agent's failure: an infrastructure failure would let a failing policy
// escape its reward.
const (
	// An answer of 200 KB (over verify.MaxAnswerBytes, over the 128 KiB
	// an environment string may hold).
	HostileLongAnswer = "long-answer"
	// An answer holding a NUL byte (no environment variable can).
	HostileNULAnswer = "nul-answer"
	// Two home files named x\xff and x\xfe (one U+FFFD name to a store
	// that keeps names as UTF-8).
	HostileNames = "names"
	// One home file with an invalid UTF-8 name.
	HostileBadName = "bad-name"
	// A PNG of a few hundred bytes that claims 200000x200000 pixels,
	// given to describe_image.
	HostilePNGBomb = "png-bomb"
	// A fifo given to read_file.
	HostileFIFORead = "fifo-read"
	// A fifo at write_file's path and at its temporary name.
	HostileFIFOWrite = "fifo-write"
	// A fifo named like a picture, given to describe_image.
	HostileFIFOImage = "fifo-image"
	// A sparse home file of 64 GiB.
	HostileSparse = "sparse"
	// The reference solution, then every file it wrote made mode 000.
	HostileUnreadable = "unreadable"
	// The reference solution, then every file it wrote replaced by a
	// directory.
	HostileDirForFile = "dir-for-file"
	// The reference solution, then every file it wrote overwritten with
	// random bytes.
	HostileGarbage = "garbage"
	// The reference solution, then every file it wrote replaced by a
	// symlink to /etc/passwd.
	HostileLinkOut = "link-out"
	// The reference solution, then the home directory made mode 000.
	HostileHome000 = "home-000"
)

// HostileAttacks lists the attacks in a fixed order.
func HostileAttacks() []string {
	return []string{HostileLongAnswer, HostileNULAnswer, HostileNames, HostileBadName, HostilePNGBomb, HostileFIFORead,
		HostileFIFOWrite, HostileFIFOImage, HostileSparse, HostileUnreadable, HostileDirForFile, HostileGarbage, HostileLinkOut, HostileHome000}
}

// Hostile is a scripted policy that does one hostile thing to its own world
// or answer, then answers: the adversarial suite's RL agent. The attacks
// after the reference solution (unreadable, dir-for-file, garbage,
// link-out, home-000) first replay the task's reference completion, so
// that what they break is what a verifier reads.
type Hostile struct {
	attack string
	task   *task.Task
	seed   uint64
}

// NewHostile returns the policy of one attack of HostileAttacks on t.
func NewHostile(attack string, t *task.Task, seed uint64) (*Hostile, error) {
	if !slices.Contains(HostileAttacks(), attack) {
		return nil, fmt.Errorf("policy: hostile attack %q: give one of %s", attack, strings.Join(HostileAttacks(), ", "))
	}
	return &Hostile{attack: attack, task: t, seed: seed}, nil
}

// Name implements rollout.Policy.
func (h *Hostile) Name() string { return "scripted:hostile-" + h.attack }

// hostileMark is the home file the sabotage attacks touch before the
// reference runs: what is newer was written by it.
const hostileMark = ".hostile-mark"

// Run implements rollout.Policy. A tool call the world refuses is what the
// attack expects, not an error; a harness failure (agent.ErrInfra) is
// returned as it is.
func (h *Hostile) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	shell := func(cmd string) error {
		_, err := env.Run(ctx, cmd)
		return infra(err)
	}
	switch h.attack {
	case HostileLongAnswer:
		return strings.Repeat("x", 200<<10), nil
	case HostileNULAnswer:
		return "done\x00and more", nil
	case HostileNames:
		return "done", shell(`printf a > "$HOME/x$(printf '\377')" && printf b > "$HOME/x$(printf '\376')"`)
	case HostileBadName:
		return "done", shell(`printf a > "$HOME/bad$(printf '\377')name"`)
	case HostilePNGBomb:
		if _, err := env.WriteFile(ctx, "bomb.png", string(BombPNG(200000, 200000))); infra(err) != nil {
			return "", err
		}
		_, err := env.DescribeFile(ctx, "bomb.png")
		return "done", infra(err)
	case HostileFIFORead:
		if err := shell("mkfifo ~/pipe"); err != nil {
			return "", err
		}
		_, err := env.ReadFile(ctx, "pipe")
		return "done", infra(err)
	case HostileFIFOWrite:
		if err := shell("mkfifo ~/out.txt ~/.out.txt.wildawm-tmp"); err != nil {
			return "", err
		}
		_, err := env.WriteFile(ctx, "out.txt", "x")
		return "done", infra(err)
	case HostileFIFOImage:
		if err := shell("mkfifo ~/photo.png"); err != nil {
			return "", err
		}
		_, err := env.DescribeFile(ctx, "photo.png")
		return "done", infra(err)
	case HostileSparse:
		return "done", shell("truncate -s 64G ~/big.bin")
	}
	if err := shell("touch ~/" + hostileMark); err != nil {
		return "", err
	}
	answer, err := NewReplay("oracle", h.task, ErrorModel{}, h.seed).Run(ctx, env, t)
	if infra(err) != nil {
		return "", err
	}
	written := `find ~ -type f -newer ~/` + hostileMark + ` ! -name ` + hostileMark
	var sabotage string
	switch h.attack {
	case HostileUnreadable:
		sabotage = written + ` -exec chmod 000 {} +`
	case HostileDirForFile:
		sabotage = written + ` | while IFS= read -r f; do rm -f "$f" && mkdir "$f"; done`
	case HostileGarbage:
		sabotage = written + ` | while IFS= read -r f; do head -c 4096 /dev/urandom > "$f"; done`
	case HostileLinkOut:
		sabotage = written + ` | while IFS= read -r f; do rm -f "$f" && ln -s /etc/passwd "$f"; done`
	case HostileHome000:
		sabotage = `chmod 000 ~`
	}
	return answer, shell(sabotage)
}

// infra keeps only a harness failure: a refused tool call is an
// observation the attack expects.
func infra(err error) error {
	if errors.Is(err, agent.ErrInfra) {
		return err
	}
	return nil
}

// BombPNG is a valid PNG header of width x height RGBA pixels with almost
// no data: a few hundred bytes a decoder without a size check allocates
// width*height*4 bytes for.
func BombPNG(width, height uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		c := crc32.NewIEEE()
		c.Write([]byte(typ))
		c.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, c.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], width)
	binary.BigEndian.PutUint32(ihdr[4:], height)
	ihdr[8], ihdr[9] = 8, 6 // 8 bits, RGBA
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(make([]byte, 4096)) // the first rows' filter bytes and pixels: zeros
	w.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}
