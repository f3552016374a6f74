"""A stand-in for Hugging Face `datasets`, enough to run docs/sft.md's TRL
recipe offline. It keeps what decides whether a trainer sees the records
as written:

- `Dataset.from_list(rows, features=...)` encodes each row by its features
  as `Features.encode_example` does: a struct (a dict of features) has
  exactly its fields, a missing one None, an undeclared one dropped;
  `Value` holds a scalar; `List(f)` a list of f; `Json()` any JSON value as
  it is (datasets >= 4.7, TRL's docs/source/dataset_formats.md, "Tool
  Calling").
- without features (`from_list(rows)`, `load_dataset("json", ...)`) the
  type is inferred over all rows as Arrow does: dicts become one struct
  whose fields are the union of every row's keys, each row filled with
  None where it lacks one. That is what turns a tool call's arguments
  {"ref": 5} into {"ref": 5, "url": None, "command": None, ...}.
"""

import json


class Value:
    def __init__(self, dtype):
        self.dtype = dtype

    def encode(self, v):
        if v is None:
            return None
        if self.dtype == "string":
            if not isinstance(v, str):
                raise TypeError("Value('string') got %r" % (v,))
            return v
        if self.dtype == "bool":
            if not isinstance(v, bool):
                raise TypeError("Value('bool') got %r" % (v,))
            return v
        if self.dtype.startswith("int"):
            return int(v)
        return v


class Json:
    def encode(self, v):
        return v


class List:
    def __init__(self, feature):
        self.feature = feature

    def encode(self, v):
        if v is None:
            return None
        if not isinstance(v, list):
            raise TypeError("List got %r" % (v,))
        return [encode(self.feature, x) for x in v]


class Features(dict):
    def encode_example(self, row):
        return {k: encode(f, row.get(k)) for k, f in self.items()}


def encode(feature, v):
    if isinstance(feature, dict):
        if v is None:
            return None
        if not isinstance(v, dict):
            raise TypeError("a struct got %r" % (v,))
        return {k: encode(f, v.get(k)) for k, f in feature.items()}
    return feature.encode(v)


def infer(values):
    """The feature Arrow infers for a column of values."""
    values = [v for v in values if v is not None]
    if not values:
        return Value("null")
    if all(isinstance(v, dict) for v in values):
        keys = []
        for v in values:
            for k in v:
                if k not in keys:
                    keys.append(k)
        return {k: infer([v.get(k) for v in values]) for k in keys}
    if all(isinstance(v, list) for v in values):
        return List(infer([x for v in values for x in v]))
    if any(isinstance(v, (dict, list)) for v in values):
        raise TypeError("mixed types in a column: %r" % (values[:3],))
    return Value("any")


class Dataset:
    def __init__(self, rows):
        self.rows = rows
        self.column_names = list(rows[0].keys()) if rows else []

    @classmethod
    def from_list(cls, rows, features=None, on_mixed_types=None):
        if features is None:
            keys = []
            for r in rows:
                keys += [k for k in r if k not in keys]
            features = Features({k: infer([r.get(k) for r in rows]) for k in keys})
        return cls([features.encode_example(r) for r in rows])

    def select_columns(self, names):
        return Dataset([{k: r[k] for k in names} for r in self.rows])

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)


def load_dataset(kind, data_files=None, split=None):
    if kind != "json":
        raise ValueError("this stand-in loads json only")
    with open(data_files) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    features = Features({k: infer([r.get(k) for r in rows]) for k in keys})
    return Dataset([features.encode_example(r) for r in rows])
