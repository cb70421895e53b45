"""Typed workflow configs: validated at load, errors that name the key, the value and what was expected.

Every workflow declares a :class:`Config` subclass. A config is built from three layers, later
ones winning: the class defaults, an optional YAML file (``-c config.yaml``) and ``--set key=value``
overrides (dotted keys reach nested sections; values are parsed as YAML scalars, so ``3``,
``0.5``, ``true`` and ``[en, es]`` get their natural types).

A nested section given in part (``--set train.max_steps=50``) is laid over the *workflow's* default
for that section (e.g. the quickstart's training settings), not over the section class's defaults.
"""

from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from interlingua.core.errors import UserError

C = TypeVar("C", bound="Config")

#: Exponent floats without a dot (``1e-4``), which PyYAML's YAML 1.1 resolver leaves as strings.
_YAML11_MISSED_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


class ConfigError(UserError, ValueError):
    """A config that does not validate; the message lists every bad key."""


class Config(BaseModel):
    """Base of every typed config: unknown keys are errors, assignments are validated, a float is finite (an
    ``lr`` or ``weight_decay`` of ``.inf`` passed ``gt=0`` and failed later inside the optimizer), and a number is
    not a bool (pydantic reads ``max_steps: true`` as 1 and ``lr: true`` as 1.0)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False, allow_inf_nan=False)
    #: Keys a user of other tools looks for here that this config leaves out on purpose: why, and what to set instead
    #: (the hint of an unknown key, instead of the closest key's name).
    ABSENT_KEYS: ClassVar[dict[str, str]] = {}
    #: Other names a user gives a key of this config (``path`` for ``url``): the key an unknown key so named is told
    #: about ("did you mean"), where spelling alone finds nothing close.
    KEY_SYNONYMS: ClassVar[dict[str, str]] = {}

    def __init__(self, /, **data: Any) -> None:
        """Built from Python (``TrainConfig(lr=...)``): a bad key is a :class:`ConfigError`, one line as the CLI
        says it (:func:`format_validation_error`), not pydantic's multi-line ValidationError."""
        try:
            super().__init__(**data)
        except ValidationError as err:
            raise ConfigError(format_validation_error(err, data, type(self).__name__, type(self))) from None

    # pydantic's own init, as far as validation goes: model_validate and nested sections keep their ValidationError
    # (with its location), which format_validation_error reads; only a Python construction passes through here
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        if not info.field_name:
            return value
        annotation = cls.model_fields[info.field_name].annotation
        if isinstance(value, bool) and _numbers_only(annotation):
            raise ValueError(f"{info.field_name} must be a number, got {value!r}")  # as the objectives' Number says
        if isinstance(value, list) and any(isinstance(v, bool) for v in value) and _number_items(annotation):
            raise ValueError(f"{info.field_name} must be numbers, got {value!r}")  # seeds: [1, true] read as [1, 1]
        return value

    @classmethod
    def field_help(cls, name: str, prefix: str, default: Any) -> list[str] | None:
        """``--list-keys`` lines for field ``name`` when a config shows it its own way; None: the usual line."""
        return None

    @classmethod
    def normalize_layer(cls, given: dict[str, Any], base: dict[str, Any], *, one_mapping: bool = False,
                        final: dict[str, Any] | None = None) -> dict[str, Any]:
        """One layer of this section (a file's, or the data after one ``--set``) with a key that has two spellings
        written in one (``base``: the workflow's default for the section, dumped), so that merging layers lets the
        later one win whatever spelling each uses (:func:`one_spelling`). ``one_mapping``: ``given`` is one mapping
        as written (a file), where two values of one key under its two spellings are a ValueError, not a later
        layer's win. ``final``: this section as all layers make it (unnormalized), which decides the spelling."""
        return given

    @classmethod
    def section_base(cls, base: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
        """The workflow's default for this section (``base``, dumped) that ``given`` (the user's partial section) is
        laid over (:func:`with_section_defaults`): a config whose keys have two spellings drops from ``base`` the
        default the user's spelling replaces, so that what remains of both spellings is the user's."""
        return base


def require_order(config: Config, low: str, high: str) -> None:
    """ValueError when field ``low`` is above field ``high`` (``min_chars`` above ``max_chars``: nothing would pass)."""
    if getattr(config, low) > getattr(config, high):
        raise ValueError(f"{low} ({getattr(config, low)}) is larger than {high} ({getattr(config, high)}): no text "
                         "would pass both")


def no_repeats(values: list) -> list:
    """``values`` when no item is given twice, else ValueError naming the repeated items (a repeated seed or
    variant ran the same again and weighed it double in a mean and its spread). For ``AfterValidator``."""
    repeated = [v for k, v in enumerate(values) if v in values[:k]]
    if repeated:
        listed = ", ".join(map(repr, dict.fromkeys(repeated)))
        raise ValueError(f"{listed} {'is' if len(set(map(repr, repeated))) == 1 else 'are'} given more than once; "
                         "give each once")
    return values


def _numbers_only(annotation: Any) -> bool:
    """Whether a field of type ``annotation`` takes numbers (int or float) and nothing else but None: ``int``,
    ``float | None``, ``Annotated[float, ...]``; not ``bool``, ``int | str`` or ``Any``."""
    import typing

    if typing.get_origin(annotation) is typing.Annotated:
        return _numbers_only(typing.get_args(annotation)[0])
    if not _is_union(annotation):
        return annotation in (int, float)
    options = [a for a in typing.get_args(annotation) if a is not type(None)]
    return bool(options) and all(_numbers_only(a) for a in options)


def _number_items(annotation: Any) -> bool:
    """Whether a field of type ``annotation`` is a list of numbers only (``list[int]``, ``list[float] | None``, an
    annotated one)."""
    import typing

    if typing.get_origin(annotation) is typing.Annotated:
        return _number_items(typing.get_args(annotation)[0])
    if _is_union(annotation):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        return bool(options) and all(_number_items(a) for a in options)
    return typing.get_origin(annotation) is list and all(_numbers_only(a) for a in typing.get_args(annotation))


def _is_union(annotation: Any) -> bool:
    import types
    import typing

    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def parse_override(item: str) -> tuple[list[str], Any]:
    """``"train.lr=1e-4"`` -> (["train", "lr"], 1e-4)."""
    import yaml

    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set expects key=value, got {item!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    if isinstance(value, str) and _YAML11_MISSED_FLOAT.fullmatch(raw.strip()):
        value = float(value)  # YAML 1.1 reads "1e-4" (no dot) as a string
    return [k for k in key.strip().split(".")], value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Return a copy of ``data`` with each dotted ``key=value`` override set."""
    out = _deep_copy(data)
    for item in overrides:
        path, value = parse_override(item)
        node = out
        for part in path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[path[-1]] = value
    return out


def load_config(cls: type[C], path: str | Path | None = None, overrides: list[str] | None = None, *,
                check: Callable[[dict[str, Any]], Any] | None = None) -> C:
    """Build a ``cls`` from an optional YAML file and ``--set`` overrides; raise :class:`ConfigError`. ``check``
    sees the merged data first, before validation (whose errors show values): e.g. ``submit`` refuses credentials."""
    data: dict[str, Any] = {}
    written = read_yaml(path) if path is not None else {}
    # every layer is written in the spelling of the config all layers make (a file's `temperature` belongs to the
    # objective a later --set chooses, not to the one in force when the file was read)
    final = apply_overrides(written, list(overrides or []))
    if path is not None:
        try:
            data = one_spelling(cls, written, one_mapping=True, final=final)
        except ValueError as err:  # one key given twice in the file, under its two spellings
            raise ConfigError(f"invalid config ({path}): {err}") from None
    for item in overrides or []:  # one at a time, so that a later layer wins whichever spelling each layer uses
        data = one_spelling(cls, apply_overrides(data, [item]), final=final)
    if check is not None:
        check(data)
    set_keys = [tuple(parse_override(item)[0]) for item in overrides or []]
    return validate(cls, data, source=str(path) if path else "--set", set_keys=set_keys)


def validate(cls: type[C], data: dict[str, Any], source: str = "config", *,
             set_keys: Iterable[tuple[str, ...]] = ()) -> C:
    """``data`` as a ``cls``; :class:`ConfigError` otherwise. ``set_keys``: the dotted keys ``--set`` gave (each a
    tuple of its parts): a problem at or below one is told as --set's, not ``source``'s."""
    try:
        return cls.model_validate(with_section_defaults(cls, data))
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, data, source, cls, set_keys)) from None


def one_spelling(cls: type[Config], data: Any, base: dict[str, Any] | None = None, *, one_mapping: bool = False,
                 final: Any = None) -> Any:
    """``data`` (one layer: a file, or the data after one ``--set``) with each section's keys in one spelling
    (:meth:`Config.normalize_layer`, recursively; ``base``: the workflow's default for ``cls``, dumped;
    ``one_mapping``: ``data`` is a file as written, where a key given under both spellings is refused; ``final``:
    the data all layers make, unnormalized, which decides what a spelling means)."""
    if not isinstance(data, dict):
        return data
    final = final if isinstance(final, dict) else {}
    out = cls.normalize_layer(dict(data), base or {}, one_mapping=one_mapping, final=final)
    for name, field in cls.model_fields.items():
        section = field.annotation
        if isinstance(section, type) and issubclass(section, Config) and isinstance(out.get(name), dict):
            default = field.get_default(call_default_factory=True)
            try:
                out[name] = one_spelling(section, out[name],
                                         default.model_dump() if isinstance(default, Config) else {},
                                         one_mapping=one_mapping, final=final.get(name))
            except ValueError as err:  # a key given twice: name the section it is in
                raise ValueError(f"{name}.{err}") from None
    return out


def with_section_defaults(cls: type[Config], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every nested section given as a (partial) mapping completed from the field's default
    instance (the workflow's own defaults for that section), recursively."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for name, field in cls.model_fields.items():
        section = field.annotation
        given = out.get(name)
        if not (isinstance(section, type) and issubclass(section, Config) and isinstance(given, dict)):
            continue
        default = field.get_default(call_default_factory=True)
        base = section.section_base(default.model_dump(), given) if isinstance(default, Config) else {}
        out[name] = with_section_defaults(section, _deep_update(base, given))
    return out


def _deep_update(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_update(out[key], value)
        else:
            out[key] = value
    return out


class _RepeatedKey(ValueError):
    """A mapping of a YAML file gives one key twice (PyYAML keeps the last silently)."""

    def __init__(self, key: Any, line: int, first: int, hint: str = "YAML keeps only the last, so remove one"):
        super().__init__(f"line {line}: key {key!r} is given twice (first on line {first}); {hint}")


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _unique_keys_SafeLoader():
    """PyYAML's safe loader, refusing a mapping that gives a key twice (:class:`_RepeatedKey`). Only the keys written
    in the mapping count: one of them may override a key that a merge (``<<: *base``) brings in, as YAML means it;
    two ``<<:`` keys in one mapping are refused too (``<<: [*a, *b]`` merges several)."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def __init__(self, stream):
            super().__init__(stream)
            self.keys_checked: set[int] = set()  # ids of the mapping nodes checked (all live until the load ends)

        def flatten_mapping(self, node):
            # every mapping (a merged one too) passes here, first before its merges are spliced into node.value
            if id(node) not in self.keys_checked:
                self.keys_checked.add(id(node))
                _refuse_repeated_keys(self, node)
            super().flatten_mapping(node)

    return UniqueKeyLoader


def _refuse_repeated_keys(loader: Any, node: Any) -> None:
    """:class:`_RepeatedKey` for the first key written twice in the mapping ``node`` (merged keys not yet in it)."""
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        merge = key_node.tag == _MERGE_TAG
        key = "<<" if merge else loader.construct_object(key_node, deep=True)
        if isinstance(key, (str, int, float, bool)) or key is None:
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _RepeatedKey(key, line, seen[key], *(["merge several mappings with one: <<: [*a, *b]"] if merge else []))
            seen[key] = line


def load_yaml_text(stream: Any) -> Any:
    """``yaml.safe_load`` that refuses a key given twice in one mapping (``_RepeatedKey``, a ValueError)."""
    import yaml

    return yaml.load(stream, Loader=_unique_keys_SafeLoader())  # a SafeLoader subclass


def read_yaml(path: str | Path) -> dict[str, Any]:
    import fsspec
    import yaml

    try:
        with fsspec.open(str(path), "r", encoding="utf-8") as fh:
            try:
                data = load_yaml_text(fh) or {}
            except yaml.YAMLError as err:
                raise ConfigError(yaml_error(path, err)) from None
            except _RepeatedKey as err:
                raise ConfigError(f"{path}, {err}") from None
    except FileNotFoundError:
        raise ConfigError(f"config file {path} not found (hint: check the path given to -c)") from None
    except (IsADirectoryError, PermissionError) as err:
        raise ConfigError(f"cannot read config file {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not a UTF-8 text file ({err.reason} at byte {err.start})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys to values at the top level, got {type(data).__name__}")
    return data


def yaml_error(path: str | Path, err: Exception) -> str:
    """One line for a YAML parse error: the file, the line and column (1-based) where the parser gave up, what it
    found and, when it says, what it was parsing and where that started."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None)
    if mark is None or not problem:
        return f"{path}: not valid YAML: {' '.join(str(err).split())}"
    context, start = getattr(err, "context", None), getattr(err, "context_mark", None)
    where = f" ({context} from line {start.line + 1}, column {start.column + 1})" if context and start else ""
    return (f"{path}, line {mark.line + 1}, column {mark.column + 1}: not valid YAML: {problem}{where} "
            "(hint: check the brackets, quotes and indentation there)")


def format_validation_error(err: ValidationError, data: dict[str, Any], source: str,
                            cls: type[Config] | None = None, set_keys: Iterable[tuple[str, ...]] = ()) -> str:
    """What is wrong, one problem per line; a single problem is one line with the header (the usual case). A check
    across keys (a model validator: no key of its own) is shown by its message alone, not as ``= {every value}``.
    ``set_keys``: the keys ``--set`` gave; the header names ``--set`` for the problems at or below them (``source``,
    a config file, for the others)."""
    set_keys = [tuple(k) for k in set_keys]
    problems, sources = [], []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"])
        given_by_set = any(tuple(map(str, e["loc"][:len(k)])) == k for k in set_keys if k)
        sources.append("--set" if given_by_set else source)
        if e["type"] == "extra_forbidden":
            hidden = _hidden(e["loc"], e["input"])
            shown = f"{key} ({hidden}): unknown key" if hidden else f"{key}: unknown key (value {e['input']!r})"
            problems.append(f"{shown}{unknown_key_hint(cls, e['loc'])}")
            continue
        message = e["msg"].removeprefix("Value error, ")
        if not key or e["type"] == "value_error" and isinstance(e.get("input"), dict):
            problems.append(f"{key + ': ' if key else ''}{message}")
            continue
        value = _lookup(data, e["loc"])
        hidden = None if value is _MISSING else _hidden(e["loc"], value)
        if hidden:
            problems.append(f"{key} ({hidden}): {e['msg']}")
        else:
            hint = value_hint(cls, e, "--set" if given_by_set else None)
            problems.append(f"{key} = {'missing' if value is _MISSING else repr(value)}: {message}{hint}")
    where = ", ".join(dict.fromkeys(sources)) or source
    if len(problems) == 1:
        return f"invalid config ({where}): {problems[0]}"
    return "\n".join([f"invalid config ({where}):", *(f"  {p}" for p in problems)])


def value_hint(cls: type[Config] | None, error: dict[str, Any], given_by: str | None = None) -> str:
    """What to give instead, for pydantic's ``error`` (one of :meth:`ValidationError.errors`) of a key of ``cls``:
    ``" (did you mean 'norm_concat'?)"`` for a value not among a ``Literal``'s, ``" (expected: DESCRIPTION)"`` for a
    missing required key, ``" (hint: give a list: --set force=[tr])"`` for a single value where a list is expected
    (``given_by``: ``"--set"`` when --set gave it); ``""`` otherwise."""
    loc, value = tuple(error["loc"]), error.get("input")
    if error["type"] == "literal_error":
        close = closest(value, [str(v) for v in _literal_values(_annotation_at(cls, loc))], cutoff=0.5)
        return f" (did you mean {close!r}?)" if close else ""
    if error["type"] == "missing":
        section = section_class(cls, loc[:-1])
        field = section.model_fields.get(str(loc[-1])) if section is not None else None
        return f" (expected: {field.description})" if field is not None and field.description else ""
    if error["type"] == "list_type" and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        key = ".".join(str(p) for p in loc)
        return f" (hint: give a list: {f'--set {key}=' if given_by == '--set' else ''}[{value}])"
    return ""


def _annotation_at(cls: type[Config] | None, loc: tuple) -> Any:
    """The type of the value at ``loc`` below ``cls`` (None where none is known)."""
    annotation: Any = cls
    for part in loc:
        annotation = _part_type(annotation, part)
    return annotation


def _literal_values(annotation: Any) -> list[Any]:
    """The values a ``Literal`` in ``annotation`` allows (through ``Annotated`` and unions); [] where it has none."""
    import typing

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return list(args)
    if origin is typing.Annotated:
        return _literal_values(args[0])
    if _is_union(annotation):
        return [v for a in args for v in _literal_values(a)]
    return []


def _hidden(loc: tuple, value: Any) -> str | None:
    """Why a validation error must not show ``value`` (None: it may): the key, or a section above it, is named like
    a credential, or the value carries one (:mod:`interlingua.core.redact` would mask it). The console's masking
    cannot find every way a message quotes a value (``(value '…')``)."""
    from interlingua.core.redact import is_secret_key, redact

    if any(is_secret_key(str(part)) for part in loc if not isinstance(part, int)):
        return "value not shown, the key names a credential"
    if redact(value) != value:
        return "value not shown, it carries a credential"
    return None


def config_fields_help(cls: type[Config], prefix: str = "", defaults: Config | None = None) -> list[str]:
    """One line per field (dotted for nested configs): name, type, default and description. A nested
    section shows the workflow's defaults for it (its field's default instance)."""
    lines = []
    for name, field in cls.model_fields.items():
        ann = field.annotation
        default = getattr(defaults, name) if defaults is not None else field.get_default(call_default_factory=True)
        custom = cls.field_help(name, prefix, default)
        if custom is not None:
            lines.extend(custom)
            continue
        if isinstance(ann, type) and issubclass(ann, Config):
            lines.extend(config_fields_help(ann, prefix + name + ".", default if isinstance(default, Config) else None))
            continue
        tname = type_label(ann)
        desc = f"  {field.description}" if field.description else ""
        shown = "required" if field.is_required() and defaults is None else f"default {default!r}"
        lines.append(f"{prefix}{name} ({tname}, {shown}){desc}")
    return lines


def type_label(annotation: Any, nested: bool = False) -> str:
    """``int``, ``str | None``, ``list[str]``, ``dict[str, Any]``, ``one of 'a', 'b'`` (a Literal shows its values;
    ``Literal['a', 'b']`` inside brackets). A checked type (``Annotated``: names.SafeName, a list of language codes)
    shows the type it checks, never its validator, at any depth."""
    import typing

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_label(args[0], nested)
    if origin is typing.Literal:
        values = ", ".join(repr(a) for a in args)
        return f"Literal[{values}]" if nested else f"one of {values}"
    if _is_union(annotation):
        return " | ".join(type_label(a, nested) for a in args)
    if annotation is type(None):
        return "None"
    if annotation is Ellipsis:
        return "..."
    if origin is not None and args:
        return f"{_type_name(origin)}[{', '.join(type_label(a, nested=True) for a in args)}]"
    return _type_name(annotation)


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def section_class(cls: type[Config] | None, path: tuple) -> type[Config] | None:
    """The config class of the section at ``path`` below ``cls`` (None: not a section). ``path`` is a location as
    pydantic gives it: section names, and an index into a list or a key of a mapping of sections
    (``("dumps", 0)``: an item of ``dumps: list[WikiDump]``; ``("stages", "tr")``: of ``dict[str, StageSpec]``)."""
    annotation: Any = cls
    for part in path:
        annotation = _part_type(annotation, part)
    return annotation if isinstance(annotation, type) and issubclass(annotation, Config) else None


def _part_type(annotation: Any, part: Any) -> Any:
    """The type of ``part`` (a field name, a list index or a mapping key) in a value of type ``annotation``; None
    where it has none. A checked type and an optional one are read as the type they hold."""
    import typing

    while typing.get_origin(annotation) is typing.Annotated or _is_union(annotation):
        if typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) != 1:
            return None  # a union of several types: no one section
        annotation = options[0]
    if isinstance(annotation, type) and issubclass(annotation, Config):
        field = annotation.model_fields.get(str(part))
        return field.annotation if field is not None else None
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, tuple, set, frozenset) and isinstance(part, int) and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None


def nesting_hint(key: str) -> str:
    """For a dotted key in a file (``train.lr: 1e-4``, ``--set``'s spelling), how to write it there:
    ``"; in a file, nest it: train: {lr: …}"``; ``""`` for any other key."""
    parts = [p for p in str(key).split(".") if p]
    if len(parts) < 2:
        return ""
    nested = "…"
    for part in reversed(parts[1:]):
        nested = f"{{{part}: {nested}}}"
    return f"; the dotted spelling is --set's: in a file, nest it: {parts[0]}: {nested}"


def closest(word: Any, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate closest to ``word`` (difflib's similarity at least ``cutoff``; the first of equals), or None:
    what a "did you mean" hint names."""
    import difflib

    close = difflib.get_close_matches(str(word), list(candidates), n=1, cutoff=cutoff)
    return close[0] if close else None


def unknown_key_hint(cls: type[Config] | None, loc: tuple, list_keys: str = "--list-keys") -> str:
    """For an unknown key at ``loc`` below ``cls``: why the section has no such key when it says so
    (:attr:`Config.ABSENT_KEYS`), how to nest a dotted key, else ``"; did you mean KEY?"`` for the key it names
    (:attr:`Config.KEY_SYNONYMS`) or the closest known key there (at any depth: a list item's too), else
    ``"; see LIST_KEYS"`` (``list_keys``: the command that lists them; ``""`` where the section has no keys)."""
    section = section_class(cls, tuple(loc[:-1]))
    if section is not None and str(loc[-1]) in section.ABSENT_KEYS:
        return f"; {section.ABSENT_KEYS[str(loc[-1])]}"
    keys = list(section.model_fields) if section is not None else []
    if nesting_hint(str(loc[-1])) and str(loc[-1]).split(".")[0] in keys:
        return nesting_hint(str(loc[-1]))
    synonym = section.KEY_SYNONYMS.get(str(loc[-1])) if section is not None else None
    close = synonym or closest(loc[-1], keys, cutoff=0.5)
    prefix = ".".join(str(p) for p in loc[:-1])
    if close:
        return f"; did you mean {prefix + '.' if prefix else ''}{close}?"
    return f"; see {list_keys}" if keys else ""


_MISSING = object()


def _lookup(data: Any, loc: tuple) -> Any:
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return _MISSING
    return node


def _deep_copy(data: dict[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, dict) else v for k, v in data.items()}
