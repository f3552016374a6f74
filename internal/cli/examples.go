package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the main commands' --help examples, by command path, as
// data: TestHelpExamples runs every line through the command line's
// parser, so an example never names a flag that is not there.
var examples = map[string][]string{
	"demo": {
		"wildawm demo                      # the case study end to end, output in ./wildawm-demo",
		"wildawm demo --dir /tmp/demo --no-install",
	},
	"syn worlds": {
		"wildawm syn worlds --personas 36 --days 8..30 --parallel 4   # the paper's scale, into ./wildawm-worlds",
		"wildawm syn worlds --dir small --personas 2 --days 4          # a small run",
	},
	"syn tasks": {
		"wildawm syn tasks --parallel 2                         # every family on each persona's last three days",
		"wildawm syn tasks --families wishlist-balance --days 5..9 --check --fake-browser",
	},
	"syn task": {
		"wildawm syn task --persona marta-costa --day 9 --families cafe-near-venue",
	},
	"pool run": {
		"wildawm pool run --parallel 3 --fake-browser           # tasks, gates, splits and Table 4 of ./wildawm-worlds",
		"wildawm pool run --dir small --count 20 --cache-max 1GiB",
	},
	"pool rate": {
		"wildawm pool rate --agent http://127.0.0.1:8000/v1#qwen3-8b -k 3 --fake-browser   # re-rate ./wildawm-worlds' pool with your model",
		"wildawm pool rate --dir small --agent http://127.0.0.1:8000/v1#qwen3-8b,opencode -k 8 --split val",
	},
	"gate": {
		"wildawm gate --task wildawm-worlds/tasks/ID --fake-browser",
	},
	"eval": {
		"wildawm eval --fake-browser                            # the scripted replay on the val split",
		"wildawm eval --agent http://127.0.0.1:8000/v1#qwen3-8b -k 8 --parallel 4",
	},
	"sft export": {
		"wildawm sft export --out sft.jsonl                     # the stored gate rollouts that passed",
		"wildawm sft export --out sft.jsonl --from live --teacher http://127.0.0.1:8000/v1#qwen3-8b --fake-browser",
	},
	"rl serve": {
		"wildawm rl serve --addr 127.0.0.1:8020 --fake-browser",
		"wildawm rl serve --addr 0.0.0.0:8020 --token-file token.txt",
	},
	"openenv serve": {
		"wildawm openenv serve --split rl --fake-browser",
	},
	"verify": {
		"wildawm verify --dir wildawm-worlds --task wildawm-worlds/tasks/ID --regrade",
		"wildawm verify --dir wildawm-worlds --task wildawm-worlds/tasks/ID --w SNAPSHOT --answer '42 EUR'",
	},
	"world checkout": {
		"wildawm world checkout --dir wildawm-worlds 3f2a9c /tmp/day7   # a snapshot of the run's own store",
	},
	"world log": {
		"wildawm world log --dir wildawm-worlds         # every snapshot of the run",
		"wildawm world log 3f2a9c                       # one and its ancestors, in the default store",
	},
	"world diff": {
		"wildawm world diff --dir wildawm-worlds 3f2a9c 8b01d4",
	},
	"rollout": {
		"wildawm rollout --policy replay-careful --hint",
		"wildawm rollout --model http://127.0.0.1:8000/v1#qwen3-8b --harness wildawm",
	},
	"serve": {
		"wildawm serve --store wildawm-worlds/store --catalog wildawm-worlds/catalog",
	},
	"catalog build": {
		"wildawm catalog build --out catalog --seed 1",
	},
	"stats tasks": {
		"wildawm stats tasks --dir wildawm-worlds",
	},
	"mcp serve": {
		"wildawm mcp serve --world /tmp/day7 --service mail --http 127.0.0.1:0",
	},
}

// addExamples sets the Example of every command examples names.
func addExamples(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if ex, ok := examples[path]; ok {
			c.Example = "  " + strings.Join(ex, "\n  ")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
