package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/vision"
)

// ErrStopped is returned by a policy that gave up before finishing.
var ErrStopped = rollout.ErrStopped

// Ensemble is the default six rollouts: three without the hint, three with
// it, drawn from the scripted oracle and its degraded variants.
func Ensemble() []rollout.Spec {
	return []rollout.Spec{
		{ID: "r1", Policy: Oracle()},
		{ID: "r2", Policy: ImageBlind()},
		{ID: "r3", Policy: ShellOnly()},
		{ID: "r4", Policy: ImageBlind(), Hint: true},
		{ID: "r5", Policy: ApprovalSkipper(), Hint: true},
		{ID: "r6", Policy: Quitter(), Hint: true},
	}
}

// ImageAblated is the rollout the image-ablation gate runs: the oracle,
// hint-free, with the images' information removed from the vision tool.
func ImageAblated() rollout.Spec {
	return rollout.Spec{ID: "ablate-image", Policy: Oracle(), AblateImages: true}
}

// Scripted is the approval-purchase procedure with switches that degrade it.
type Scripted struct {
	name string
	// IgnoreImages skips looking at product photos (unless the hint says to
	// compare them) and takes the first tied candidate.
	IgnoreImages bool
	// SkipApproval never reads the messages; it takes the quantity and the
	// model from the files alone.
	SkipApproval bool
	// ShellOnly uses the CLI only.
	ShellOnly bool
	// StopAfterShortlist gives up once the shortlist is written.
	StopAfterShortlist bool
}

// Oracle returns the full procedure.
func Oracle() *Scripted { return &Scripted{name: "oracle"} }

// ImageBlind returns the variant that ignores product photos.
func ImageBlind() *Scripted { return &Scripted{name: "image-blind", IgnoreImages: true} }

// ApprovalSkipper returns the variant that never reads the approval.
func ApprovalSkipper() *Scripted { return &Scripted{name: "skip-approval", SkipApproval: true} }

// ShellOnly returns the variant that uses one interface only.
func ShellOnly() *Scripted { return &Scripted{name: "shell-only", ShellOnly: true} }

// Quitter returns the variant that stops after the shortlist.
func Quitter() *Scripted { return &Scripted{name: "stops-early", StopAfterShortlist: true} }

// Name implements Policy.
func (s *Scripted) Name() string { return "scripted:" + s.name }

var (
	pathRE = regexp.MustCompile(`~/([A-Za-z0-9_./-]+\.(?:csv|md|pdf))`)
	qtyRE  = regexp.MustCompile(`(?i)\border (\d+)\b`)
	skuRE  = regexp.MustCompile(`\b[A-Z]{1,5}\d*-\d{3,5}\b`)
	// LoginRE finds the shop login in notes/logins.md.
	LoginRE   = regexp.MustCompile("shop: user `([^`]+)`, password `([^`]+)`")
	contactRE = regexp.MustCompile(`(?i)message ([A-Z][a-z]+(?: [A-Z][a-z]+)?)`)
)

// Plan is what the procedure learns from the instruction: the home paths
// it names and the contact to message.
type Plan struct {
	Shortlist, Restock, BOM, Inventory, Specs string
	Contact                                   string
}

// ParseInstruction reads the paths and the contact from an instruction.
func ParseInstruction(t task.Public) (*Plan, error) {
	p := &Plan{}
	for _, m := range pathRE.FindAllStringSubmatch(t.Instruction, -1) {
		switch path := m[1]; {
		case strings.HasSuffix(path, "shortlist.csv"):
			p.Shortlist = path
		case strings.HasSuffix(path, ".csv"):
			p.Inventory = path
		case strings.HasSuffix(path, ".pdf"):
			p.Specs = path
		case strings.Contains(path, "bom"):
			p.BOM = path
		case strings.HasSuffix(path, ".md"):
			p.Restock = path
		}
	}
	if m := contactRE.FindStringSubmatch(t.Instruction); m != nil {
		p.Contact = m[1]
	}
	if p.Shortlist == "" || p.Restock == "" || p.BOM == "" || p.Inventory == "" || p.Specs == "" {
		return nil, fmt.Errorf("the instruction does not name the files this procedure needs: %+v", p)
	}
	return p, nil
}

// Approval is what the approval message asks for.
type Approval struct {
	Qty     int
	Color   string // e.g. "white"; "" if not stated
	Display *bool  // nil if not stated
	Text    string
}

// Matches reports whether a product photo's description fits the approval.
// A description whose image was withheld (d.Ablated) contradicts nothing,
// so it fits: without the picture every look-alike is as good as another.
func (a *Approval) Matches(d *vision.Description) bool {
	if d.Ablated {
		return true
	}
	return (a.Color == "" || d.BodyColor == a.Color) && (a.Display == nil || d.Display == *a.Display)
}

// ReadApproval finds the latest approval message over MCP and reads the
// quantity and the look it asks for.
func ReadApproval(ctx context.Context, env *agent.Env) (*Approval, error) {
	out, err := env.CallTool(ctx, "messages__list_threads", map[string]any{"limit": 50})
	if err != nil {
		return nil, err
	}
	var lt struct {
		Threads []struct {
			Thread string `json:"thread"`
			Title  string `json:"title"`
		} `json:"threads"`
	}
	if err := json.Unmarshal([]byte(out), &lt); err != nil {
		return nil, fmt.Errorf("list_threads: unexpected output: %w", err)
	}
	found, err := env.CallTool(ctx, "messages__search_messages", map[string]any{"query": "approved", "limit": 10})
	if err != nil {
		return nil, err
	}
	var sm struct {
		Matches []struct {
			Thread string `json:"thread"`
		} `json:"matches"`
	}
	if err := json.Unmarshal([]byte(found), &sm); err != nil || len(sm.Matches) == 0 {
		return nil, fmt.Errorf("no approval message found")
	}
	body, err := env.CallTool(ctx, "messages__read_thread", map[string]any{"thread": sm.Matches[0].Thread}) // newest first
	if err != nil {
		return nil, err
	}
	var rt struct {
		Messages []struct {
			Sender string `json:"sender"`
			Body   string `json:"body"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &rt); err != nil {
		return nil, fmt.Errorf("read_thread: unexpected output: %w", err)
	}
	for i := len(rt.Messages) - 1; i >= 0; i-- {
		b := rt.Messages[i].Body
		if !strings.Contains(strings.ToLower(b), "approved") {
			continue
		}
		a := &Approval{Text: b, Qty: 1}
		if m := qtyRE.FindStringSubmatch(b); m != nil {
			a.Qty, _ = strconv.Atoi(m[1])
		}
		low := strings.ToLower(b)
		for _, c := range []string{"white", "black", "grey", "silver", "blue", "red"} {
			if strings.Contains(low, c+" body") || strings.Contains(low, c+" one") {
				a.Color = c
			}
		}
		if strings.Contains(low, "display") {
			yes := !strings.Contains(low, "no display") && !strings.Contains(low, "without")
			a.Display = &yes
		}
		return a, nil
	}
	return nil, fmt.Errorf("no approval message found")
}

// Run implements Policy.
func (s *Scripted) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	p, err := ParseInstruction(t)
	if err != nil {
		return "", err
	}
	lookAtImages := !s.IgnoreImages || strings.Contains(strings.ToLower(t.Hint), "photo") || strings.Contains(strings.ToLower(t.Hint), "image")
	// 1. MCP: the approval.
	appr := &Approval{Qty: 1}
	if !s.SkipApproval && !s.ShellOnly {
		if appr, err = ReadApproval(ctx, env); err != nil {
			return "", err
		}
	}
	// 2. CLI: join the three sources into the ranked shortlist.
	out, err := env.Run(ctx, shortlistScript(p))
	if err != nil {
		return "", fmt.Errorf("shortlist script: %w", err)
	}
	rows := parseShortlist(out)
	if len(rows) == 0 {
		return "", fmt.Errorf("the shortlist is empty")
	}
	if s.StopAfterShortlist {
		return "", ErrStopped
	}
	tied := []string{rows[0].sku}
	for _, r := range rows[1:] {
		if r.joules == rows[0].joules && r.price == rows[0].price {
			tied = append(tied, r.sku)
		}
	}
	choice := tied[0]
	qty := appr.Qty
	// 3. GUI: log in, compare the tied candidates' photos, add to cart.
	if !s.ShellOnly {
		creds, err := env.Run(ctx, "cat notes/logins.md")
		if err != nil {
			return "", err
		}
		m := LoginRE.FindStringSubmatch(creds)
		if m == nil {
			return "", fmt.Errorf("no shop login found in notes/logins.md")
		}
		if err := Login(ctx, env, m[1], m[2]); err != nil {
			return "", err
		}
		if len(tied) > 1 && lookAtImages && (appr.Color != "" || appr.Display != nil) {
			choice = ""
			for _, sku := range tied {
				if err := env.Open(ctx, "/p/"+sku); err != nil {
					return "", err
				}
				d, err := env.LookAt(ctx, "#product-image")
				if err != nil {
					return "", err
				}
				if appr.Matches(d) {
					choice = sku
					break
				}
			}
			if choice == "" {
				return "", fmt.Errorf("no candidate matches the approval's description")
			}
		}
		if err := env.Open(ctx, "/p/"+choice); err != nil {
			return "", err
		}
		if err := env.Fill(ctx, "#qty", strconv.Itoa(qty)); err != nil {
			return "", err
		}
		if err := env.Click(ctx, "#add-to-cart"); err != nil {
			return "", err
		}
		if _, err := env.Read(ctx, "#cart-items"); err != nil {
			return "", err
		}
	}
	// 4. CLI: the restock note.
	note := fmt.Sprintf("# Restock: venue rack\n\nOrdered %d x %s (rack surge protector) for the venue rack.\n", qty, choice)
	if _, err := env.Run(ctx, fmt.Sprintf("mkdir -p %s && cat > %s <<'EOF'\n%sEOF", shellDir(p.Restock), p.Restock, note)); err != nil {
		return "", err
	}
	// 5. MCP: tell the install assistant.
	if !s.ShellOnly && p.Contact != "" {
		if _, err := env.CallTool(ctx, "messages__send_message", map[string]any{"to": p.Contact,
			"body": fmt.Sprintf("Ordered %d x %s for the venue rack, please prep the mounting.", qty, choice)}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Ordered %d x %s", qty, choice), nil
}

func shellDir(path string) string {
	if i := strings.LastIndexByte(path, '/'); i > 0 {
		return path[:i]
	}
	return "."
}

// Login logs in to the shop through the browser.
func Login(ctx context.Context, env *agent.Env, user, pass string) error {
	if err := env.Open(ctx, "/login"); err != nil {
		return err
	}
	if err := env.Fill(ctx, "#login-username", user); err != nil {
		return err
	}
	if err := env.Fill(ctx, "#login-password", pass); err != nil {
		return err
	}
	return env.Click(ctx, "#login-submit")
}

type shortRow struct {
	sku           string
	joules, price float64
}

// ShortlistSKUs returns the SKUs of a shortlist CSV's rows and those tied
// with the first on joules and price.
func ShortlistSKUs(csv string) (all, tied []string) {
	rows := parseShortlist(csv)
	for _, r := range rows {
		all = append(all, r.sku)
		if r.joules == rows[0].joules && r.price == rows[0].price {
			tied = append(tied, r.sku)
		}
	}
	return all, tied
}

func parseShortlist(csv string) []shortRow {
	var out []shortRow
	for i, line := range strings.Split(strings.TrimSpace(csv), "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if i == 0 || len(f) < 5 {
			continue
		}
		j, _ := strconv.ParseFloat(f[2], 64)
		pr, _ := strconv.ParseFloat(f[4], 64)
		out = append(out, shortRow{sku: f[1], joules: j, price: pr})
	}
	return out
}
