"""A small, safe interpreter for the Python scripts people mount into containers and run.

`python /etc/config/app.py` or `python -c "..."` in a manifest must show in `kubectl logs` what
the real script would print, when it would print it, and end as it would. The host's Python
never runs the script: it is parsed with `ast.parse` and walked here, node by node, and nothing
of it is compiled or evaluated. Understood: module-level statements, assignments (with
unpacking), arithmetic, comparisons, strings and f-strings, lists, tuples, dicts, sets and
comprehensions, `if`/`while`/`for`, `break`/`continue`, `def` (closures, defaults, `global`),
`return`, `raise`/`try`/`except`/`finally` of the built-in exceptions, `assert`, `with open(...)`,
the common builtins and methods of str/list/dict, and the modules `time` (on the container's
clock), `os` (its environment and files), `sys`, `json`, `math` and `random` (seeded). Anything
else (`import flask`, `class`, `lambda`) stops the interpretation with one log line saying the
sandbox does not simulate it, and the process keeps running idle.

Infinite loops are solved, not run: when a `while` iteration starts in the very state the previous
one started in (same variables, no clock or random read), the script repeats that iteration
forever, and the outcome says so (`Outcome.loop`). Hard caps on steps, printed lines and
characters, and the size of values bound what any script costs; past one the log says so.
Pure: the caller hands in the source, the environment and a file reader; no pods, no clock.
The values it handles live in `pyvalues`, the process it runs as in `pyprocess`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

from sandbox.kubelet.pyprocess import Process
from sandbox.kubelet.pysyntax import BINARY, COMPARE, feature, loaded, syntax_error
from sandbox.kubelet.pyvalues import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_SOURCE,
    MODULES,
    NATIVE_ERRORS,
    Bound,
    BreakLoop,
    ContinueLoop,
    ErrorClass,
    ExitRequest,
    File,
    Frame,
    Function,
    Module,
    Outcome,
    PyError,
    ReadFile,
    Repeat,
    Returned,
    Stop,
    Stream,
    bounded,
    check_size,
    checked,
    freeze,
    guard_operands,
    unsupported,
)


def run(
    source: str, filename: str, *, env: Mapping[str, str], read: ReadFile, argv: list[str]
) -> Outcome:
    """Interpret `source` (the file `filename`, or "<string>" for `-c`)."""
    if len(source) > MAX_SOURCE:
        return Outcome(
            ((0.0, f"sandbox: python script longer than {MAX_SOURCE} characters"),), None
        )
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as error:
        return Outcome(syntax_error(error, filename), 0.0, 1)
    except (RecursionError, MemoryError, ValueError):
        return Outcome(((0.0, "sandbox: python script too deeply nested to simulate"),), None)
    interpreter = _Interpreter(source, filename, env=env, read=read, argv=argv)
    try:
        return interpreter.run(tree)
    except Exception as exc:  # a gap in this interpreter must never take the kubelet down
        said = f"sandbox: the simulated python interpreter failed ({type(exc).__name__}); idling"
        return Outcome(((0.0, said),), None)


class _Interpreter(Process):
    def __init__(
        self, source: str, filename: str, *, env: Mapping[str, str], read: ReadFile, argv: list[str]
    ) -> None:
        super().__init__(source, filename, env=env, read=read, argv=argv)
        self.module = Frame("<module>", {"__name__": "__main__"})
        self.frames: list[Frame] = [self.module]

    # -- running ------------------------------------------------------------------------------

    def run(self, tree: ast.Module) -> Outcome:
        try:
            self._block(tree.body)
        except ExitRequest as done:
            return Outcome(self._flushed(), self.t, done.code)
        except PyError as error:
            self._traceback(error)
            return Outcome(self._flushed(), self.t, 1)
        except Stop as stop:
            return Outcome((*self._flushed(), (self.t, stop.line)), None)
        except Repeat as repeat:
            lines = self._flushed()
            cycle = tuple(text for _, text in lines[repeat.first :])
            return Outcome(lines[: repeat.first], None, 0, cycle, repeat.period, repeat.start)
        except RecursionError:
            line = "sandbox: python script nests too deeply for the simulated interpreter"
            return Outcome((*self._flushed(), (self.t, line)), None)
        return Outcome(self._flushed(), self.t, 0)

    # -- statements ---------------------------------------------------------------------------

    def _block(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self._statement(statement)

    def _statement(self, node: ast.stmt) -> None:
        self._tick()
        self.frames[-1].line = node.lineno
        handler = getattr(self, "_s_" + type(node).__name__, None)
        if handler is None:
            raise Stop(unsupported("python", feature(node)))
        try:
            handler(node)
        except PyError as error:
            if error.frames is None:
                error.frames = [(f.name, f.line) for f in self.frames]
            raise
        except NATIVE_ERRORS as native:
            raised = PyError(type(native).__name__, str(native))
            raised.frames = [(f.name, f.line) for f in self.frames]
            raise raised from None

    def _s_Expr(self, node: ast.Expr) -> None:
        self._eval(node.value)

    def _s_Pass(self, node: ast.Pass) -> None:
        return None

    def _s_Assign(self, node: ast.Assign) -> None:
        value = self._eval(node.value)
        for target in node.targets:
            self._store(target, value)

    def _s_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._store(node.target, self._eval(node.value))

    def _s_AugAssign(self, node: ast.AugAssign) -> None:
        current = self._eval(loaded(node.target))
        self._store(node.target, self._binary(node.op, current, self._eval(node.value)))

    def _s_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                del self._eval(target.value)[self._eval(target.slice)]
            elif isinstance(target, ast.Name):
                self._scope_for(target.id).pop(target.id, None)

    def _s_If(self, node: ast.If) -> None:
        self._block(node.body if self._eval(node.test) else node.orelse)

    def _s_While(self, node: ast.While) -> None:
        previous: tuple[Any, float, int, int] | None = None
        while True:
            key = self._state()
            if (
                previous is not None
                and key is not None
                and key == previous[0]
                and self.volatile == previous[3]
                and (self.t > previous[1] or len(self.lines) == previous[2])
            ):
                raise Repeat(previous[1], self.t - previous[1], previous[2])
            previous = (key, self.t, len(self.lines), self.volatile)
            self._tick()
            if not self._eval(node.test):
                self._block(node.orelse)
                return
            try:
                self._block(node.body)
            except BreakLoop:
                return
            except ContinueLoop:
                continue

    def _s_For(self, node: ast.For) -> None:
        for value in self._eval(node.iter):
            self._tick()
            self._store(node.target, value)
            try:
                self._block(node.body)
            except BreakLoop:
                return
            except ContinueLoop:
                continue
        self._block(node.orelse)

    def _s_Break(self, node: ast.Break) -> None:
        raise BreakLoop

    def _s_Continue(self, node: ast.Continue) -> None:
        raise ContinueLoop

    def _s_Return(self, node: ast.Return) -> None:
        raise Returned(self._eval(node.value) if node.value is not None else None)

    def _s_Global(self, node: ast.Global) -> None:
        self.frames[-1].declared_global.update(node.names)

    def _s_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.decorator_list or node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            raise Stop(unsupported("python", "decorators and *args/**kwargs"))
        defaults = [self._eval(d) for d in node.args.defaults]
        closure = self.frames[-1] if self.frames[-1] is not self.module else None
        self._assign(node.name, Function(node.name, node, defaults, closure))

    def _s_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root not in MODULES or (alias.name != root and alias.name != "os.path"):
                raise Stop(unsupported("python", alias.name))
            self._assign(alias.asname or root, Module((alias.asname and alias.name) or root))

    def _s_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module not in MODULES and module != "os.path":
            raise Stop(unsupported("python", module or "relative imports"))
        for alias in node.names:
            if alias.name == "*":
                raise Stop(unsupported("python", f"from {module} import *"))
            self._assign(alias.asname or alias.name, self._attribute(Module(module), alias.name))

    def _s_Raise(self, node: ast.Raise) -> None:
        if node.exc is None:
            raise PyError("RuntimeError", "No active exception to reraise")
        value = self._eval(node.exc)
        if isinstance(value, ErrorClass):
            value = value()
        if not isinstance(value, PyError):
            raise PyError("TypeError", "exceptions must derive from BaseException")
        value.frames = None
        raise value

    def _s_Assert(self, node: ast.Assert) -> None:
        if not self._eval(node.test):
            message = self._eval(node.msg) if node.msg is not None else ""
            raise PyError("AssertionError", str(message))

    def _s_Try(self, node: ast.Try) -> None:
        try:
            try:
                self._block(node.body)
            except PyError as error:
                for handler in node.handlers:
                    if self._catches(handler, error):
                        if handler.name:
                            self._assign(handler.name, error)
                        self._block(handler.body)
                        break
                else:
                    raise
            else:
                self._block(node.orelse)
        finally:
            self._block(node.finalbody)

    def _catches(self, handler: ast.ExceptHandler, error: PyError) -> bool:
        if handler.type is None:
            return True
        kinds = self._eval(handler.type)
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        return any(isinstance(k, ErrorClass) and error.is_a(k.name) for k in kinds)

    def _s_With(self, node: ast.With) -> None:
        for item in node.items:
            value = self._eval(item.context_expr)
            if not isinstance(value, File):
                raise Stop(unsupported("python", "with (other than open)"))
            if item.optional_vars is not None:
                self._store(item.optional_vars, value)
        self._block(node.body)

    # -- names ----------------------------------------------------------------------------------

    def _scope_for(self, name: str) -> dict[str, Any]:
        frame = self.frames[-1]
        return self.module.names if name in frame.declared_global else frame.names

    def _assign(self, name: str, value: Any) -> None:
        self._scope_for(name)[name] = value

    def _lookup(self, name: str) -> Any:
        frame: Frame | None = self.frames[-1]
        while frame is not None:
            if name in frame.names:
                return frame.names[name]
            frame = frame.parent
        if name in self.module.names:
            return self.module.names[name]
        if name in self.builtins:
            return self.builtins[name]
        raise PyError("NameError", f"name '{name}' is not defined")

    def _store(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self._assign(target.id, value)
        elif isinstance(target, ast.Tuple | ast.List):
            values = list(bounded(value))
            if len(values) != len(target.elts):
                raise PyError(
                    "ValueError", f"expected {len(target.elts)} values to unpack, got {len(values)}"
                )
            for element, item in zip(target.elts, values, strict=True):
                self._store(element, item)
        elif isinstance(target, ast.Subscript):
            container = self._eval(target.value)
            if not isinstance(container, list | dict):
                raise PyError("TypeError", "object does not support item assignment")
            container[self._eval(target.slice)] = value
            check_size(container)
        else:
            raise Stop(unsupported("python", "assignment to attributes"))

    def _state(self) -> Any:
        """The variables a loop iteration starts with, or None when too big to compare."""
        budget = [2_000]
        frames = [f.names for f in self.frames[-1:]] + [self.module.names]
        key = freeze((frames, self.pending["stdout"], self.pending["stderr"]), budget)
        self._tick(2_000 - max(budget[0], 0))
        return key if budget[0] > 0 else None

    # -- expressions -----------------------------------------------------------------------------

    def _eval(self, node: ast.expr) -> Any:
        self._tick()
        handler = getattr(self, "_e_" + type(node).__name__, None)
        if handler is None:
            raise Stop(unsupported("python", feature(node)))
        return handler(node)

    def _e_Constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, bytes) or node.value is Ellipsis:
            raise Stop(unsupported("python", "bytes"))
        return node.value

    def _e_Name(self, node: ast.Name) -> Any:
        return self._lookup(node.id)

    def _e_List(self, node: ast.List) -> list[Any]:
        return [self._eval(e) for e in node.elts]

    def _e_Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self._eval(e) for e in node.elts)

    def _e_Set(self, node: ast.Set) -> set[Any]:
        return {self._eval(e) for e in node.elts}

    def _e_Dict(self, node: ast.Dict) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                result.update(self._eval(value))
            else:
                result[self._eval(key)] = self._eval(value)
        return result

    def _e_JoinedStr(self, node: ast.JoinedStr) -> str:
        text = "".join(str(self._eval(v)) for v in node.values)
        return checked(text)

    def _e_FormattedValue(self, node: ast.FormattedValue) -> str:
        value = self._eval(node.value)
        if node.conversion == ord("r"):
            value = repr(value)
        elif node.conversion in (ord("s"), ord("a")):
            value = str(value)
        spec = str(self._eval(node.format_spec)) if node.format_spec is not None else ""
        if isinstance(value, PyError | Function | Module | File | Stream | ErrorClass):
            value = str(value)
        return checked(format(value, spec))

    def _e_BinOp(self, node: ast.BinOp) -> Any:
        return self._binary(node.op, self._eval(node.left), self._eval(node.right))

    def _binary(self, op: ast.operator, left: Any, right: Any) -> Any:
        kind = type(op)
        if kind not in BINARY:
            raise Stop(unsupported("python", "the @ operator"))
        if kind is ast.Mod and isinstance(left, str):
            raise Stop(unsupported("python", "% formatting"))
        guard_operands(kind.__name__, left, right)
        return checked(BINARY[kind](left, right))

    def _e_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self._eval(node.operand)
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        return ~value

    def _e_BoolOp(self, node: ast.BoolOp) -> Any:
        value: Any = None
        for operand in node.values:
            value = self._eval(operand)
            if bool(value) != isinstance(node.op, ast.And):
                return value
        return value

    def _e_Compare(self, node: ast.Compare) -> bool:
        left = self._eval(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self._eval(comparator)
            if not COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _e_IfExp(self, node: ast.IfExp) -> Any:
        return self._eval(node.body if self._eval(node.test) else node.orelse)

    def _e_Subscript(self, node: ast.Subscript) -> Any:
        container = self._eval(node.value)
        if not isinstance(container, str | list | tuple | dict | range):
            raise PyError("TypeError", f"'{type(container).__name__}' object is not subscriptable")
        return container[self._eval(node.slice)]

    def _e_Slice(self, node: ast.Slice) -> slice:
        def part(expr: ast.expr | None) -> Any:
            return self._eval(expr) if expr is not None else None

        return slice(part(node.lower), part(node.upper), part(node.step))

    def _e_ListComp(self, node: ast.ListComp) -> list[Any]:
        return list(self._comprehension(node.generators, lambda: self._eval(node.elt)))

    def _e_GeneratorExp(self, node: ast.GeneratorExp) -> list[Any]:
        return list(self._comprehension(node.generators, lambda: self._eval(node.elt)))

    def _e_SetComp(self, node: ast.SetComp) -> set[Any]:
        return set(self._comprehension(node.generators, lambda: self._eval(node.elt)))

    def _e_DictComp(self, node: ast.DictComp) -> dict[Any, Any]:
        pairs = self._comprehension(
            node.generators, lambda: (self._eval(node.key), self._eval(node.value))
        )
        return dict(pairs)

    def _comprehension(
        self, generators: list[ast.comprehension], element: Callable[[], Any]
    ) -> list[Any]:
        owner = self.frames[-1]
        self.frames[-1] = Frame(owner.name, {}, owner, owner.line, owner.declared_global)
        results: list[Any] = []
        try:
            self._generate(generators, element, results)
        finally:
            self.frames[-1] = owner
        return results

    def _generate(
        self, generators: list[ast.comprehension], element: Callable[[], Any], out: list[Any]
    ) -> None:
        if not generators:
            out.append(element())
            if len(out) > MAX_ITEMS:
                raise PyError("MemoryError", "value too large for the simulated interpreter")
            return
        first, rest = generators[0], generators[1:]
        for value in self._eval(first.iter):
            self._tick()
            self._store(first.target, value)
            if all(self._eval(condition) for condition in first.ifs):
                self._generate(rest, element, out)

    def _e_Attribute(self, node: ast.Attribute) -> Any:
        return self._attribute(self._eval(node.value), node.attr)

    def _e_Call(self, node: ast.Call) -> Any:
        function = self._eval(node.func)
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                args.extend(bounded(self._eval(arg.value)))
            else:
                args.append(self._eval(arg))
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                kwargs.update(self._eval(keyword.value))
            else:
                kwargs[keyword.arg] = self._eval(keyword.value)
        return self._call(function, args, kwargs)

    def _call(self, function: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if isinstance(function, Function):
            return self._call_function(function, args, kwargs)
        if isinstance(function, ErrorClass):
            return function(*args)
        if isinstance(function, Bound):
            native = [self._native(a) for a in args]
            named = {k: self._native(v) for k, v in kwargs.items()}
            return checked(function.call(*native, **named))
        raise PyError("TypeError", f"'{type(function).__name__}' object is not callable")

    def _native(self, value: Any) -> Any:
        """A script function handed to a builtin (`sorted(key=f)`) runs in this interpreter."""
        if isinstance(value, Function):
            return lambda *a: self._call_function(value, list(a), {})
        return value

    def _call_function(self, function: Function, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if len(self.frames) > MAX_DEPTH:
            raise PyError("RecursionError", "maximum recursion depth exceeded")
        params = [a.arg for a in function.node.args.args]
        if len(args) > len(params):
            raise PyError(
                "TypeError",
                f"{function.name}() takes {len(params)} positional arguments but "
                f"{len(args)} were given",
            )
        names: dict[str, Any] = dict(zip(params, args, strict=False))
        for name, value in kwargs.items():
            if name not in params:
                raise PyError(
                    "TypeError", f"{function.name}() got an unexpected keyword argument '{name}'"
                )
            names[name] = value
        for name, default in zip(
            params[len(params) - len(function.defaults) :], function.defaults, strict=True
        ):
            names.setdefault(name, default)
        missing = [p for p in params if p not in names]
        if missing:
            raise PyError(
                "TypeError",
                f"{function.name}() missing required positional argument: '{missing[0]}'",
            )
        self.frames.append(Frame(function.name, names, function.closure))
        try:
            self._block(function.node.body)
        except Returned as returned:
            return returned.value
        finally:
            self.frames.pop()
        return None
