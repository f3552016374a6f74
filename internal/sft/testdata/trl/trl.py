"""A stand-in for TRL's SFTTrainer that holds a data set to TRL's SFT
contract, re-implemented from TRL's current source (read, not copied):

- trl/data_utils.py, is_conversational: the first of prompt, chosen,
  rejected, completion, messages the example has is a list whose first
  element is a dict with "role".
- trl/trainer/sft_trainer.py, SFTTrainer.__init__: completion_only_loss
  None means "prompt" and "completion" both in the example;
  assistant_only_loss on a data set that is not conversational is a
  ValueError.
- trl/trainer/sft_trainer.py, SFTTrainer._prepare_dataset, tokenize_fn:
  tools = example.get("tools"), json.loads when a str, passed to
  apply_chat_template with the prompt (add_generation_prompt=True) and
  with prompt + completion (return_assistant_tokens_mask); an example with
  no assistant tokens is a RuntimeError; build_labels keeps a token only
  where every mask (assistant_masks, and completion_mask under
  completion_only_loss) is 1, and an example left with no label is
  dropped (the filter after truncation).
- what the chat templates do with the fields (transformers'
  apply_chat_template, the templates in trl/chat_templates/): roles
  system, user, assistant, tool; tool_calls [{"type": "function",
  "function": {"name", "arguments"}}] with arguments a mapping
  (qwen3_5_*.jinja and qwen3_6.jinja iterate `arguments|items`,
  llama3_1.jinja `tojson`s it: a JSON text would be written as a string);
  tools in the function form docs/source/dataset_formats.md shows
  ({"type": "function", "function": {"name", "description",
  "parameters"}}). A call's arguments hold only the parameters its tool
  declares: a key it does not (a null Arrow added, a CSS selector where
  the tool takes a number) is rendered as if the model had written it.

When jinja2 is importable, each example is also rendered with
toolcall.jinja beside this file (a template of this test's own that reads
the fields as tool-calling templates do, `{% generation %}` markers and
all; transformers renders with jinja2 and an `items` filter the same way),
and every argument of every call must appear in the text.

It trains nothing: train() reports the examples that would train and the
trainable messages they hold, or raises on the first that breaks the
contract, naming it.
"""

import json
import os

try:
    import jinja2
except ImportError:  # the contract checks still run
    jinja2 = None


def render(msgs, tools):
    env = jinja2.Environment(extensions=[GenerationTag], undefined=jinja2.Undefined)
    env.filters["items"] = lambda m: list(m.items())
    env.filters["tojson"] = lambda v: json.dumps(v, ensure_ascii=False)
    with open(os.path.join(os.path.dirname(__file__), "toolcall.jinja")) as f:
        return env.from_string(f.read()).render(messages=msgs, tools=tools)

SUPPORTED = ["prompt", "chosen", "rejected", "completion", "messages"]


def is_conversational(example):
    keys = [k for k in example.keys() if k in SUPPORTED]
    if keys:
        m = example[keys[0]]
        if isinstance(m, list) and m and isinstance(m[0], dict) and "role" in m[0]:
            return True
    return False


if jinja2 is not None:
    from jinja2.ext import Extension
    from jinja2 import nodes

    class GenerationTag(Extension):
        """{% generation %}...{% endgeneration %}, as transformers reads it
        (here it only renders its body)."""
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller):
            return caller()


class SFTConfig:
    def __init__(self, assistant_only_loss=False, completion_only_loss=None, max_length=1024, **kwargs):
        self.assistant_only_loss = assistant_only_loss
        self.completion_only_loss = completion_only_loss
        self.max_length = max_length
        self.kwargs = kwargs


class ContractError(Exception):
    pass


def fail(i, msg):
    raise ContractError("example %d: %s" % (i, msg))


def check_tools(i, tools):
    if isinstance(tools, str):
        tools = json.loads(tools)  # tokenize_fn's json.loads
    if not isinstance(tools, list) or not tools:
        fail(i, "tools is %r: want the list of the tools offered" % (type(tools).__name__,))
    by_name = {}
    for t in tools:
        f = t.get("function") if isinstance(t, dict) else None
        if not isinstance(t, dict) or t.get("type") != "function" or not isinstance(f, dict):
            fail(i, "a tool not in the function form: %r" % (t,))
        if not isinstance(f.get("name"), str) or not isinstance(f.get("description"), str):
            fail(i, "a tool without a name or a description: %r" % (f,))
        p = f.get("parameters")
        if not isinstance(p, dict) or p.get("type") != "object":
            fail(i, "tool %s: parameters is not a JSON Schema object: %r" % (f.get("name"), p))
        by_name[f["name"]] = p
    return by_name


def check_messages(i, msgs, tools):
    for j, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            fail(i, "message %d: role %r" % (j, role))
        if not isinstance(m.get("content"), str):
            fail(i, "message %d (%s): content %r is not a string" % (j, role, m.get("content")))
        for c in m.get("tool_calls") or []:
            f = c.get("function") if isinstance(c, dict) else None
            if not isinstance(c, dict) or c.get("type") != "function" or not isinstance(f, dict):
                fail(i, "message %d: a tool call not in the function form: %r" % (j, c))
            name, args = f.get("name"), f.get("arguments")
            if not isinstance(args, dict):
                fail(i, "message %d: %s's arguments are a %s, not a mapping (templates iterate arguments|items)" % (j, name, type(args).__name__))
            schema = tools.get(name)
            if schema is None:
                continue  # a call of no listed tool: the harness answered it with an error
            props = schema.get("properties") or {}
            for k in args:
                if props.get(k) is None:  # undeclared, or a null Arrow filled in
                    fail(i, "message %d: %s's argument %r (%r) is not a parameter of the tool (%s)" % (j, name, k, args[k], ", ".join(sorted(props))))


class SFTTrainer:
    def __init__(self, model=None, train_dataset=None, args=None, **kwargs):
        self.args = args or SFTConfig()
        self.dataset = train_dataset
        sample = next(iter(train_dataset))
        if self.args.completion_only_loss is None:
            self.completion_only_loss = "prompt" in sample and "completion" in sample
        else:
            self.completion_only_loss = self.args.completion_only_loss
        if self.args.assistant_only_loss and not is_conversational(sample):
            raise ValueError("You set `assistant_only_loss=True`, but the dataset is not conversational.")
        if "conversations" in sample:
            raise ContractError("a from/value data set: TRL converts it (maybe_convert_to_chatml); the export writes role/content")

    def train(self):
        examples, trained = 0, 0
        rendered = [0]
        for i, ex in enumerate(self.dataset):
            if not is_conversational(ex):
                fail(i, "not conversational (keys %s)" % sorted(ex))
            tools = check_tools(i, ex.get("tools"))
            if "prompt" in ex:
                prompt, completion = ex["prompt"], ex.get("completion")
                if not isinstance(completion, list) or not completion:
                    fail(i, "a prompt without a completion")
                msgs = prompt + completion
                # Labels: assistant tokens, within the completion when
                # completion_only_loss.
                span = completion if self.completion_only_loss else msgs
            else:
                msgs = ex["messages"]
                span = msgs
            check_messages(i, msgs, tools)
            if jinja2 is not None:
                raw = ex.get("tools")
                text = render(msgs, json.loads(raw) if isinstance(raw, str) else raw)
                for m in msgs:
                    for c in m.get("tool_calls") or []:
                        for k, v in c["function"]["arguments"].items():
                            if "<parameter=%s>%s</parameter>" % (k, json.dumps(v, ensure_ascii=False)) not in text:
                                fail(i, "the template did not render %s's argument %s" % (c["function"]["name"], k))
                rendered[0] += 1
            if self.args.assistant_only_loss:
                if not any(m["role"] == "assistant" for m in msgs):
                    raise RuntimeError("example %d has no assistant tokens" % i)
                labelled = [m for m in span if m["role"] == "assistant"]
            else:
                labelled = span
            if not labelled:
                continue  # dropped: fully masked
            examples += 1
            trained += len(labelled)
        print("trl contract: %d examples train, %d messages labelled" % (examples, trained))
        if jinja2 is not None:
            print("rendered with toolcall.jinja: %d examples" % rendered[0])
        return examples
