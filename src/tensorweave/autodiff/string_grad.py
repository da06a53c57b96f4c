"""String ops have no gradient (TF's string_ops.py NotDifferentiable lines)."""

from tensorweave.autodiff.registry import NotDifferentiable

for _name in ("StringSplit", "StringSplitV2", "Substr", "RegexReplace", "StaticRegexReplace",
              "RegexFullMatch", "StaticRegexFullMatch", "ReduceJoin", "AsString",
              "StringLength", "StringStrip", "StringUpper", "StringLower", "StringFormat",
              "PrintV2"):
    NotDifferentiable(_name)
