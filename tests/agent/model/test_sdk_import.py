"""The SDK entered lazily (agent/model/sdk_import.py): the same objects under the same names
as a whole ``import anthropic``, a fraction of the modules, and what its ``__init__`` does
besides re-exporting still done.

Each check runs in a fresh interpreter: what a process has imported cannot be unimported."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent.model.sdk_import import EXPRESSION, reexports

ROOT = Path(__file__).resolve().parents[3]

# Every name every package of the SDK has once imported whole, as (module, qualname): run
# with "whole" it imports the SDK as usual; with "lazy", entered lazily, it asks each
# package for the names the whole import gave it.
NAMES = textwrap.dedent(
    """
    import json, os, sys, types
    mode, names_file = sys.argv[1], sys.argv[2]
    import importlib
    if mode == "whole":
        import anthropic
        root = os.path.dirname(anthropic.__file__)
        found = {}
        for directory, _, files in os.walk(root):
            if "__init__.py" not in files or "__pycache__" in directory:
                continue
            relative = os.path.relpath(directory, root)
            parts = [] if relative == "." else relative.split(os.sep)
            package = ".".join(["anthropic", *parts])
            try:
                module = importlib.import_module(package)
            except ImportError:  # an optional extra's package (google-auth, boto3...)
                continue
            # (not names like "Parsed[object]": pydantic files a generic made at a module's
            # top level under such a name too, which no code can spell)
            found[package] = sorted(
                name for name, value in vars(module).items()
                if not name.startswith("__") and not isinstance(value, types.ModuleType)
                and name.isidentifier()
            )
        json.dump(found, open(names_file, "w"))
        asked = found
    else:
        from agent.model.sdk_import import install
        install()
        asked = json.load(open(names_file))
    seen = {}
    for package, names in asked.items():
        module = importlib.import_module(package)
        for name in names:
            value = getattr(module, name)
            if isinstance(value, (type, types.FunctionType)):
                seen[f"{package}:{name}"] = [value.__module__, value.__qualname__]
            elif isinstance(value, (str, int, float, tuple, type(None))):
                seen[f"{package}:{name}"] = [repr(value)[:200]]
            else:  # an instance (a proxy's repr would load what it stands for): its type
                seen[f"{package}:{name}"] = [type(value).__module__, type(value).__qualname__]
    print(json.dumps({"seen": seen, "modules": len(sys.modules)}))
    """
)


def run(code: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_name_of_every_package_is_the_same_object_as_a_whole_import_gives(tmp_path):
    names = tmp_path / "names.json"
    whole = json.loads(run(NAMES, "whole", str(names)))
    lazy = json.loads(run(NAMES, "lazy", str(names)))
    assert len(whole["seen"]) > 3000  # the whole API's names were compared, not a few
    assert "anthropic:AsyncAnthropic" in whole["seen"]  # the top package's first
    assert lazy["seen"] == whole["seen"]


def test_a_messages_call_imports_a_fraction_of_the_sdk():
    code = textwrap.dedent(
        """
        import sys
        from agent.model.sdk_import import import_sdk
        anthropic = import_sdk()
        client = anthropic.AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9")
        client.messages.create  # the resource a call uses
        whole = sum(1 for name in sys.modules if name.startswith("anthropic"))
        print(whole, "anthropic.resources.beta" in sys.modules)
        """
    )
    count, beta = run(code).split()
    assert int(count) < 1000  # the whole SDK is over 3,300
    assert beta == "False"  # the beta APIs, which a Messages call never touches


# Each failed response as the client turns it into an exception: the class (with its
# module), the message and the status, with the SDK imported whole and entered lazily.
ERRORS = textwrap.dedent(
    """
    import json, sys
    mode = sys.argv[1]
    if mode == "whole":
        import anthropic
    else:
        from agent.model.sdk_import import import_sdk
        anthropic = import_sdk()
        deferred = "anthropic.types.file_expired_error" not in sys.modules
    import httpx2
    from anthropic import _base_client
    cases = [
        (400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
        (404, {"type": "error", "error": {"type": "not_found_error", "message": "gone",
               "details": {"error_code": "file_expired"}}}),
        (400, {"error": {"message": "m", "details": {"error_code": "already_member"}}}),
        (429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}),
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        (500, ""),
        (418, {"whatever": 1}),
    ]
    seen = []
    for status, body in cases:
        request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages?beta=true")
        response = httpx2.Response(status, request=request, headers={"request-id": "req_1"})
        error = _base_client.make_status_error("Error", body=body, response=response)
        kind = type(error)
        seen.append([kind.__module__, kind.__qualname__, str(error), error.status_code,
                     isinstance(error, anthropic.APIStatusError)])
    from anthropic import _error_classes
    seen.append(len(_error_classes.ERROR_CLASSES))
    if mode == "lazy":
        seen.append(deferred)
    print(json.dumps(seen))
    """
)


def test_a_failed_response_raises_what_a_whole_import_raises():
    whole = json.loads(run(ERRORS, "whole"))
    lazy = json.loads(run(ERRORS, "lazy"))
    assert lazy[-1] is True  # the error classes were not imported before the first error
    assert lazy[:-1] == whole
    assert whole[1][1] == "FileExpiredError" and whole[4][1] == "OverloadedError"
    assert whole[-1] > 100  # the table of error codes is the module's own


def test_the_top_package_sets_up_logging_and_names_its_classes_as_the_sdk_does():
    code = textwrap.dedent(
        """
        import logging
        from agent.model.sdk_import import import_sdk
        anthropic = import_sdk()
        print(logging.getLogger("anthropic").level, anthropic.APIStatusError.__module__,
              anthropic.AsyncAnthropic.__module__)
        """
    )
    env = {"ANTHROPIC_LOG": "debug", "PATH": "/usr/bin:/bin"}
    assert run(code, env=env).split() == [str(logging_debug()), "anthropic", "anthropic"]


def logging_debug() -> int:
    import logging

    return logging.DEBUG


def test_a_name_exported_only_by_a_star_import_runs_the_whole_init_once():
    code = textwrap.dedent(
        """
        from agent.model.sdk_import import import_sdk
        anthropic = import_sdk()
        bedrock = anthropic.AsyncAnthropicBedrock  # from .lib.bedrock import *
        from anthropic.lib.bedrock import AsyncAnthropicBedrock
        print(bedrock is AsyncAnthropicBedrock, bedrock.__module__, "__getattr__" in vars(anthropic))
        """
    )
    # not in the package's __all__, so its __module__ is its own, as with a whole import
    assert run(code).split() == ["True", "anthropic.lib.bedrock._client", "False"]


def test_a_star_import_of_a_lazy_package_gives_its_names():
    code = textwrap.dedent(
        """
        from agent.model.sdk_import import install
        install()
        namespace = {}
        exec("from anthropic.lib.streaming import *", namespace)
        from anthropic.lib.streaming._messages import AsyncMessageStream
        print(namespace["AsyncMessageStream"] is AsyncMessageStream)
        """
    )
    assert run(code).split() == ["True"]


@pytest.mark.parametrize(
    "source",
    [
        "from .a import B as B\nprint('side effect')\n",
        "from .a import *\n",
        "from .a import B as B\nif True:\n    from .c import D\n",
        "B = 1\n",
        "B = make()\n",
        "B = A[object]\nB.x = 1\n",
    ],
)
def test_an_init_that_does_more_than_re_export_is_run_as_usual(source):
    assert reexports(source, "pkg") is None


def test_what_a_generated_init_re_exports():
    source = textwrap.dedent(
        '''
        """Docs."""
        # File generated from our OpenAPI spec.
        from __future__ import annotations

        from . import types
        from .message import Message as Message
        from .shared.error import (
            Error as Error,  # a comment
            Other as Renamed,
        )
        from .. import Parent
        from typing_extensions import TypeAlias
        __all__ = ["Message", "Error"]

        # For backwards compatibility
        StopEvent: TypeAlias = Parsed[object]  # a generic's form
        Either = Message | Error
        '''
    )
    exports, names_all = reexports(source, "pkg.sub")  # type: ignore[misc]
    assert exports == {
        "types": ("pkg.sub.types", None),
        "Message": ("pkg.sub.message", "Message"),
        "Error": ("pkg.sub.shared.error", "Error"),
        "Renamed": ("pkg.sub.shared.error", "Other"),
        "Parent": ("pkg", "Parent"),
        "annotations": ("__future__", "annotations"),
        "TypeAlias": ("typing_extensions", "TypeAlias"),
        "StopEvent": (EXPRESSION, "Parsed[object]"),
        "Either": (EXPRESSION, "Message | Error"),
    }
    assert names_all == ["Message", "Error"]


def test_the_sdk_errors_a_call_can_raise_are_named_as_the_sdk_names_them():
    code = textwrap.dedent(
        """
        from agent.model.sdk_import import import_sdk
        import_sdk()
        from anthropic._exceptions import RateLimitError, APIConnectionError
        print(RateLimitError.__module__, APIConnectionError.__module__)
        """
    )
    assert run(code).split() == ["anthropic", "anthropic"]
