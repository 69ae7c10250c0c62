"""Numbers as people write them in words: "two", "a couple", "twelve".

Both grammars (questions and changes) start from this table and add the words that mean a
number only in their own sentences ("a" is one replica in "add a replica", but not one row in
"list a few pods").

Must not know: any agent, the cluster, any grammar.
"""

from __future__ import annotations

WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "couple": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "dozen": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "fifty": 50,
    "hundred": 100,
}
