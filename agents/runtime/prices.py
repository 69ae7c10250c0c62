"""The list prices every agent prices a saving at: USD per vCPU month and per GiB month.

Shared because two agents weigh the same resources: the Cluster Operator's capacity review
(downscales, right-sizing, node consolidation) and the Dev Team's right-sizing of one
workload. Both price from here, so a saving reads the same whichever agent proposes it, and
neither reaches into the other's code for the numbers. An on-demand list-price estimate for
ranking proposals and for the owners to weigh, not a bill: nothing here knows a cloud, an
account or a discount, nor which agent asks.
"""

from __future__ import annotations

PRICES = {"cpu": 25.0, "memory_gib": 3.5}  # USD per month: per vCPU, per GiB of memory
