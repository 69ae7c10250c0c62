"""`stringData` is write-only: folded into base64 `data`, never stored or returned."""

from __future__ import annotations

import base64

from tests.support.simulation import Simulation

SECRET = """
apiVersion: v1
kind: Secret
metadata: {name: db}
data: {user: YWRtaW4=, password: b2xk}
stringData: {password: s3cret, host: db.local}
"""


def test_string_data_is_folded_into_data_and_wins_over_the_same_key() -> None:
    sim = Simulation()
    (secret,) = sim.apply(SECRET)
    assert "stringData" not in secret
    decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert decoded == {"user": "admin", "password": "s3cret", "host": "db.local"}
    assert "stringData" not in sim.get("secrets", "default", "db")
