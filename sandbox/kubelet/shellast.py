"""The syntax tree of a shell script, as `shellsyntax` parses it and `shellprocess` walks it.

Words are kept as their parts (`Text`, `Param`, `Arith`, `Substitution`) so that expansion
happens when the command runs, each time it runs (a loop's `tick $i`), and so that what was
quoted is known (quoted text is never split nor globbed). Commands are the POSIX shapes; a
`Script` is a list of and-or lists. Frozen dataclasses only: no behaviour here.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- words --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str
    quoted: bool = False  # quoted text is never split nor globbed


@dataclass(frozen=True)
class Param:
    name: str  # a variable, a digit, or one of ? $ # @ * ! - 0
    op: str = ""  # "", "len", or an operator: :- - := = :+ + :? ? # ## % %%
    arg: Word = ()
    quoted: bool = False


@dataclass(frozen=True)
class Arith:
    expression: Word  # expanded first (variables, substitutions), then evaluated
    quoted: bool = False


@dataclass(frozen=True)
class Substitution:
    script: Script
    quoted: bool = False


Part = Text | Param | Arith | Substitution
Word = tuple[Part, ...]


def literal(word: Word) -> str | None:
    """The word's text when it is plain, unquoted text (how reserved words are recognized)."""
    if len(word) == 1 and isinstance(word[0], Text) and not word[0].quoted:
        return word[0].text
    return None


# -- commands -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Redirect:
    fd: int  # the descriptor redirected: 0 stdin, 1 stdout, 2 stderr, -1 both (&>)
    op: str  # ">", ">>", "<", ">&", "<&"
    target: Word


@dataclass(frozen=True)
class Simple:
    assignments: tuple[tuple[str, Word], ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()


@dataclass(frozen=True)
class If:
    branches: tuple[tuple[Script, Script], ...]  # (condition, body) for if and each elif
    otherwise: Script | None = None


@dataclass(frozen=True)
class Loop:
    until: bool
    condition: Script
    body: Script


@dataclass(frozen=True)
class For:
    name: str
    words: tuple[Word, ...] | None  # None: `for NAME; do`, over the positional parameters
    body: Script


@dataclass(frozen=True)
class Case:
    word: Word
    arms: tuple[tuple[tuple[Word, ...], Script], ...]


@dataclass(frozen=True)
class Group:
    body: Script
    subshell: bool  # ( ... ): its variables and cwd do not outlive it


@dataclass(frozen=True)
class Function:
    name: str
    body: Command


@dataclass(frozen=True)
class Redirected:
    command: Command
    redirects: tuple[Redirect, ...]


Command = Simple | If | Loop | For | Case | Group | Function | Redirected


@dataclass(frozen=True)
class Pipeline:
    commands: tuple[Command, ...]
    negated: bool = False


@dataclass(frozen=True)
class AndOr:
    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...] = ()  # ("&&" or "||", pipeline)


Script = tuple[AndOr, ...]  # `&` runs in the foreground here: the sandbox has no job control
