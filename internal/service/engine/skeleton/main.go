//go:build ignore

// Skeleton prints a definition skeleton (YAML) of a registered service as
// it answers today: its tables from Schema(), its tools' names,
// descriptions, annotations and JSON Schemas, its resource templates, with
// empty steps. Porting aid: go run ./internal/service/engine/skeleton NAME
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

func main() {
	name := os.Args[1]
	spec, err := service.Lookup(name)
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "skel")
	defer os.RemoveAll(dir)
	os.MkdirAll(dir+"/db", 0o755)
	os.MkdirAll(dir+"/home", 0o755)
	for _, s := range service.All() {
		db, err := state.OpenDB(world.DBPath(dir, s.Name), false)
		if err != nil {
			panic(err)
		}
		for _, q := range s.Schema() {
			if _, err := db.Exec(q); err != nil {
				panic(err)
			}
		}
		db.Close()
	}
	svc, err := spec.Open(service.Options{WorldDir: dir, Clock: world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)), Self: "{{self}}", SelfAddress: "{{self_address}}"})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := svc.Server().Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "skel"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	ir := cs.InitializeResult()
	out := map[string]any{"wildawm_service": 1, "name": name, "title": ir.ServerInfo.Title, "version": ir.ServerInfo.Version,
		"instructions": ir.Instructions, "health_tool": spec.ReadTool}
	var tables []map[string]any
	for _, ddl := range spec.Schema() {
		if !strings.HasPrefix(ddl, "CREATE TABLE ") {
			fmt.Fprintln(os.Stderr, "index or other:", ddl)
			continue
		}
		head, body, _ := strings.Cut(ddl, " (\n  ")
		body = strings.TrimSuffix(body, "\n)")
		var cols, cons []string
		for _, l := range strings.Split(body, ",\n  ") {
			u := strings.ToUpper(l)
			if strings.HasPrefix(u, "UNIQUE") || strings.HasPrefix(u, "PRIMARY KEY") || strings.HasPrefix(u, "CHECK") || strings.HasPrefix(u, "FOREIGN KEY") {
				cons = append(cons, l)
			} else {
				cols = append(cols, l)
			}
		}
		t := map[string]any{"name": strings.TrimPrefix(head, "CREATE TABLE "), "columns": cols, "key": []string{"TODO"}}
		if len(cons) > 0 {
			t["constraints"] = cons
		}
		tables = append(tables, t)
	}
	out["tables"] = tables
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		panic(err)
	}
	var ts []map[string]any
	for _, t := range tools.Tools {
		a := map[string]any{"readOnlyHint": t.Annotations.ReadOnlyHint, "idempotentHint": t.Annotations.IdempotentHint}
		if t.Annotations.DestructiveHint != nil {
			a["destructiveHint"] = *t.Annotations.DestructiveHint
		}
		if t.Annotations.OpenWorldHint != nil {
			a["openWorldHint"] = *t.Annotations.OpenWorldHint
		}
		ts = append(ts, map[string]any{"name": t.Name, "title": t.Title, "description": t.Description, "annotations": a,
			"input": t.InputSchema, "output": t.OutputSchema, "steps": []any{map[string]any{"result": "TODO"}}})
	}
	out["tools"] = ts
	if rts, err := cs.ListResourceTemplates(ctx, nil); err == nil {
		var rs []map[string]any
		for _, r := range rts.ResourceTemplates {
			rs = append(rs, map[string]any{"name": r.Name, "title": r.Title, "description": r.Description, "mime": r.MIMEType, "uri": r.URITemplate,
				"steps": []any{map[string]any{"result": "TODO"}}})
		}
		out["resources"] = rs
	}
	enc := yaml.NewEncoder(os.Stdout)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
