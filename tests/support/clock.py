"""How fast the test sandboxes live: ten times faster than life, so backoffs, probes, grace
periods and node heartbeats pass in a tenth of the real time and no test waits real minutes.
The sandbox fixtures (tests/conftest.py) start every sandbox at `RATE`; a test that starts its
own sandbox, or converts cluster time to wall time, uses the same number."""

RATE = 10.0
