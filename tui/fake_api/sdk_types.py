"""Every request body checked against the `anthropic` SDK's own request types, made strict.

The SDK's TypedDicts (``anthropic.types.beta``: the widest set, betas included)
are rebuilt for pydantic: unknown keys are refused (``extra="forbid"``), lists
are validated eagerly (the SDK's ``Iterable`` is lazy in pydantic), response
models that the SDK also accepts are left out, and each union of blocks tagged
by ``type`` is discriminated, so errors read as the API's do:
``messages.0.content.1: Input tag 'x' found using 'type' does not match any of
the expected tags: ...`` or ``messages.3.content.0.thinking.cache_control:
Extra inputs are not permitted``.

The SDK and pydantic are imported on the first check, never by the server's import.
"""

from __future__ import annotations

import collections.abc
import functools
import os
import types
import typing
import warnings
from typing import Any, Literal, Union

import typing_extensions as tx

from tui.fake_api.rejection import Rejection


def check_sdk_types(body: dict[str, Any], *, count_only: bool = False) -> Rejection | None:
    """A 400 in the API's wording when ``body`` does not fit the SDK's request type."""
    from pydantic import ValidationError

    kind = "count" if count_only else "stream" if body.get("stream") is True else "create"
    try:
        _adapter(kind).validate_python(body)
    except ValidationError as exc:
        # the deepest error: a union reports each member it tried, the nearest miss goes deepest
        error = max(exc.errors(include_url=False), key=lambda e: len(e["loc"]))
        where = ".".join(str(part) for part in error["loc"] if not _is_union_label(part))
        return Rejection(400, "invalid_request_error", f"{where}: {error['msg']}")
    return None


def _is_union_label(part: Any) -> bool:
    # pydantic names the union member it tried ("list[...]", "str", a class name); the API does not
    return isinstance(part, str) and (
        "[" in part or part in ("str", "int", "float", "dict") or part in _STRICT_NAMES
    )


_STRICT_NAMES: set[str] = set()
_NOT_JSON = object()  # response models, file objects: nothing a JSON body can hold


@functools.cache
def _adapter(kind: str) -> Any:
    from anthropic.types.beta import message_count_tokens_params, message_create_params
    from pydantic import TypeAdapter

    source = {
        "count": message_count_tokens_params.MessageCountTokensParams,
        "stream": message_create_params.MessageCreateParamsStreaming,
        "create": message_create_params.MessageCreateParamsNonStreaming,
    }[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedDicts the SDK marks open are kept open
        return TypeAdapter(_StrictTypes().convert(source))


class _StrictTypes:
    """Rebuilds SDK request types as strict, eager, discriminated pydantic types."""

    def __init__(self) -> None:
        self._done: dict[Any, Any] = {}
        self._building: set[Any] = set()

    def convert(self, tp: Any) -> Any:
        if tx.is_typeddict(tp):
            return self._typed_dict(tp)
        origin, args = tx.get_origin(tp), tx.get_args(tp)
        if origin in (typing.IO, os.PathLike) or tp is os.PathLike:
            return _NOT_JSON
        if origin is tx.Annotated:
            inner = self.convert(args[0])
            return _NOT_JSON if inner is _NOT_JSON else tx.Annotated[(inner, *tp.__metadata__)]
        if origin in (tx.Required, tx.NotRequired):
            return origin[self.convert(args[0])]
        if origin in (Union, types.UnionType):
            return self._union(args)
        if origin in (collections.abc.Iterable, collections.abc.Sequence, list) or (
            getattr(origin, "__name__", "") == "SequenceNotStr"
        ):
            return types.GenericAlias(list, (self.convert(args[0]),)) if args else list
        return tp

    def _typed_dict(self, td: Any) -> Any:
        from pydantic import ConfigDict, with_config

        if td in self._done:
            return self._done[td]
        if td in self._building:
            return td  # a recursive type: its inner occurrence stays the SDK's own
        self._building.add(td)
        hints = tx.get_type_hints(td, include_extras=True)
        fields = {}
        marker: Any
        for name, hint in hints.items():
            # An explicit marker shows only in the resolved hint (postponed annotations hide it
            # from __required_keys__); without one the defining class's totality decides.
            marker = tx.Required if name in td.__required_keys__ else tx.NotRequired
            if tx.get_origin(hint) in (tx.Required, tx.NotRequired):
                marker, hint = tx.get_origin(hint), tx.get_args(hint)[0]
            converted = self.convert(hint)
            fields[name] = marker[hint if converted is _NOT_JSON else converted]
        # Built at run time from the SDK's TypedDict: no static checker can follow it.
        built: Any = tx.TypedDict(td.__name__, fields, total=False)  # type: ignore[misc]
        strict = with_config(ConfigDict(extra="forbid"))(built)
        _STRICT_NAMES.add(td.__name__)
        self._building.discard(td)
        self._done[td] = strict
        return strict

    def _union(self, args: tuple[Any, ...]) -> Any:
        from pydantic import BaseModel, Field

        converted = [
            self.convert(arg)
            for arg in args
            if not (isinstance(arg, type) and issubclass(arg, BaseModel))  # response types
        ]
        members = [m for m in converted if m is not _NOT_JSON]
        if not members:
            return _NOT_JSON
        tagged = [m for m in members if _tag(m) is not None]
        others = [m for m in members if _tag(m) is None]
        tags = [tag for m in tagged for tag in _tag(m)]  # type: ignore[union-attr]
        if (
            len(tagged) >= 2
            and len(tags) == len(set(tags))
            and all(tx.is_typeddict(m) for m in tagged)
        ):
            discriminated: Any = tx.Annotated[
                Union[tuple(tagged)], Field(discriminator="type")  # noqa: UP007
            ]
            members = [discriminated, *others]
        return Union[tuple(members)] if len(members) > 1 else members[0]  # noqa: UP007


def _tag(member: Any) -> tuple[str, ...] | None:
    """The literal values of a TypedDict's required `type` key, or None."""
    if not tx.is_typeddict(member) or "type" not in member.__required_keys__:
        return None
    hint = member.__annotations__.get("type")
    while tx.get_origin(hint) in (tx.Required, tx.NotRequired, tx.Annotated):
        hint = tx.get_args(hint)[0]
    if tx.get_origin(hint) not in (Literal, tx.Literal):
        return None
    return tx.get_args(hint)
