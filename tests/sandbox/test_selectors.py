"""Label and field selectors: Kubernetes' grammar, errors, matching and canonical form.

Example tables pin the behaviour kubectl and the clients rely on; hypothesis properties check
that any valid selector parses, round-trips through `str()`, and matches exactly as a
brute-force reading of the same terms does.
"""

from __future__ import annotations

import re
import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox.errors import BadRequest
from sandbox.selectors import FieldSelector, LabelSelector

# -- label selector text ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        pytest.param("", "", id="empty"),
        pytest.param("   ", "", id="only-whitespace"),
        pytest.param("app=web", "app=web", id="equals"),
        pytest.param("app==web", "app=web", id="double-equals-normalised"),
        pytest.param("app!=web", "app!=web", id="not-equals"),
        pytest.param("app", "app", id="exists"),
        pytest.param("!app", "!app", id="does-not-exist"),
        pytest.param("tier in (b,a,b)", "tier in (a,b)", id="in-sorted-deduplicated"),
        pytest.param("tier notin (x)", "tier notin (x)", id="notin"),
        pytest.param("n>3", "n>3", id="greater-than"),
        pytest.param("n<3", "n<3", id="less-than"),
        pytest.param(" b = 1 ,\ta in(x , y)\n", "a in (x,y),b=1", id="whitespace-and-order"),
        pytest.param("a=", "a=", id="empty-value"),
        pytest.param("a in ()", "a in ()", id="in-empty-parens-means-empty-value"),
        pytest.param("a in (,x)", "a in (,x)", id="in-leading-empty-slot"),
        pytest.param("a in (x,,y)", "a in (,x,y)", id="in-double-comma"),
        pytest.param("in in (notin)", "in in (notin)", id="keywords-as-key-and-value"),
        pytest.param("example.com/app=v1.2_3-x", "example.com/app=v1.2_3-x", id="prefixed-key"),
        pytest.param("!a,a", "a,!a", id="same-key-kept-both"),
    ],
)
def test_label_selector_parses_to_canonical_form(text: str, canonical: str) -> None:
    assert str(LabelSelector.parse(text)) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            ",a",
            "found ',', expected: !, identifier, or 'end of string' (column 1",
            id="lead-comma",
        ),
        pytest.param(
            "a,", "found end of string, expected: identifier after ',' (column 3", id="trail-comma"
        ),
        pytest.param(
            "a=b=c", "found '=', expected: ',' or 'end of string' (column 4", id="two-equals"
        ),
        pytest.param(
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
            id="no-operator",
        ),
        pytest.param(
            "a in x",
            "unable to parse requirement: found 'x', expected: '(' (column 6",
            id="in-without-parens",
        ),
        pytest.param(
            "a in ((x)", "found '(', expected: ',', ')' or identifier (column 7", id="double-paren"
        ),
        pytest.param("a in (x y)", "found 'y', expected: ',' or ')' (column 9", id="missing-comma"),
        pytest.param("a in (x", "found end of string, expected: ',' or ')'", id="unclosed"),
        pytest.param("a=(b)", "found '(', expected: identifier (column 3", id="paren-value"),
        pytest.param(
            "!a=b", "found '=', expected: ',' or 'end of string'", id="not-exists-with-value"
        ),
        pytest.param("!", "found end of string, expected: identifier", id="bare-bang"),
        pytest.param(
            "a/b/c", 'key: Invalid value: "a/b/c": a qualified name must consist', id="two-slashes"
        ),
        pytest.param(
            "-a=b", "name part must consist of alphanumeric characters", id="key-leading-dash"
        ),
        pytest.param(
            "a=-b",
            'values[0][a]: Invalid value: "-b": a valid label must be an empty',
            id="bad-value",
        ),
        pytest.param("a=" + "v" * 64, "must be no more than 63 characters", id="value-too-long"),
        pytest.param(
            "n>x", "for 'Gt', 'Lt' operators, the value must be an integer", id="gt-not-integer"
        ),
        pytest.param(
            "n<99999999999999999999", "the value must be an integer", id="lt-overflows-int64"
        ),
    ],
)
def test_label_selector_syntax_errors_say_what_and_where(text: str, message: str) -> None:
    with pytest.raises(BadRequest) as caught:
        LabelSelector.parse(text)
    assert message in caught.value.message
    assert caught.value.code == 400


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        pytest.param("app=web", {"app": "web"}, True, id="equals-hit"),
        pytest.param("app=web", {"app": "db"}, False, id="equals-miss"),
        pytest.param("app=web", {}, False, id="equals-absent"),
        pytest.param("app!=web", {}, True, id="not-equals-absent-matches"),
        pytest.param("app!=web", {"app": "web"}, False, id="not-equals-same"),
        pytest.param("app", {"app": ""}, True, id="exists-empty-value"),
        pytest.param("!app", {"app": "x"}, False, id="not-exists-present"),
        pytest.param("t in (a,b)", {"t": "b"}, True, id="in-hit"),
        pytest.param("t notin (a,b)", {}, True, id="notin-absent"),
        pytest.param("t notin (a,b)", {"t": "a"}, False, id="notin-hit"),
        pytest.param("n>3", {"n": "10"}, True, id="gt-numeric-not-lexical"),
        pytest.param("n>3", {"n": "3"}, False, id="gt-equal"),
        pytest.param("n<3", {"n": "-5"}, True, id="lt-negative-label"),
        pytest.param("n>3", {"n": "x"}, False, id="gt-non-integer-label"),
        pytest.param("n<3", {}, False, id="lt-absent"),
        pytest.param("a=", {"a": ""}, True, id="empty-value-hit"),
        pytest.param("a in ()", {"a": ""}, True, id="in-empty-parens"),
        pytest.param("a=1,b", {"a": "1"}, False, id="and-of-terms"),
        pytest.param("", {"anything": "x"}, True, id="empty-matches-all"),
    ],
)
def test_label_selector_matches_like_kubernetes(
    text: str, labels: dict[str, str], expected: bool
) -> None:
    assert LabelSelector.parse(text).matches(labels) is expected


def test_label_selector_matches_none_labels_as_empty() -> None:
    assert LabelSelector.parse("!a").matches(None)
    assert not LabelSelector.parse("a").matches(None)


def test_label_selectors_equal_and_hash_equal_whatever_the_order() -> None:
    one, two = LabelSelector.parse("b=1,a in (y,x)"), LabelSelector.parse("a in (x,y), b==1")
    assert one == two
    assert len({one, two}) == 1


# -- metav1.LabelSelector -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "labels", "expected", "empty"),
    [
        pytest.param(None, {}, False, False, id="nil-matches-nothing"),
        pytest.param({}, {"a": "b"}, True, True, id="empty-object-matches-everything"),
        pytest.param({"matchLabels": {"app": "web"}}, {"app": "web"}, True, False, id="labels"),
        pytest.param(
            {"matchExpressions": [{"key": "t", "operator": "In", "values": ["a", "b"]}]},
            {"t": "c"},
            False,
            False,
            id="in-miss",
        ),
        pytest.param(
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [
                    {"key": "t", "operator": "NotIn", "values": ["x"]},
                    {"key": "c", "operator": "Exists"},
                    {"key": "d", "operator": "DoesNotExist"},
                ],
            },
            {"app": "web", "c": "1"},
            True,
            False,
            id="all-operators",
        ),
        pytest.param({"matchExpressions": []}, {}, True, True, id="empty-lists"),
    ],
)
def test_label_selector_from_object_follows_nil_and_empty_semantics(
    selector: dict[str, Any] | None, labels: dict[str, str], expected: bool, empty: bool
) -> None:
    parsed = LabelSelector.from_object(selector)
    assert parsed.matches(labels) is expected
    assert parsed.empty is empty


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            '"Gt" is not a valid label selector operator',
            id="bad-operator",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            "values set can't be empty",
            id="in-without-values",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            "values set must be empty for exists and does not exist",
            id="exists-with-values",
        ),
        pytest.param({"matchLabels": {"a b": "c"}}, 'key: Invalid value: "a b"', id="bad-key"),
        pytest.param("app=web", "must be an object", id="not-an-object"),
    ],
)
def test_label_selector_from_object_rejects_invalid(selector: Any, message: str) -> None:
    with pytest.raises(BadRequest, match=re.escape(message)):
        LabelSelector.from_object(selector)


def test_label_selector_from_object_prints_like_the_text_form() -> None:
    selector = {"matchLabels": {"b": "2"}, "matchExpressions": [{"key": "a", "operator": "Exists"}]}
    assert str(LabelSelector.from_object(selector)) == "a,b=2"


# -- label selector properties ------------------------------------------------------------------

_ALNUM = st.sampled_from(string.ascii_letters + string.digits)
_LOWER = st.sampled_from(string.ascii_lowercase + string.digits)


def _bounded(ends: st.SearchStrategy[str], inner: str) -> st.SearchStrategy[str]:
    """Strings that start and end with a character from `ends`, as label syntax requires."""
    inside = st.text(alphabet=inner, max_size=8)
    return ends | st.builds(lambda a, mid, b: a + mid + b, ends, inside, ends)


_names = _bounded(_ALNUM, string.ascii_letters + string.digits + "-_.")
_dns_labels = _bounded(_LOWER, string.ascii_lowercase + string.digits + "-")
_keys = st.builds(
    lambda prefix, name: f"{prefix}/{name}" if prefix else name,
    st.none() | st.lists(_dns_labels, min_size=1, max_size=3).map(".".join),
    _names,
)
_values = st.just("") | _names
_whitespace = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def _terms(
    draw: st.DrawFn, keys: st.SearchStrategy[str], values: st.SearchStrategy[str]
) -> tuple[str, str, tuple[str, ...]]:
    key = draw(keys)
    op = draw(st.sampled_from(["=", "==", "!=", "exists", "!", "in", "notin", ">", "<"]))
    if op in ("exists", "!"):
        return key, op, ()
    if op in (">", "<"):
        return key, op, (str(draw(st.integers(0, 2**40))),)
    if op in ("in", "notin"):
        return key, op, tuple(draw(st.lists(values.filter(bool), min_size=1, max_size=4)))
    return key, op, (draw(values),)


def _render(term: tuple[str, str, tuple[str, ...]], ws: str) -> str:
    key, op, values = term
    if op == "exists":
        return key
    if op == "!":
        return f"!{ws}{key}"
    if op in ("in", "notin"):
        return f"{key} {op}{ws}({ws}{(ws + ',' + ws).join(values)}{ws})"
    return f"{key}{ws}{op}{ws}{values[0]}"


def _reference_match(terms: list[tuple[str, str, tuple[str, ...]]], labels: dict[str, str]) -> bool:
    """A direct reading of Kubernetes' matching rules, independent of the parser."""
    for key, op, values in terms:
        present, value = key in labels, labels.get(key, "")
        if op in ("=", "==", "in"):
            ok = present and value in values
        elif op in ("!=", "notin"):
            ok = not present or value not in values
        elif op == "exists":
            ok = present
        elif op == "!":
            ok = not present
        else:
            numeric = present and value.isdigit()
            ok = numeric and (
                int(value) > int(values[0]) if op == ">" else int(value) < int(values[0])
            )
        if not ok:
            return False
    return True


@given(st.lists(_terms(_keys, _values), max_size=5), _whitespace)
def test_generated_valid_label_selectors_always_parse(terms: list[Any], ws: str) -> None:
    text = f"{ws},{ws}".join(_render(t, ws) for t in terms)
    assert len(LabelSelector.parse(text).requirements) == len(terms)


@given(st.lists(_terms(_keys, _values), max_size=5), _whitespace)
def test_label_selector_round_trips_through_its_string_form(terms: list[Any], ws: str) -> None:
    selector = LabelSelector.parse(f"{ws},{ws}".join(_render(t, ws) for t in terms))
    assert LabelSelector.parse(str(selector)) == selector


_small_keys = st.sampled_from(["a", "b", "x.io/c"])
_small_values = st.sampled_from(["", "1", "2", "10", "v"])


@given(
    st.lists(_terms(_small_keys, _small_values), max_size=4),
    st.dictionaries(_small_keys, _small_values, max_size=3),
)
def test_label_selector_matches_agree_with_brute_force_reference(
    terms: list[Any], labels: dict[str, str]
) -> None:
    selector = LabelSelector.parse(",".join(_render(t, " ") for t in terms))
    assert selector.matches(labels) is _reference_match(terms, labels)


@given(st.text(alphabet=string.printable + "é", max_size=30))
def test_label_selector_parse_fails_only_with_bad_request(text: str) -> None:
    try:
        LabelSelector.parse(text)
    except BadRequest as err:
        assert err.message


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["", "a", "In", "Exists", "x/y"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["matchLabels", "matchExpressions", "key", "operator", "values", "a"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=10,
)


@given(_json)
def test_label_selector_from_any_json_fails_only_with_bad_request(selector: Any) -> None:
    try:
        LabelSelector.from_object(selector)
    except BadRequest as err:
        assert err.code == 400


# -- field selectors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        pytest.param("", "", id="empty"),
        pytest.param("metadata.name=web", "metadata.name=web", id="equals"),
        pytest.param("metadata.name==web", "metadata.name=web", id="double-equals"),
        pytest.param("status.phase!=Failed", "status.phase!=Failed", id="not-equals"),
        pytest.param("b=2,a=1", "a=1,b=2", id="sorted"),
        pytest.param(",,a=1,", "a=1", id="empty-terms-skipped"),
        pytest.param(r"a=x\,y\=z\\w", r"a=x\,y\=z\\w", id="escapes-kept-in-canonical-form"),
        pytest.param("a=", "a=", id="empty-value"),
    ],
)
def test_field_selector_parses_to_canonical_form(text: str, canonical: str) -> None:
    assert str(FieldSelector.parse(text)) == canonical


def test_field_selector_unescapes_values() -> None:
    (term,) = FieldSelector.parse(r"a=x\,y\=z\\w").requirements
    assert term.value == r"x,y=z\w"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("abc", "invalid selector: 'abc'; can't understand 'abc'", id="no-operator"),
        pytest.param("a=b=c", "unescaped character in value: '='", id="unescaped-equals"),
        pytest.param(r"a=b\x", r"invalid escape sequence: \x", id="unknown-escape"),
        pytest.param("a=b\\", "invalid escape sequence: \\ at the end", id="trailing-backslash"),
    ],
)
def test_field_selector_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(BadRequest) as caught:
        FieldSelector.parse(text)
    assert message in caught.value.message


_POD: dict[str, Any] = {
    "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "shop"},
    "spec": {"nodeName": "node1", "restartPolicy": "Always"},
    "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.7"}], "podIP": "10.0.0.7"},
}


@pytest.mark.parametrize(
    ("obj", "text", "expected"),
    [
        pytest.param(
            _POD, "metadata.name=web-1,metadata.namespace=shop", True, id="name-and-namespace"
        ),
        pytest.param(_POD, "spec.nodeName=node2", False, id="node-miss"),
        pytest.param(
            _POD, "status.phase!=Succeeded,status.phase!=Failed", True, id="describe-node-query"
        ),
        pytest.param(
            {"kind": "Pod"}, "status.phase!=Failed", True, id="missing-phase-compares-empty"
        ),
        pytest.param({"kind": "Pod"}, "spec.nodeName=", True, id="unscheduled-pods"),
        pytest.param(_POD, "spec.hostNetwork=false", True, id="absent-bool-is-false"),
        pytest.param(_POD, "status.podIP=10.0.0.7", True, id="pod-ip"),
        pytest.param(
            {"kind": "Node", "spec": {"unschedulable": True}},
            "spec.unschedulable=true",
            True,
            id="cordoned",
        ),
        pytest.param(
            {"kind": "ReplicaSet"}, "status.replicas=0", True, id="absent-counter-is-zero"
        ),
        pytest.param(
            {"kind": "Job", "status": {"succeeded": 2}},
            "status.successful=2",
            True,
            id="job-succeeded",
        ),
        pytest.param(
            {"kind": "Event", "source": {"component": "kubelet"}},
            "source=kubelet",
            True,
            id="event-source",
        ),
        pytest.param(
            {"kind": "Event", "involvedObject": {"name": "x", "uid": "u1"}},
            "involvedObject.name=x,involvedObject.uid=u1",
            True,
            id="event-involved-object",
        ),
        pytest.param(
            {"kind": "Secret", "type": "Opaque"}, "type=kubernetes.io/tls", False, id="secret-type"
        ),
    ],
)
def test_field_selector_matches_objects(obj: dict[str, Any], text: str, expected: bool) -> None:
    assert FieldSelector.parse(text).matches(obj) is expected


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        pytest.param("metadata.name=x", "metadata.name", "x", id="pinned"),
        pytest.param("metadata.name!=x", "metadata.name", None, id="negated-is-not-pinned"),
        pytest.param("spec.nodeName=n,metadata.name=y", "metadata.name", "y", id="among-others"),
        pytest.param("", "metadata.name", None, id="empty"),
    ],
)
def test_field_selector_single_value(text: str, field: str, expected: str | None) -> None:
    assert FieldSelector.parse(text).single_value(field) == expected


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        pytest.param("ConfigMap", "metadata.name=a,metadata.namespace=b", id="common-on-any-kind"),
        pytest.param("Pod", "spec.nodeName=n,status.phase=Running,spec.hostNetwork=true", id="pod"),
        pytest.param("Event", "involvedObject.kind=Pod,reason=Failed,type=Warning", id="event"),
        pytest.param("Secret", "type=Opaque", id="secret"),
        pytest.param("Node", "spec.unschedulable=true", id="node"),
        pytest.param("Namespace", "status.phase=Active", id="namespace"),
        pytest.param("ReplicaSet", "status.replicas=1", id="replicaset"),
        pytest.param("Job", "status.successful=1", id="job"),
    ],
)
def test_field_selector_accepts_supported_fields(kind: str, text: str) -> None:
    FieldSelector.parse(text).check_supported(kind)


@pytest.mark.parametrize(
    ("kind", "text", "field"),
    [
        pytest.param("Pod", "spec.foo=x", "spec.foo", id="unknown-pod-field"),
        pytest.param("Deployment", "status.phase=x", "status.phase", id="pod-field-on-deployment"),
        pytest.param("ConfigMap", "type=x", "type", id="secret-field-on-configmap"),
        pytest.param("Pod", "metadata.name =x", "metadata.name ", id="spaces-are-part-of-the-name"),
    ],
)
def test_field_selector_rejects_unsupported_fields(kind: str, text: str, field: str) -> None:
    with pytest.raises(BadRequest) as caught:
        FieldSelector.parse(text).check_supported(kind)
    assert caught.value.message == f"field label not supported: {field}"


_field_names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9.]{0,12}", fullmatch=True)
_field_terms = st.tuples(_field_names, st.sampled_from(["=", "!="]), st.text(max_size=12))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@given(st.lists(_field_terms, max_size=4))
def test_field_selector_round_trips_any_value_through_escapes(
    terms: list[tuple[str, str, str]],
) -> None:
    selector = FieldSelector.parse(",".join(f"{f}{op}{_escape(v)}" for f, op, v in terms))
    assert sorted((r.field, r.operator, r.value) for r in selector.requirements) == sorted(terms)
    assert FieldSelector.parse(str(selector)) == selector


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["metadata.name", "spec.nodeName"]),
            st.sampled_from(["=", "!="]),
            st.sampled_from(["", "a", "b"]),
        ),
        max_size=3,
    ),
    st.sampled_from(["", "a", "b", None]),
    st.sampled_from(["", "a", "b", None]),
)
def test_field_selector_matches_agree_with_brute_force_reference(
    terms: list[tuple[str, str, str]], name: str | None, node: str | None
) -> None:
    obj: dict[str, Any] = {"kind": "Pod", "metadata": {}, "spec": {}}
    if name is not None:
        obj["metadata"]["name"] = name
    if node is not None:
        obj["spec"]["nodeName"] = node
    have = {"metadata.name": name or "", "spec.nodeName": node or ""}
    expected = all((have[f] == v) == (op == "=") for f, op, v in terms)
    assert (
        FieldSelector.parse(",".join(f"{f}{op}{v}" for f, op, v in terms)).matches(obj) is expected
    )
