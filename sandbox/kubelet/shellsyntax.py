"""The shell grammar both simulated shells read: script text in, a `shellast` tree out.

A container's command (`commands.py`, a process over time) and an exec (`shell.py`, a process
with stdin and stdout) must mean the same by the same script, so they parse it here, once, and
walk the same tree (`shellprocess.py`). Parsed: lists (`;`, newline, `&&`, `||`, `&`),
pipelines (`|`, `!`), simple commands with assignments and redirections (`>`, `>>`, `<`,
`2>&1`, `>&2`, `&>`, `N>file`), `if/elif/else/fi`, `while`/`until ... do ... done`,
`for NAME [in WORDS]; do ... done`, `case WORD in pat|pat) ... ;; esac`, `{ ...; }` and
`( ... )` groups, functions `name() { ...; }`; words with single and double quotes, backslash
escapes, `$NAME`, `${NAME}`, `${NAME:-x}` (and `-`, `=`, `:=`, `+`, `:+`, `?`, `:?`, `#`, `##`,
`%`, `%%`), `${#NAME}`, the special parameters, `$((arithmetic))`, `$(command)` and backticks.
Refused with a `ShellSyntaxError` that names it: here-documents (`<<`), which the sandbox does
not simulate. Syntax errors read as BusyBox ash reports them (`syntax error: unexpected end of
file (expecting "fi")`). Pure: text in, frozen dataclasses out; nothing runs here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

from sandbox.kubelet.shellast import (
    AndOr,
    Arith,
    Case,
    Command,
    For,
    Function,
    Group,
    If,
    Loop,
    Param,
    Part,
    Pipeline,
    Redirect,
    Redirected,
    Script,
    Simple,
    Substitution,
    Text,
    Word,
    literal,
)

MAX_NESTING = 50  # nested constructs and substitutions one script may hold


class ShellSyntaxError(Exception):
    """The script cannot be read; the message is what sh prints after `sh: `."""


# -- the parser ---------------------------------------------------------------------------------

_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "(", ")", "\n")
_REDIRECT = re.compile(r"(\d?)(>>|>&|>\||<&|<<|<>|>|<)|(&>>?)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL = "?$#@*!-0123456789"
_PARAM_OPS = (":-", ":=", ":+", ":?", "##", "%%", "-", "=", "+", "?", "#", "%")
_META = " \t\n;&|()<>"
_RESERVED_ENDS = {"then", "else", "elif", "fi", "do", "done", "esac", "}"}


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "op", "redirect", "eof"
    text: str = ""  # an operator, a redirect's operator, or a word's literal text if plain
    word: Word = ()
    fd: int = 1


def parse(text: str) -> Script:
    try:
        return _Parser(text).whole()
    except RecursionError:
        raise ShellSyntaxError("sandbox: script nests too deeply") from None


class _Parser:
    def __init__(self, text: str, depth: int = 0) -> None:
        self.text = text
        self.pos = 0
        self.depth = depth
        self._peeked: tuple[_Token, int] | None = None
        if depth > MAX_NESTING:
            raise ShellSyntaxError("sandbox: script nests too deeply")

    # -- tokens -------------------------------------------------------------------------------

    def peek(self) -> _Token:
        if self._peeked is None:
            start = self.pos
            token = self._lex()
            self._peeked, self.pos = (token, self.pos), start
        return self._peeked[0]

    def take(self) -> _Token:
        token = self.peek()
        assert self._peeked is not None
        self.pos, self._peeked = self._peeked[1], None
        return token

    def reserved(self, *names: str) -> bool:
        token = self.peek()
        return token.kind == "word" and literal(token.word) in names

    def expect(self, name: str) -> None:
        token = self.take()
        if not (token.kind == "word" and literal(token.word) == name) and not (
            token.kind == "op" and token.text == name
        ):
            self.unexpected(token, f'"{name}"')

    def unexpected(self, token: _Token, expecting: str = "") -> NoReturn:
        if token.kind == "eof":
            what = "end of file"
        elif token.text == "\n":
            what = "newline"
        else:
            what = f'"{token.text}"'
        suffix = f" (expecting {expecting})" if expecting else ""
        raise ShellSyntaxError(f"syntax error: unexpected {what}{suffix}")

    def _lex(self) -> _Token:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t":
                self.pos += 1
            elif text.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                break
        if self.pos >= len(text):
            return _Token("eof")
        if match := _REDIRECT.match(text, self.pos):
            self.pos = match.end()
            if match.group(3):
                return _Token("redirect", match.group(3), fd=-1)
            op = match.group(2)
            if op == "<<":
                raise ShellSyntaxError("here-documents (<<) are not simulated by the sandbox")
            default = 0 if op.startswith("<") else 1
            op = {">|": ">", "<>": "<"}.get(op, op)
            return _Token("redirect", op, fd=int(match.group(1) or default))
        for op in _OPERATORS:
            if text.startswith(op, self.pos):
                self.pos += len(op)
                return _Token("op", op)
        word = self.word()
        return _Token("word", literal(word) or "", word)

    # -- words --------------------------------------------------------------------------------

    def word(self, *, until: str = "") -> Word:
        """One word from here: up to unquoted whitespace or an operator (or `until`, inside
        `${...}`, where whitespace and operators are part of the word)."""
        parts: list[Part] = []
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if (until and char in until) or (not until and char in _META):
                break
            if char == "\\":
                if text.startswith("\\\n", self.pos):
                    self.pos += 2
                    continue
                parts.append(Text(text[self.pos + 1 : self.pos + 2], quoted=True))
                self.pos += 2
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("syntax error: unterminated quoted string")
                parts.append(Text(text[self.pos + 1 : end], quoted=True))
                self.pos = end + 1
            elif char == '"':
                self.pos += 1
                parts.extend(self._double_quoted())
            elif char == "$" or char == "`":
                parts.append(self._expansion(quoted=False))
            else:
                parts.append(Text(char))
                self.pos += 1
        return _merged(parts)

    def _double_quoted(self) -> list[Part]:
        parts: list[Part] = []
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                return parts
            if char == "\\" and text[self.pos + 1 : self.pos + 2] in ('"', "\\", "$", "`", "\n"):
                escaped = text[self.pos + 1]
                parts.append(Text("" if escaped == "\n" else escaped, quoted=True))
                self.pos += 2
            elif char == "$" or char == "`":
                parts.append(self._expansion(quoted=True))
            else:
                parts.append(Text(char, quoted=True))
                self.pos += 1
        raise ShellSyntaxError("syntax error: unterminated quoted string")

    def _expansion(self, *, quoted: bool) -> Part:
        text, start = self.text, self.pos
        if text[start] == "`":
            return Substitution(self._backquoted(), quoted)
        if text.startswith("$((", start):
            end = _arithmetic_end(text, start + 3)
            if end is not None:
                inner = _Parser(text[start + 3 : end], self.depth + 1)
                self.pos = end + 2
                return Arith(inner.string(), quoted)
        if text.startswith("$(", start):
            inner = _Parser(text, self.depth + 1)
            inner.pos = start + 2
            script = inner.compound_list()
            inner.expect(")")
            self.pos = inner.pos
            return Substitution(script, quoted)
        if text.startswith("${", start):
            self.pos = start + 2
            return self._braced(quoted)
        name = _NAME.match(text, start + 1)
        if name:
            self.pos = name.end()
            return Param(name.group(), quoted=quoted)
        if text[start + 1 : start + 2] and text[start + 1] in _SPECIAL:
            self.pos = start + 2
            return Param(text[start + 1], quoted=quoted)
        self.pos = start + 1
        return Text("$", quoted)

    def _braced(self, quoted: bool) -> Part:
        text = self.text
        length = text.startswith("#", self.pos) and not text.startswith("#}", self.pos)
        self.pos += length
        name = _NAME.match(text, self.pos)
        if name:
            self.pos = name.end()
            found = name.group()
        elif self.pos < len(text) and text[self.pos] in _SPECIAL:
            found = text[self.pos]
            self.pos += 1
        else:
            raise ShellSyntaxError("syntax error: bad substitution")
        if length:
            op = "len"
        else:
            op = next((o for o in _PARAM_OPS if text.startswith(o, self.pos)), "")
            self.pos += len(op)
        arg = self.word(until="}") if op and op != "len" else ()
        if not text.startswith("}", self.pos):
            raise ShellSyntaxError("syntax error: bad substitution")
        self.pos += 1
        return Param(found, op, arg, quoted)

    def _backquoted(self) -> Script:
        text, position = self.text, self.pos + 1
        inner: list[str] = []
        while position < len(text) and text[position] != "`":
            if text[position] == "\\" and text[position + 1 : position + 2] in ("`", "\\", "$"):
                position += 1
            inner.append(text[position])
            position += 1
        if position >= len(text):
            raise ShellSyntaxError("syntax error: unterminated quoted string")
        self.pos = position + 1
        return _Parser("".join(inner), self.depth + 1).whole()

    def string(self) -> Word:
        """All the text as one double-quoted word (the inside of `$((...))`)."""
        parts: list[Part] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in "$`":
                parts.append(self._expansion(quoted=True))
            else:
                parts.append(Text(char, quoted=True))
                self.pos += 1
        return _merged(parts)

    def whole(self) -> Script:
        script = self.compound_list()
        token = self.peek()
        if token.kind != "eof":
            self.unexpected(token)
        return script

    # -- commands -----------------------------------------------------------------------------

    def compound_list(self) -> Script:
        """And-or lists separated by `;`, `&` or newlines, up to a reserved word that closes
        a construct (`then`, `fi`, `done`, `}`, ...), a `)`, a `;;` or the end."""
        items: list[AndOr] = []
        while True:
            token = self.peek()
            if token.kind == "op" and token.text in (";", "&", "\n"):
                if token.text != "\n" and not items:
                    self.unexpected(token)
                self.take()
                continue
            if token.kind == "eof" or (token.kind == "op" and token.text in (")", ";;")):
                return tuple(items)
            if token.kind == "word" and literal(token.word) in _RESERVED_ENDS:
                return tuple(items)
            items.append(self._and_or())
            after = self.peek()
            if after.kind == "word" and literal(after.word) not in _RESERVED_ENDS:
                self.unexpected(after)
            if after.kind in ("op", "redirect") and after.text in ("(", "|", "&&", "||"):
                self.unexpected(after)

    def _and_or(self) -> AndOr:
        first = self._pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while (token := self.peek()).kind == "op" and token.text in ("&&", "||"):
            self.take()
            self._newlines()
            rest.append((token.text, self._pipeline()))
        return AndOr(first, tuple(rest))

    def _newlines(self) -> None:
        while (token := self.peek()).kind == "op" and token.text in ("\n", ";"):
            if token.text == ";":
                self.unexpected(token)
            self.take()

    def _pipeline(self) -> Pipeline:
        negated = self.reserved("!")
        if negated:
            self.take()
        commands = [self._command()]
        while (token := self.peek()).kind == "op" and token.text == "|":
            self.take()
            self._newlines()
            commands.append(self._command())
        return Pipeline(tuple(commands), negated)

    def _command(self) -> Command:
        token = self.peek()
        if token.kind == "eof" or (token.kind == "op" and token.text != "("):
            self.unexpected(token)
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ShellSyntaxError("sandbox: script nests too deeply")
        found = self._compound(token)
        self.depth -= 1
        if found is None:
            return self._simple()
        redirects = self._redirects()
        return Redirected(found, redirects) if redirects else found

    def _compound(self, token: _Token) -> Command | None:
        if token.kind == "op":  # "("
            self.take()
            body = self.compound_list()
            self.expect(")")
            return Group(body, subshell=True)
        keyword = literal(token.word) if token.kind == "word" else None
        if keyword not in ("if", "while", "until", "for", "case", "{"):
            return None
        self.take()
        if keyword == "if":
            return self._if()
        if keyword in ("while", "until"):
            condition = self.compound_list()
            return Loop(keyword == "until", condition, self._do())
        if keyword == "for":
            return self._for()
        if keyword == "case":
            return self._case()
        body = self.compound_list()
        self.expect("}")
        return Group(body, subshell=False)

    def _if(self) -> If:
        branches: list[tuple[Script, Script]] = []
        otherwise: Script | None = None
        while True:
            condition = self.compound_list()
            self.expect("then")
            branches.append((condition, self.compound_list()))
            token = self.take()
            keyword = literal(token.word) if token.kind == "word" else None
            if keyword == "elif":
                continue
            if keyword == "else":
                otherwise = self.compound_list()
                self.expect("fi")
            elif keyword != "fi":
                self.unexpected(token, '"fi"')
            return If(tuple(branches), otherwise)

    def _do(self) -> Script:
        self.expect("do")
        body = self.compound_list()
        self.expect("done")
        return body

    def _for(self) -> For:
        name = self.take()
        if name.kind != "word" or not _NAME.fullmatch(name.text):
            self.unexpected(name)
        words: list[Word] | None = None
        self._separators()
        if self.reserved("in"):
            self.take()
            words = []
            while self.peek().kind == "word":
                words.append(self.take().word)
        self._separators()
        return For(name.text, None if words is None else tuple(words), self._do())

    def _separators(self) -> None:
        while (token := self.peek()).kind == "op" and token.text in ("\n", ";"):
            self.take()

    def _case(self) -> Case:
        subject = self.take()
        if subject.kind != "word":
            self.unexpected(subject)
        self._newlines()
        self.expect("in")
        arms: list[tuple[tuple[Word, ...], Script]] = []
        while True:
            self._newlines()
            if self.reserved("esac"):
                self.take()
                return Case(subject.word, tuple(arms))
            if (token := self.peek()).kind == "op" and token.text == "(":
                self.take()
            patterns = [self._pattern()]
            while (token := self.peek()).kind == "op" and token.text == "|":
                self.take()
                patterns.append(self._pattern())
            self.expect(")")
            arms.append((tuple(patterns), self.compound_list()))
            token = self.peek()
            if token.kind == "op" and token.text == ";;":
                self.take()
            elif not self.reserved("esac"):
                self.unexpected(token, '"esac"' if token.kind == "eof" else "")

    def _pattern(self) -> Word:
        token = self.take()
        if token.kind != "word":
            self.unexpected(token, '"esac"' if token.kind == "eof" else "")
        return token.word

    def _redirects(self) -> tuple[Redirect, ...]:
        redirects: list[Redirect] = []
        while self.peek().kind == "redirect":
            redirects.append(self._redirect())
        return tuple(redirects)

    def _redirect(self) -> Redirect:
        token = self.take()
        target = self.take()
        if target.kind != "word":
            self.unexpected(target)
        return Redirect(token.fd, token.text, target.word)

    def _simple(self) -> Command:
        assignments: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            token = self.peek()
            if token.kind == "redirect":
                redirects.append(self._redirect())
            elif token.kind == "word":
                assignment = None if words else _assignment(token.word)
                self.take()
                if assignment is not None:
                    assignments.append(assignment)
                elif not words and not assignments and self._function_follows():
                    return self._function(token)
                else:
                    words.append(token.word)
            else:
                break
        return Simple(tuple(assignments), tuple(words), tuple(redirects))

    def _function_follows(self) -> bool:
        rest = self.text[self.pos :].lstrip(" \t")
        return rest.startswith("(") and rest[1:].lstrip(" \t").startswith(")")

    def _function(self, name: _Token) -> Function:
        if not _NAME.fullmatch(name.text):
            self.unexpected(name)
        self.expect("(")
        self.expect(")")
        self._separators()
        body = self._compound(self.peek())
        if body is None:
            self.unexpected(self.peek())
        return Function(name.text, body)


def _assignment(word: Word) -> tuple[str, Word] | None:
    first = word[0] if word else None
    if not isinstance(first, Text) or first.quoted:
        return None
    name, equals, value = first.text.partition("=")
    if not equals or not _NAME.fullmatch(name):
        return None
    rest: Word = (Text(value),) if value else ()
    return name, (*rest, *word[1:])


def _merged(parts: list[Part]) -> Word:
    merged: list[Part] = []
    for part in parts:
        last = merged[-1] if merged else None
        if isinstance(part, Text) and isinstance(last, Text) and last.quoted == part.quoted:
            merged[-1] = Text(last.text + part.text, part.quoted)
        else:
            merged.append(part)
    return tuple(merged)


def _arithmetic_end(text: str, position: int) -> int | None:
    """Where the `))` closing `$((` is, or None when it is a `$( (...) )` substitution."""
    depth = 0
    while position < len(text):
        char = text[position]
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return position if text.startswith("))", position) else None
            depth -= 1
        position += 1
    raise ShellSyntaxError("syntax error: unterminated $((...))")
