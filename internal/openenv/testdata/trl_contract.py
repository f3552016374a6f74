"""Check a module from WriteTRL against TRL's environment_factory contract.

Run by TestTRLEnv (trl_test.go) as: python3 trl_contract.py MODULE.py CLASS,
with {"url", "task_id", "instruction", "answer", "reference", "tools"} on
stdin ("tools" the server's, with input_schema). TRL and transformers are
not installed here; what they do with the class is restated from their
source (huggingface/trl f2cd5771, trl/trainer/grpo_trainer.py):

- GRPOTrainer.__init__ calls the factory with no argument, then takes the
  members inspect.getmembers(instance, predicate=inspect.ismethod) gives:
  reset is required, get_reward is a reward source, and every other name
  not starting with "_" is a tool;
- _generate_and_score_completions calls environment.reset(**row) with the
  dataset row, and appends a returned string to the last user message;
- _tool_call_loop calls a sync tool as tool_dict[tool.__name__](**arguments)
  and shows str(result) to the model; an exception becomes {"error": ...};
- the schema the model sees is transformers' get_json_schema(method)
  (src/transformers/utils/chat_template_utils.py): a docstring whose
  description precedes "Args:", every argument typed and described there,
  a default making it optional.

Prints a JSON report; exits non-zero on the first broken expectation.
"""

import importlib.util
import inspect
import json
import keyword
import re
import sys
import typing


def expect(ok, what):
    if not ok:
        print(f"trl_contract.py: {what}", file=sys.stderr)
        sys.exit(1)


def json_type(hint):
    """The JSON Schema a type hint stands for, as get_json_schema reads it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        inner = [a for a in args if a is not type(None)]
        expect(len(inner) == 1, f"a union of {args}")
        return json_type(inner[0])
    if origin is list:
        return {"type": "array", **({"items": json_type(args[0])} if args else {})}
    basic = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}
    expect(hint in basic, f"type hint {hint} has no JSON Schema")
    return {"type": basic[hint]}


def schema_of(method):
    """Restates what get_json_schema requires of a method and gives back."""
    doc = inspect.getdoc(method)
    expect(doc, f"{method.__name__}: no docstring")
    head = re.split(r"\n\s*(?:Args|Returns|Raises):", doc)[0].strip()
    expect(head, f"{method.__name__}: no description before Args:")
    m = re.search(r"\n\s*Args:\n(.*?)(?:\n\s*(?:Returns|Raises):|\Z)", doc, re.S)
    described = {}
    if m:
        for line in m.group(1).split("\n"):
            am = re.match(r"\s*(\w+):\s*(.*)", line)
            expect(am, f"{method.__name__}: Args line {line!r} is not 'name: description'")
            described[am.group(1)] = am.group(2)
    hints = typing.get_type_hints(method)
    props, required = {}, []
    for name, p in inspect.signature(method).parameters.items():
        expect(p.annotation is not inspect.Parameter.empty, f"{method.__name__}: {name} has no type hint")
        expect(name in described and described[name], f"{method.__name__}: {name} is not described under Args:")
        props[name] = json_type(hints[name])
        if p.default is inspect.Parameter.empty:
            required.append(name)
    return {"name": method.__name__, "description": head, "properties": props, "required": required}


def main():
    path, cls_name = sys.argv[1], sys.argv[2]
    req = json.load(sys.stdin)
    spec = importlib.util.spec_from_file_location("wildawm_env", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    factory = getattr(mod, cls_name)
    instance = factory()  # TRL probes one instance at init, with no argument
    members = dict(inspect.getmembers(instance, predicate=inspect.ismethod))
    expect("reset" in members, "no reset")
    expect("get_reward" in members, "no get_reward")
    tools = [m for n, m in members.items() if n not in ("reset", "get_reward") and not n.startswith("_")]
    expect(not any(inspect.iscoroutinefunction(t) for t in tools), "an async tool")
    tool_dict = {t.__name__: t for t in tools}

    # The schema the model sees is the server's.
    # An argument a Python keyword names (from) is the method's from_;
    # the method sends it by the server's name (TestWriteTRLNames).
    def py(n):
        n = re.sub(r"[^A-Za-z0-9_]", "_", n)
        return n + "_" if keyword.iskeyword(n) else n

    server = {}
    for t in req["tools"]:
        s = t["input_schema"]
        server[t["name"]] = {"properties": {py(k): v for k, v in s.get("properties", {}).items()}, "required": [py(k) for k in s.get("required", [])]}
    expect(sorted(tool_dict) == sorted(server), f"methods {sorted(tool_dict)} != tools {sorted(server)}")
    for name, method in tool_dict.items():
        got, want = schema_of(method), server[name]
        expect(sorted(got["properties"]) == sorted(want.get("properties", {})), f"{name}: arguments {got['properties']} != {want}")
        expect(sorted(got["required"]) == sorted(want.get("required", [])), f"{name}: required {got['required']} != {want}")
        for arg, s in want.get("properties", {}).items():
            if "type" in s:
                expect(got["properties"][arg]["type"] == s["type"], f"{name}.{arg}: {got['properties'][arg]} != {s}")

    report = {"tools": len(tool_dict)}
    # reset(**row): a dataset row, prompt and extra columns included.
    row = {"prompt": [{"role": "user", "content": "Do the task."}], "task_id": req["task_id"], "ground_truth": 3}
    text = instance.reset(**row)
    expect(isinstance(text, str) and req["instruction"] in text, f"reset returned {text!r}")
    report["ignored"] = instance.ignored_reset_keys

    def tool_call(name, arguments):
        # _tool_call_loop: a failing tool becomes {"error": str(e)}.
        try:
            return str(tool_dict[name](**arguments))
        except Exception as e:
            return json.dumps({"error": str(e)})

    report["shell"] = tool_call("shell", {"command": "echo $((6*7))"})
    report["mcp"] = tool_call("payments__get_balance", {"account": "chk-mc"})
    report["missing"] = tool_call("read_file", {"path": "no/such/file"})
    report["steps"] = instance.steps

    # The reference through the session (its trajectory names are no
    # model's tools), then the answer tool: verified, reward 1.
    instance.reset(task_id=req["task_id"])
    for s in req["reference"]:
        instance._call(s["tool"], s["args"] or {})
    report["answer"] = tool_call("answer", {"text": req["answer"]})
    report["reward"] = instance.get_reward()
    report["after"] = tool_call("shell", {"command": "true"})

    # An episode left without an answer is ended and verified.
    instance.reset(task_id=req["task_id"])
    report["unanswered"] = instance.get_reward()
    report["verification"] = instance.verification
    instance._close()
    print(json.dumps(report))


main()
