package dbtool

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rules SchemaProblems checks, by the model API whose function-calling
// adapter rejects a tool that breaks them (what each API answered, or its
// reference says, as reported in public issue threads and docs):
//
// OpenAI function calling (tools[].function.parameters):
//   - [openai-root] the root is {"type": "object"} ("Invalid schema for
//     function ...: None is not of type 'object'":
//     karakeep-app/karakeep#1831);
//   - [openai-properties] every object schema has "properties", empty for a
//     tool without arguments ("In context=(), object schema missing
//     properties": openai/openai-agents-python#449,
//     langchain-ai/langchain-mcp-adapters#343);
//   - [openai-items] every array schema has "items" ("In
//     context=('properties', 'paths'), array schema missing items":
//     sigoden/aichat#1049);
//   - [openai-name] the name matches ^[a-zA-Z0-9_-]{1,64}$.
//
// Gemini function declarations (functionDeclarations[].parameters, the
// Schema message: "a select subset of an OpenAPI 3.0 schema object"):
//   - [gemini-keys] a schema has only the Schema message's fields (type,
//     format, title, description, enum, items, minItems, maxItems,
//     properties, required, minProperties, maxProperties, minLength,
//     maxLength, pattern, minimum, maximum, default, example,
//     propertyOrdering); any other member is refused ("Invalid JSON payload
//     received. Unknown name \"additionalProperties\" ... Cannot find
//     field", the same for $schema, $ref, $defs, const, propertyNames:
//     ax-llm/ax#293, openswarm-ai/openswarm#24, zed-industries/zed#44875).
//     anyOf, nullable and the rest of OpenAPI that JSON Schema adapters
//     read differently are left out as well;
//   - [gemini-type] "type" is one string, one of string, number, integer,
//     boolean, array, object: the Type enum has no null, and a list of
//     types is refused ("Unknown name \"type\" ... Proto field is not
//     repeating, cannot start list": zed-industries/zed#53919);
//   - [gemini-format] "format", if any, is "enum" or "date-time", the only
//     ones the Gemini Developer API takes (Firebase AI Logic's
//     SchemaShared.format);
//   - [gemini-enum] "enum" only on a string.
//
// Anthropic tools (tools[].input_schema):
//   - [anthropic-root] "type" is "object" (ToolInputSchema.type is the
//     constant "object");
//   - [anthropic-top] no oneOf, allOf or anyOf at the top level
//     ("input_schema does not support oneOf, allOf, or anyOf at the top
//     level": anthropics/claude-code#5319);
//   - [anthropic-name] the name matches ^[a-zA-Z0-9_-]{1,64}$.
//
// Besides: every name in "required" is a property (OpenAI's strict mode
// refuses an "Extra required key": camel-ai/camel#2629), and minimum and
// maximum sit only on numbers. Output schemas are checked against the same rules:
// they are published the same way (Portable), and a client may hand them
// to a model too.

// schemaKeys are the members a schema may have ([gemini-keys]).
var schemaKeys = []string{
	"type", "format", "title", "description", "enum", "items", "minItems", "maxItems",
	"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
	"pattern", "minimum", "maximum", "default", "example", "propertyOrdering",
}

// adapterTypes are the types a schema may have ([gemini-type]).
var adapterTypes = []string{"string", "number", "integer", "boolean", "array", "object"}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// SchemaProblems lists how tool's name, input schema and output schema (if
// any) break the rules above, each naming the rule; none means the tool
// can be handed to the OpenAI, Gemini and Anthropic function-calling APIs
// as it is.
func SchemaProblems(tool *mcp.Tool) []string {
	var probs []string
	if !toolName.MatchString(tool.Name) {
		probs = append(probs, fmt.Sprintf("[openai-name, anthropic-name] tool name %q does not match %s", tool.Name, toolName))
	}
	probs = append(probs, rootProblems("inputSchema", tool.InputSchema)...)
	if tool.OutputSchema != nil {
		probs = append(probs, rootProblems("outputSchema", tool.OutputSchema)...)
	}
	return probs
}

func rootProblems(where string, schema any) []string {
	b, err := json.Marshal(schema)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", where, err)}
	}
	var root any
	if err := json.Unmarshal(b, &root); err != nil {
		return []string{fmt.Sprintf("%s: %v", where, err)}
	}
	m, ok := root.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("[openai-root, anthropic-root] %s is %s, not a JSON object", where, b)}
	}
	var probs []string
	if m["type"] != "object" {
		probs = append(probs, fmt.Sprintf(`[openai-root, anthropic-root] %s has type %v, not "object"`, where, m["type"]))
	}
	for _, k := range []string{"oneOf", "allOf", "anyOf"} {
		if _, ok := m[k]; ok {
			probs = append(probs, fmt.Sprintf("[anthropic-top] %s has %s at the top level", where, k))
		}
	}
	return append(probs, nodeProblems(where, m)...)
}

// nodeProblems checks the schema s at path and every schema under it.
func nodeProblems(path string, s map[string]any) []string {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, path+": "+fmt.Sprintf(format, args...)) }
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if !slices.Contains(schemaKeys, k) {
			add("[gemini-keys] member %q is not a field of Gemini's Schema", k)
		}
	}
	typ, ok := s["type"].(string)
	switch {
	case !ok:
		add("[gemini-type] type is %v, not one string", jsonText(s["type"]))
	case !slices.Contains(adapterTypes, typ):
		add("[gemini-type] type %q is not one of %s", typ, strings.Join(adapterTypes, ", "))
	}
	if f, ok := s["format"]; ok && f != "enum" && f != "date-time" {
		add(`[gemini-format] format %v is not "enum" or "date-time"`, jsonText(f))
	}
	if _, ok := s["enum"]; ok && typ != "string" {
		add("[gemini-enum] enum on a %s", typ)
	}
	for _, k := range []string{"minimum", "maximum"} {
		if _, ok := s[k]; ok && typ != "integer" && typ != "number" {
			add("%s on a %s", k, typ)
		}
	}
	switch typ {
	case "object":
		props, ok := s["properties"].(map[string]any)
		if !ok {
			add("[openai-properties] an object schema without properties (give {} for none)")
		}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			sub, ok := props[name].(map[string]any)
			if !ok {
				add("property %q is %s, not a schema object", name, jsonText(props[name]))
				continue
			}
			probs = append(probs, nodeProblems(path+".properties."+name, sub)...)
		}
		if req, ok := s["required"]; ok {
			names, _ := req.([]any)
			for _, n := range names {
				if _, ok := props[fmt.Sprint(n)]; !ok {
					add("required %v is not a property", jsonText(n))
				}
			}
		}
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			add("[openai-items] an array schema without an items schema")
		} else {
			probs = append(probs, nodeProblems(path+".items", items)...)
		}
	}
	return probs
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
