"""Properties of label selectors and maintenance windows, checked over generated inputs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.policy.documents.selectors import LabelSelector, Requirement, TargetSelector
from core.policy.documents.windows import WEEKDAYS, MaintenanceWindow

keys = st.sampled_from(["app", "tier", "team", "kubecrew.io/tier", "k8s-app"])
values = st.sampled_from(["web", "api", "front", "back", "critical"])
label_sets = st.dictionaries(keys, values, max_size=5)
requirements = st.builds(
    Requirement,
    key=keys,
    operator=st.sampled_from(["In", "NotIn"]),
    values=st.lists(values, min_size=1, max_size=3),
) | st.builds(Requirement, key=keys, operator=st.sampled_from(["Exists", "DoesNotExist"]))


@given(labels=label_sets, data=st.data())
def test_a_selector_of_some_of_an_objects_labels_selects_it(
    labels: dict[str, str], data: st.DataObject
) -> None:
    chosen = data.draw(st.lists(st.sampled_from(sorted(labels)), unique=True)) if labels else []
    selector = LabelSelector(matchLabels={key: labels[key] for key in chosen})
    assert selector.matches(labels)
    assert TargetSelector(labelSelector=selector).matches(kind="Pod", namespace="x", labels=labels)


@given(labels=label_sets, requirement=requirements)
def test_each_operator_is_the_negation_of_its_opposite(
    labels: dict[str, str], requirement: Requirement
) -> None:
    opposite: dict[str, Any] = {
        "In": "NotIn",
        "NotIn": "In",
        "Exists": "DoesNotExist",
        "DoesNotExist": "Exists",
    }
    other = Requirement(
        key=requirement.key, operator=opposite[requirement.operator], values=requirement.values
    )
    assert requirement.matches(labels) != other.matches(labels)


@given(labels=label_sets, base=st.lists(requirements, max_size=3), extra=requirements)
def test_a_requirement_more_never_selects_more(
    labels: dict[str, str], base: list[Requirement], extra: Requirement
) -> None:
    wider = LabelSelector(matchExpressions=base)
    narrower = LabelSelector(matchExpressions=[*base, extra])
    assert not narrower.matches(labels) or wider.matches(labels)


clocks = st.builds(
    lambda h, m: f"{h:02d}:{m:02d}", st.integers(0, 23), st.sampled_from([0, 15, 30, 45])
)
spans = st.tuples(clocks, clocks | st.just("24:00")).filter(lambda span: span[0] != span[1])
zones = st.sampled_from(
    ["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]
)
windows = st.builds(
    lambda days, span, zone: MaintenanceWindow(
        name="w", days=days, start=span[0], end=span[1], timezone=zone
    ),
    st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True),
    spans,
    zones,
)
instants = st.datetimes(
    min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31), timezones=st.just(UTC)
)


@settings(max_examples=300, deadline=None)
@given(window=windows, now=instants)
def test_the_next_opening_is_open_and_nothing_opens_before_it(
    window: MaintenanceWindow, now: datetime
) -> None:
    opening = window.next_opening(now)
    if window.is_open(now):
        assert opening == now
        return
    assert opening is not None, "a weekly window opens within two weeks"
    opens = opening.astimezone(UTC)
    assert opens > now and window.is_open(opens)
    assert not window.is_open(opens - timedelta(seconds=1))
    for step in range(1, 16):
        between = now + (opens - now) * step / 16
        assert not window.is_open(between), f"open at {between}, before {opens}"


@given(window=windows, now=instants)
def test_being_open_does_not_depend_on_how_the_instant_is_written(
    window: MaintenanceWindow, now: datetime
) -> None:
    from zoneinfo import ZoneInfo

    assert window.is_open(now) == window.is_open(now.astimezone(ZoneInfo("Pacific/Kiritimati")))


def test_a_window_that_starts_in_a_skipped_hour_opens_when_the_clocks_jump() -> None:
    window = MaintenanceWindow(
        name="w", days=["Sun"], start="02:30", end="04:00", timezone="Europe/Paris"
    )
    saturday = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
    assert window.next_opening(saturday) == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    gone = MaintenanceWindow(
        name="w", days=["Sun"], start="02:15", end="02:45", timezone="Europe/Paris"
    )
    assert window.describe() == "Sun 02:30-04:00 (Europe/Paris)"
    assert gone.next_opening(saturday) == datetime(2026, 4, 5, 0, 15, tzinfo=UTC)


def test_a_window_past_midnight_belongs_to_the_day_it_opens() -> None:
    window = MaintenanceWindow(name="w", days=["Fri"], start="22:00", end="06:00", timezone="UTC")
    assert window.is_open(datetime(2026, 12, 5, 5, 59, tzinfo=UTC))  # Saturday morning
    assert not window.is_open(datetime(2026, 12, 5, 22, 0, tzinfo=UTC))  # Saturday night
    assert not window.is_open(datetime(2026, 12, 4, 6, 0, tzinfo=UTC))  # Friday morning
