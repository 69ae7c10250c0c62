"""Label and field selectors: parsed from query strings or `metav1.LabelSelector`, then matched.

The grammar, the validation of keys and values, the matching rules and the canonical string form
follow Kubernetes' own selector packages, so `?labelSelector=` and `?fieldSelector=` behave as on
a real API server, and a bad selector fails with a 400 that says what is wrong and where.

Two deliberate normalisations: `a==b` is stored as `a=b`, and requirements are kept sorted (by
key, operator, values), so equal selectors compare and hash equal whatever order they were
written in. `str()` gives the canonical form, which parses back to an equal selector; the one
exception is the selector of a nil `metav1.LabelSelector`, which matches nothing and, as in
Kubernetes, prints as "" (the text for "everything"), because the syntax has no word for nothing.

    requirements.py   one label requirement: validation and matching
    label_syntax.py   the text grammar of label selectors
    labels.py         LabelSelector
    fields.py         FieldSelector and the selectable fields of each kind

Knows which fields each kind can be selected by, but nothing of storage or HTTP.
"""

from sandbox.selectors.fields import SUPPORTED_FIELDS, FieldRequirement, FieldSelector, field_value
from sandbox.selectors.labels import LabelSelector
from sandbox.selectors.requirements import Operator, Requirement

__all__ = [
    "SUPPORTED_FIELDS",
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Operator",
    "Requirement",
    "field_value",
]
