"""How the sandbox makes names, the way Kubernetes does.

Generated names (`generateName`, a DaemonSet's or Job's pods, EndpointSlices) and template
hashes are spelled in one alphabet without vowels or look-alike digits, so no generated name
spells a word or reads ambiguously. Controllers draw suffixes from a seeded generator
(`Controller.random`), so a run repeats; the API's own `generateName` uses a secure one.
"""

from __future__ import annotations

import random

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
SUFFIX_LENGTH = 5


def random_suffix(rng: random.Random | random.SystemRandom) -> str:
    return "".join(rng.choice(SAFE_ALPHABET) for _ in range(SUFFIX_LENGTH))


def spell(value: int, *, length: int | None = None) -> str:
    """`value` written in the safe alphabet (digit by digit, or base-27 to `length` places)."""
    if length is None:
        return "".join(SAFE_ALPHABET[ord(d) % len(SAFE_ALPHABET)] for d in str(value))
    chars = []
    for _ in range(length):
        value, rest = divmod(value, len(SAFE_ALPHABET))
        chars.append(SAFE_ALPHABET[rest])
    return "".join(chars)
