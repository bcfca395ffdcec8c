"""The ``anthropic`` SDK imported as far as a streamed Messages call needs it, not whole.

``import anthropic`` runs the package's ``__init__`` and, through it, the ``__init__`` of
every package under it, which re-export every name of the whole API: some 3,600 modules
and 0.7-0.8 s of CPU here, all before a ``-p`` run can send its first request. A streamed
Messages call uses under a third of them.

So the SDK's packages are entered lazily (``install``): a package whose ``__init__`` does
nothing but re-export names (``from .message import Message as Message``, an ``__all__``)
is made without running it, and a name asked of it (``from anthropic.types import
Message``, ``anthropic.types.Message``, a star import) imports just the submodule that
defines it, the first time it is asked. A type alias there (``BetaStopEvent: TypeAlias =
ParsedStopEvent[object]``) is evaluated in the package when asked for, as at its top level
(making that one generic built 144 pydantic models on the way to the first request). The
objects and their names are the same; only what nobody asks for is never loaded. A package
whose ``__init__`` does anything else is imported as usual.

The top package's ``__init__`` does more than re-export, and is entered lazily all the
same, doing what it does besides: the SDK's logging is set up (``ANTHROPIC_LOG``) at
entry, and each exported class it resolves gets ``__module__ = "anthropic"``, as the
``__init__`` does. A name it has no explicit re-export of (the ``*`` imports of the
Bedrock and Vertex clients) runs the whole ``__init__`` the first time it is asked.

One module is needed only when a request fails: ``_error_classes``, whose
``make_status_error`` picks the exception for a failed response among the classes of ~160
error codes, each with a model of its details (some 250 modules, ~40 ms). The client takes
that function when it is imported, so the module is made with a ``make_status_error`` that
runs the module's own code the first time it is called (or another of its names is asked
for), then calls the function that code defined: the error raised is the one a whole
import raises. A module that does not define it at its top level is imported as usual.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from agent.core import code_bundle

SDK = "anthropic"

# What a generated re-exporting __init__ is made of; anything else left over means it does
# more, and it is run as usual.
_REEXPORT = re.compile(
    r"^from[ \t]+(\.+[\w.]*|[A-Za-z_][\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n(]*)$", re.M
)
_ALL = re.compile(r"^__all__[ \t]*=[ \t]*\[([^\]]*)\]$", re.M)
# A name given the value of a one-line expression (``X: TypeAlias = Parsed[object]``),
# evaluated among the package's names when it is first asked for.
_ALIAS = re.compile(r"^([A-Za-z_]\w*)(?:[ \t]*:[ \t]*TypeAlias)?[ \t]*=[ \t]*([^\n]+)$", re.M)
_TYPE_EXPRESSION = re.compile(r"[A-Za-z_][\w.\[\], |]*")  # names, attributes, subscripts, unions
_NOISE = re.compile(r"^#[^\n]*$", re.M)
_IDENTIFIER = re.compile(r"(?<![.\w])([A-Za-z_]\w*)")
_NAME = re.compile(r"([A-Za-z_]\w*)(?:\s+as\s+([A-Za-z_]\w*))?")
_STRING = re.compile(r"""["']([A-Za-z_]\w*)["']""")

# The top package's own extras (see the module's docstring).
_TOP_EXTRA = re.compile(
    r"^(?:import typing as _t\n|"
    r"if not _t\.TYPE_CHECKING:\n(?:[ \t]+[^\n]*\n)+|"
    r"from \.lib\.\w+ import \*\n|"
    r"_setup_logging\(\)\n|"
    r"__locals = locals\(\)\nfor __name in __all__:\n(?:[ \t]+[^\n]*\n|\n)+)",
    re.M,
)

Exports = dict[str, tuple[str, str | None]]
EXPRESSION = "<expression>"  # an export's "module" when its value is an expression's

_lock = threading.RLock()


def install() -> None:
    """Enter the SDK's packages lazily from now on in this process (idempotent). Packages
    already imported stay as they are."""
    with _lock:
        if not any(isinstance(finder, _LazyFinder) for finder in sys.meta_path):
            sys.meta_path.insert(0, _LazyFinder())
        if SDK not in sys.modules:
            _enter_top()


def import_sdk() -> ModuleType:
    """The ``anthropic`` module, with what a streamed Messages call needs imported: the
    client, its errors and the Messages resource with its request and event types."""
    if _imported:
        return _imported[0]
    with _lock:  # a second thread waits for the first's import rather than racing it
        if _imported:
            return _imported[0]
        install()
        anthropic = sys.modules[SDK]
        anthropic.AsyncAnthropic  # noqa: B018
        anthropic.APIStatusError  # noqa: B018
        anthropic.DefaultAsyncHttpxClient  # noqa: B018
        importlib.import_module(f"{SDK}.resources.messages").AsyncMessages  # noqa: B018
        importlib.import_module(f"{SDK}.types.raw_message_stream_event")
        for name in _top_loaded():  # their __module__ as a whole import gives it (tracebacks)
            getattr(anthropic, name)
        _imported.append(anthropic)
        return anthropic


_imported: list[ModuleType] = []
_top_exports: Exports = {}


def _top_loaded() -> list[str]:
    """The top package's exported names whose module is imported already."""
    public = set(getattr(sys.modules.get(SDK), "__all__", ()))
    return [
        name
        for name, (module, _) in _top_exports.items()
        if name in public and module in sys.modules
    ]


def reexports(source: str, package: str) -> tuple[Exports, list[str] | None] | None:
    """What an ``__init__``'s source re-exports, name -> (module, attribute; None for a
    submodule itself; or EXPRESSION and the expression giving it), and its ``__all__`` if it
    has one; None if it does anything else."""
    exports: Exports = {}
    names_all: list[str] | None = None

    def take(match: re.Match[str]) -> str:
        ref, names = match.group(1), match.group(2)
        base = importlib.util.resolve_name(ref, package)
        for item in _items(names):
            found = _NAME.fullmatch(item)
            if found is None:
                raise ValueError(item)
            name, alias = found.groups()
            if base == package:  # from . import types: a submodule
                exports[alias or name] = (f"{base}.{name}", None)
            else:
                exports[alias or name] = (base, name)
        return ""

    def take_all(match: re.Match[str]) -> str:
        nonlocal names_all
        names_all = _STRING.findall(match.group(1))
        return ""

    def take_alias(match: re.Match[str]) -> str:
        name, expression = match.group(1), match.group(2).split("#", 1)[0].strip()
        if not _TYPE_EXPRESSION.fullmatch(expression):
            raise ValueError(expression)  # a call, a literal...: run as written, in order
        compile(expression, "<alias>", "eval")  # SyntaxError: not one expression
        exports[name] = (EXPRESSION, expression)
        return ""

    try:
        rest = _ALL.sub(take_all, _REEXPORT.sub(take, source))
        rest = _ALIAS.sub(take_alias, _NOISE.sub("", _strip_docstring(rest)))
    except (ValueError, SyntaxError):
        return None
    if rest.strip():
        return None
    return exports, names_all


def _items(names: str) -> list[str]:
    lines = [line.split("#", 1)[0] for line in names.strip().strip("()").splitlines()]
    return [item.strip() for item in " ".join(lines).split(",") if item.strip()]


def _strip_docstring(source: str) -> str:
    stripped = source.lstrip()
    for quote in ('"""', "'''"):
        if stripped.startswith(quote):
            end = stripped.find(quote, 3)
            if end != -1:
                return stripped[end + 3 :]
    return source


class _LazyFinder(importlib.abc.MetaPathFinder):
    """Finds the SDK's re-exporting packages and gives them the lazy loader."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(SDK + ".") or (
            fullname != _ERROR_CLASSES and code_bundle.holds_module(fullname)
        ):
            return None  # not the SDK's, or a module the start-up bundle has: not for this
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None  # not found, or not Python source: the usual finders take it
        if spec.submodule_search_locations is not None:
            spec.loader = _LazyPackageLoader(spec.loader)
            return spec
        if fullname == _ERROR_CLASSES:
            spec.loader = _ErrorClassesLoader(spec.loader)
        return spec  # a module, as the path finder would find it again after this


class _SourceLoader(importlib.abc.Loader):
    """A loader around the path finder's, which reads the module's source first to decide
    how to run it (and runs it as that loader would when it is not what it expects)."""

    def __init__(self, inner: importlib.machinery.SourceFileLoader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def source(self, module: ModuleType) -> str:
        try:
            return self.inner.get_source(module.__name__) or ""
        except ImportError:
            return ""


class _LazyPackageLoader(_SourceLoader):
    def exec_module(self, module: ModuleType) -> None:
        source = self.source(module)
        found = reexports(source, module.__name__) if source else None
        if found is None:
            self.inner.exec_module(module)
            return
        exports, names_all = found
        _make_lazy(module, exports, names_all, run_init=None)

    def get_resource_reader(self, fullname: str) -> Any:  # importlib.resources
        return self.inner.get_resource_reader(fullname)


_ERROR_CLASSES = f"{SDK}._error_classes"
_MAKE_STATUS_ERROR = re.compile(r"^def make_status_error\(", re.M)


class _ErrorClassesLoader(_SourceLoader):
    """``_error_classes`` run when an error is first made (see the module's docstring)."""

    def exec_module(self, module: ModuleType) -> None:
        if not _MAKE_STATUS_ERROR.search(self.source(module)):
            self.inner.exec_module(module)
            return
        ran: list[bool] = []

        def run() -> ModuleType:
            with _lock:
                if not ran:
                    vars(module).pop("__getattr__", None)
                    try:
                        self.inner.exec_module(module)  # its make_status_error replaces ours
                    except BaseException:
                        module.__getattr__ = resolve  # type: ignore[method-assign]
                        raise  # and the next call tries again
                    ran.append(True)
            return module

        def make_status_error(err_msg: str, *, body: object, response: Any) -> Any:
            return run().make_status_error(err_msg, body=body, response=response)

        def resolve(attribute: str) -> Any:
            if attribute.startswith("__"):
                raise AttributeError(f"module {module.__name__!r} has no attribute {attribute!r}")
            return getattr(run(), attribute)

        module.make_status_error = make_status_error  # type: ignore[attr-defined]
        module.__getattr__ = resolve  # type: ignore[method-assign]


def _make_lazy(
    module: ModuleType,
    exports: Exports,
    names_all: list[str] | None,
    run_init: Any,
    rename: bool = False,
) -> None:
    """Give ``module`` a ``__getattr__`` that imports what a name needs when asked."""
    package = module.__name__
    if names_all is None:
        names_all = [name for name in exports if not name.startswith("_")]
    module.__all__ = names_all  # type: ignore[attr-defined]  # star imports: each name resolved
    public = set(names_all)

    def resolve(attribute: str) -> Any:
        if attribute.startswith("__") and attribute not in exports:
            raise AttributeError(f"module {package!r} has no attribute {attribute!r}")
        target = exports.get(attribute)
        if target is not None:
            value = _load(*target, module)
            if rename and attribute in public:
                _rename(value, package)
        elif importlib.util.find_spec(f"{package}.{attribute}") is not None:
            value = importlib.import_module(f"{package}.{attribute}")
        elif run_init is not None:
            run_init()
            return getattr(module, attribute)
        else:
            raise AttributeError(f"module {package!r} has no attribute {attribute!r}")
        setattr(module, attribute, value)
        return value

    module.__getattr__ = resolve  # type: ignore[method-assign]


def _load(module_name: str, attribute: str | None, package: ModuleType) -> Any:
    """``from module_name import attribute``, as Python does it: an attribute of the
    module, else its submodule of that name; or the value of an expression."""
    if module_name == EXPRESSION:
        expression = attribute or "None"
        for name in _IDENTIFIER.findall(expression):
            with contextlib.suppress(AttributeError):  # a builtin (object), else a NameError
                getattr(package, name)  # resolved into the package's namespace first
        # evaluated there, as at the top of its __init__ (pydantic names a generic made at
        # a module's top level after that module)
        return eval(expression, vars(package))
    module = importlib.import_module(module_name)
    if attribute is None:
        return module
    try:
        return getattr(module, attribute)
    except AttributeError:
        if not hasattr(module, "__path__"):
            raise
        return importlib.import_module(f"{module_name}.{attribute}")


def _rename(value: Any, package: str) -> None:
    try:
        value.__module__ = package
    except (TypeError, AttributeError):  # builtins and constants keep theirs
        pass


def _enter_top() -> None:
    """Enter the top package lazily (see the module's docstring), or import it as usual
    when its ``__init__`` is not the one this knows."""
    spec = importlib.util.find_spec(SDK)
    if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
        return
    source = spec.loader.get_source(SDK) or ""
    found = reexports(_TOP_EXTRA.sub("", source), SDK)
    if found is None or "_setup_logging" not in found[0]:
        importlib.import_module(SDK)  # another version of the SDK: imported whole
        return
    exports, names_all = found
    _top_exports.update(exports)
    module = importlib.util.module_from_spec(spec)
    done = threading.Event()

    def run_init() -> None:
        with _lock:
            if done.is_set():
                return
            done.set()
            del module.__getattr__
            spec.loader.exec_module(module)  # type: ignore[union-attr]

    _make_lazy(module, exports, names_all, run_init, rename=True)
    sys.modules[SDK] = module
    try:
        module._setup_logging()
    except BaseException:
        del sys.modules[SDK]
        raise
