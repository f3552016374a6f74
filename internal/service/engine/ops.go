package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// CreateOp returns the db.create operation that creates the definition's
// database with its schema.
func (d *Definition) CreateOp() delta.Op {
	return delta.Op{Op: delta.OpDBCreate, DB: d.Name, SQL: d.Schema()}
}

// Op returns the delta operations of the synthesis operation name with
// params (JSON values by parameter name), after checking them against the
// operation's parameter schema and its checks. An error names the
// operation and the parameter.
func (c *Compiled) Op(name string, params map[string]any) ([]delta.Op, error) {
	d := c.Def
	i := slices.IndexFunc(d.Ops, func(o Op) bool { return o.Name == name })
	if i < 0 {
		names := make([]string, len(d.Ops))
		for j, o := range d.Ops {
			names[j] = o.Name
		}
		return nil, fmt.Errorf("%s has no synthesis operation %q; it has %s", d.Name, name, strings.Join(names, ", "))
	}
	op := &d.Ops[i]
	in, err := toSchema(op.Params)
	if err != nil {
		return nil, fmt.Errorf("%s op %s: params: %w", d.Name, name, err)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s op %s: %w", d.Name, name, err)
	}
	fields, err := dbtool.NewArgs(d.Name+" op "+name, in).Check(raw)
	if err != nil {
		return nil, err
	}
	vals := map[string]any{} // SQL values, for checks and if
	lits := map[string]any{} // JSON values, for the literals
	for k, v := range fields {
		vals[k] = sqlValue(v)
		var x any
		json.Unmarshal(v, &x)
		lits[k] = x
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for j, st := range op.Checks {
		var msg sql.NullString
		text, a := bind(st.Check, vals)
		err := db.QueryRowContext(ctx, text, a...).Scan(&msg)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return nil, fmt.Errorf("%s op %s: checks[%d]: %w", d.Name, name, j, err)
		case msg.Valid:
			return nil, fmt.Errorf("%s op %s: %s", d.Name, name, msg.String)
		}
	}
	var out []delta.Op
	for j, e := range op.Emit {
		items := []any{nil}
		if e.For != "" {
			list, ok := lits[strings.TrimPrefix(e.For, ":")].([]any)
			if !ok {
				continue // an absent list emits nothing
			}
			items = list
		}
		for _, item := range items {
			v, l := vals, lits
			if e.For != "" {
				v, l = overlay(vals, nil), overlay(lits, nil)
				raw, _ := json.Marshal(item)
				v["item"], l["item"] = sqlValue(raw), item
				if obj, ok := item.(map[string]any); ok {
					for k, x := range obj {
						raw, _ := json.Marshal(x)
						v["item_"+k], l["item_"+k] = sqlValue(raw), x
					}
				}
			}
			if e.If != "" {
				var yes bool
				text, a := bind(condition(e.If), v)
				if err := db.QueryRowContext(ctx, text, a...).Scan(&yes); err != nil {
					return nil, fmt.Errorf("%s op %s: emit[%d].if: %w", d.Name, name, j, err)
				}
				if !yes {
					continue
				}
			}
			o, err := e.op(d.Name, l)
			if err != nil {
				return nil, fmt.Errorf("%s op %s: emit[%d]: %w", d.Name, name, j, err)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// op builds the delta operation of e with the parameters' literal values.
func (e *Emit) op(db string, lits map[string]any) (delta.Op, error) {
	key, err := values(e.Key, lits, true)
	if err != nil {
		return delta.Op{}, fmt.Errorf("key: %w", err)
	}
	switch {
	case e.Insert != "":
		vs, err := values(e.Values, lits, false)
		if err != nil {
			return delta.Op{}, fmt.Errorf("values: %w", err)
		}
		return delta.Op{Op: delta.OpDBInsert, DB: db, Table: e.Insert, Key: key, Values: vs}, nil
	case e.Update != "":
		set, err := values(e.Set, lits, false)
		if err != nil {
			return delta.Op{}, fmt.Errorf("set: %w", err)
		}
		return delta.Op{Op: delta.OpDBUpdate, DB: db, Table: e.Update, Key: key, Set: set}, nil
	}
	return delta.Op{Op: delta.OpDBDelete, DB: db, Table: e.Delete, Key: key}, nil
}

// values turns a column -> spec map into delta values; a column whose
// spec names a parameter that was not given is left out (its DEFAULT
// applies), except in a key, where it is an error.
func values(specs map[string]any, lits map[string]any, key bool) (map[string]delta.Value, error) {
	out := make(map[string]delta.Value, len(specs))
	for col, spec := range specs {
		v, ok, err := value(spec, lits)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %w", col, err)
		case !ok && key:
			return nil, fmt.Errorf("%s: the parameter %v was not given", col, spec)
		case ok:
			out[col] = v
		}
	}
	return out, nil
}

// value is one column's value: ":name" a parameter's literal value,
// {ref: T, key: {...}, column: C} another row's column by natural key,
// {sql: EXPR} an SQL expression, anything else a literal.
func value(spec any, lits map[string]any) (delta.Value, bool, error) {
	switch s := spec.(type) {
	case string:
		if name, ok := strings.CutPrefix(s, ":"); ok && paramPattern.MatchString(name) {
			v, given := lits[name]
			return delta.Lit(v), given, nil
		}
		return delta.Lit(s), true, nil
	case map[string]any:
		if expr, ok := s["sql"].(string); ok && len(s) == 1 {
			return delta.SQLExpr(expr), true, nil
		}
		table, _ := s["ref"].(string)
		column, _ := s["column"].(string)
		keySpec, _ := s["key"].(map[string]any)
		if table == "" || column == "" || len(keySpec) == 0 || len(s) != 3 {
			return delta.Value{}, false, fmt.Errorf("%v is neither {sql: EXPR} nor {ref: TABLE, key: {...}, column: COLUMN}", s)
		}
		key, err := values(keySpec, lits, true)
		if err != nil {
			return delta.Value{}, false, fmt.Errorf("ref %s: %w", table, err)
		}
		return delta.RefTo(table, key, column), true, nil
	}
	return delta.Lit(spec), true, nil
}
