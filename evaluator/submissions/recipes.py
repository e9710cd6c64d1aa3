"""A submission's recipe: how its predictions were made, in a form `reproduce` can follow.

A submitter may say one of three things (the Submit page's form, `submit --recipe JSON` or the
`--recipe-*` flags, or `evaluator.evaluate(..., submit=...)`):

- a registered detector: its name, a public checkpoint (a Hub model id, pinned by `revision`, a
  commit hash, tag or branch) or none (the detector's default), and its options;
- an LLM: `provider:model`, the prompt id, the temperature (and max_tokens);
- a detector from an installed package (its `factboard.detectors` entry point): the entry
  point's name, the package and the version it was run with.

`parse_recipe` turns what was given (a JSON object or text) into a `SubmittedRecipe`, or into
problems that each name the field (`recipe.checkpoint: ...`). It is pure but for reading the
registries (detectors, LLM providers, prompts). The recipe is stored in the submission record
and in the run's `submission.recipe` (`SubmittedRecipe.to_json`, with the splits the file
predicted), and evaluator.reproduce follows it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Required, TypedDict

Kind = Literal["detector", "llm", "package"]
KINDS: tuple[Kind, ...] = ("detector", "llm", "package")
KIND_WORDS = {
    "detector": "a registered detector with a public checkpoint",
    "llm": "an LLM with a prompt",
    "package": "a detector from an installed package",
}
# a Hub model id: "name" or "org/name" (letters, digits, - _ .), never a path
HUB_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
# a PEP 508 distribution name and a version as pip writes it
PACKAGE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")
VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63}$")
OPTION_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_OPTIONS = 20
MAX_OPTION_TEXT = 200
MAX_RECIPE_CHARS = 4000
FIELDS: dict[Kind, tuple[str, ...]] = {
    "detector": ("kind", "detector", "checkpoint", "revision", "options"),
    "llm": ("kind", "llm", "prompt", "temperature", "max_tokens"),
    "package": ("kind", "detector", "package", "version", "options"),
}

OptionValue = bool | int | float | str | None  # what a detector option may be set to


class RecipeJSON(TypedDict, total=False):
    """A recipe as the submission record and the run's `submission.recipe` keep it: the kind's
    fields only (FIELDS, none empty), and in the run the splits and the unit the file predicted
    (what evaluator.reproduce re-runs)."""

    kind: Required[Kind]
    detector: str  # a registered detector, or the package's entry point
    checkpoint: str  # a Hub model id
    revision: str
    options: dict[str, OptionValue]
    llm: str  # provider:model
    prompt: str
    temperature: float
    max_tokens: int
    package: str
    version: str
    splits: list[str]
    unit: str


@dataclass(frozen=True)
class DetectorRecipe:
    """A registered detector, on a public checkpoint pinned by revision (None: its default)."""

    detector: str
    checkpoint: str | None = None
    revision: str | None = None
    options: dict[str, OptionValue] = field(default_factory=dict)
    kind: Literal["detector"] = "detector"

    def to_json(self) -> RecipeJSON:
        """The stored form: the kind's fields only (no empty ones)."""
        out: RecipeJSON = {"kind": self.kind, "detector": self.detector}
        if self.checkpoint is not None:
            out["checkpoint"] = self.checkpoint
        if self.revision is not None:
            out["revision"] = self.revision
        if self.options:
            out["options"] = dict(self.options)
        return out

    def describe(self) -> str:
        where = (
            f"checkpoint {self.checkpoint} at {self.revision}"
            if self.checkpoint
            else "its default checkpoint"
        )
        return f"detector {self.detector}, {where}"


@dataclass(frozen=True)
class LLMRecipe:
    """An LLM (provider:model) with one of the detection prompts."""

    llm: str
    prompt: str
    temperature: float = 0.0
    max_tokens: int | None = None
    kind: Literal["llm"] = "llm"

    def to_json(self) -> RecipeJSON:
        out: RecipeJSON = {
            "kind": self.kind,
            "llm": self.llm,
            "prompt": self.prompt,
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        return out

    def describe(self) -> str:
        return f"LLM {self.llm}, prompt {self.prompt}, temperature {self.temperature:g}"


@dataclass(frozen=True)
class PackageRecipe:
    """A detector from an installed package: its entry point, the package and its version."""

    detector: str
    package: str
    version: str
    options: dict[str, OptionValue] = field(default_factory=dict)
    kind: Literal["package"] = "package"

    def to_json(self) -> RecipeJSON:
        out: RecipeJSON = {
            "kind": self.kind,
            "detector": self.detector,
            "package": self.package,
            "version": self.version,
        }
        if self.options:
            out["options"] = dict(self.options)
        return out

    def describe(self) -> str:
        return f"detector {self.detector} from {self.package} {self.version}"


# how a submission's predictions were made (see the module doc); `kind` tells which
SubmittedRecipe = DetectorRecipe | LLMRecipe | PackageRecipe


class RecipeProblems(list[str]):
    """The problems of a recipe, each naming its field."""


def _text(obj: Mapping[str, object], key: str, problems: list[str], required: bool) -> str | None:
    v = obj.get(key)
    if v is None or (isinstance(v, str) and not v.strip()):
        if required:
            problems.append(f"recipe.{key}: required for this kind of recipe")
        return None
    if not isinstance(v, str):
        problems.append(f"recipe.{key}: expected text, got {type(v).__name__}")
        return None
    if len(v) > MAX_OPTION_TEXT:
        problems.append(f"recipe.{key}: longer than {MAX_OPTION_TEXT} characters")
        return None
    return v.strip()


def _options(
    obj: Mapping[str, object], problems: list[str], allowed: set[str] | None
) -> dict[str, OptionValue]:
    raw = obj.get("options")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append(
            f"recipe.options: expected an object of KEY: VALUE, got {type(raw).__name__}"
        )
        return {}
    if len(raw) > MAX_OPTIONS:
        problems.append(f"recipe.options: at most {MAX_OPTIONS} options")
        return {}
    out: dict[str, OptionValue] = {}
    for k, v in raw.items():
        if not isinstance(k, str) or not OPTION_KEY.match(k):
            problems.append(f"recipe.options: {str(k)[:40]!r} is not an option name")
            continue
        if allowed is not None and k not in allowed:
            known = ", ".join(sorted(allowed)) or "none"
            problems.append(f"recipe.options.{k}: not an option of this detector (known: {known})")
            continue
        if (v is None or isinstance(v, bool | int | float | str)) and (
            not isinstance(v, str) or len(v) <= MAX_OPTION_TEXT
        ):
            out[k] = v
        else:
            problems.append(f"recipe.options.{k}: expected a number, true/false or short text")
    return out


def _infer_kind(obj: Mapping[str, object]) -> str | None:
    kind = obj.get("kind")
    if kind is not None:
        return kind if isinstance(kind, str) else None
    if "llm" in obj:
        return "llm"
    if "package" in obj:
        return "package"
    if "detector" in obj:
        return "detector"
    return None


def _detector_options(name: str) -> set[str] | None:
    """The options a registered detector takes (None when it cannot be told)."""
    from evaluator.detectors.registry import get_detector
    from evaluator.detectors.runner import RUNNER_OPTIONS

    try:
        cls = get_detector(name)
    except Exception:
        return None
    declared = getattr(cls, "OPTIONS", None)
    if not isinstance(declared, dict):
        return None
    return set(declared) | set(RUNNER_OPTIONS)


def parse_recipe(given: object) -> tuple[SubmittedRecipe | None, list[str]]:
    """(recipe, problems): None and no problem when nothing is given (a self-reported
    submission); None and the problems (each naming its field) when it is not valid."""
    if given is None or (isinstance(given, str) and not given.strip()) or given == {}:
        return None, []
    if isinstance(given, str):
        if len(given) > MAX_RECIPE_CHARS:
            return None, [f"recipe: longer than {MAX_RECIPE_CHARS} characters"]
        try:
            given = json.loads(given)
        except json.JSONDecodeError as e:
            return None, [f"recipe: not valid JSON ({e.msg} at character {e.pos})"]
    if not isinstance(given, dict):
        return None, [f"recipe: expected a JSON object, got {type(given).__name__}"]
    problems: list[str] = []
    kind = next((k for k in KINDS if k == _infer_kind(given)), None)
    if kind is None:
        given_kind = _infer_kind(given)
        what = f"{given_kind!r} is not" if given_kind else "missing; it must be"
        return None, [f"recipe.kind: {what} one of {', '.join(KINDS)}"]
    unknown = sorted(set(map(str, given)) - set(FIELDS[kind]))
    if unknown:
        problems.append(
            f"recipe: {', '.join(unknown)} not a field of a {kind} recipe "
            f"(fields: {', '.join(FIELDS[kind][1:])})"
        )
    if kind == "llm":
        return _llm(given, problems)
    if kind == "package":
        return _package(given, problems)
    return _detector(given, problems)


def _detector(
    obj: Mapping[str, object], problems: list[str]
) -> tuple[DetectorRecipe | None, list[str]]:
    from evaluator.detectors.registry import detector_names, detector_package

    name = _text(obj, "detector", problems, True)
    allowed: set[str] | None = None
    if name is not None:
        if name not in detector_names():
            problems.append(
                f"recipe.detector: {name!r} is not a registered detector (python -m evaluator "
                "detectors lists them; a detector from a package is a package recipe)"
            )
        elif detector_package(name) is not None:
            problems.append(
                f"recipe.detector: {name!r} comes from an installed package: give a package "
                "recipe (package and version)"
            )
        else:
            allowed = _detector_options(name)
    checkpoint = _text(obj, "checkpoint", problems, False)
    revision = _text(obj, "revision", problems, False)
    if checkpoint is not None:
        if not HUB_ID.match(checkpoint) or ".." in checkpoint:
            problems.append(
                f"recipe.checkpoint: {checkpoint[:100]!r} is not a public Hub model id "
                "(org/name); a local path cannot be re-run here"
            )
        if revision is None:
            problems.append(
                "recipe.revision: required with a checkpoint (a commit hash, or a tag), so the "
                "same weights are re-run"
            )
    elif revision is not None:
        problems.append("recipe.revision: given without a checkpoint")
    if revision is not None and not REVISION.match(revision):
        problems.append(f"recipe.revision: {revision[:100]!r} is not a commit hash, tag or branch")
    options = _options(obj, problems, allowed)
    if problems or name is None:
        return None, problems
    return DetectorRecipe(name, checkpoint, revision, options), []


def _llm(obj: Mapping[str, object], problems: list[str]) -> tuple[LLMRecipe | None, list[str]]:
    from evaluator.llm.clients import provider_names
    from evaluator.llm.prompts import detector_prompts

    llm = _text(obj, "llm", problems, True)
    if llm is not None:
        provider, sep, model = llm.partition(":")
        if not sep or not model.strip():
            problems.append(f"recipe.llm: {llm[:100]!r} is not of the form provider:model")
        elif provider not in provider_names():
            problems.append(
                f"recipe.llm: unknown provider {provider!r} (known: {', '.join(provider_names())})"
            )
    prompt = _text(obj, "prompt", problems, True)
    ids = [p.id for p in detector_prompts()]
    if prompt is not None and prompt not in ids:
        problems.append(f"recipe.prompt: {prompt!r} is not a prompt id (known: {', '.join(ids)})")
    temperature = obj.get("temperature", 0.0)
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        problems.append("recipe.temperature: expected a number")
        temperature = None
    elif not 0.0 <= float(temperature) <= 2.0:
        problems.append(f"recipe.temperature: {temperature} is not between 0 and 2")
    max_tokens = obj.get("max_tokens")
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        problems.append("recipe.max_tokens: expected a positive whole number")
    if problems or llm is None or prompt is None or not isinstance(temperature, int | float):
        return None, problems
    tokens = max_tokens if isinstance(max_tokens, int) else None
    return LLMRecipe(llm, prompt, float(temperature), tokens), []


def _package(
    obj: Mapping[str, object], problems: list[str]
) -> tuple[PackageRecipe | None, list[str]]:
    package = _text(obj, "package", problems, True)
    if package is not None and not PACKAGE.match(package):
        problems.append(f"recipe.package: {package[:100]!r} is not a package name")
    version = _text(obj, "version", problems, True)
    if version is not None and not VERSION.match(version):
        problems.append(f"recipe.version: {version[:64]!r} is not a version (e.g. 1.2.0)")
    name = _text(obj, "detector", problems, False) or package
    if name is not None and not OPTION_KEY.match(name.replace("-", "_").lower()):
        problems.append(f"recipe.detector: {name[:100]!r} is not an entry-point name")
    options = _options(obj, problems, None)
    if problems or name is None or package is None or version is None:
        return None, problems
    return PackageRecipe(name, package, version, options), []


def from_flags(
    detector: str | None = None,
    checkpoint: str | None = None,
    revision: str | None = None,
    options: Mapping[str, object] | None = None,
    llm: str | None = None,
    prompt: str | None = None,
    temperature: float | None = None,
    package: str | None = None,
    version: str | None = None,
) -> dict[str, object] | None:
    """The recipe object the command line's (or the form's) separate fields make (None when
    none is given), unchecked: parse_recipe checks it."""
    given: dict[str, object] = {
        "detector": detector,
        "checkpoint": checkpoint,
        "revision": revision,
        "options": options or None,
        "llm": llm,
        "prompt": prompt,
        "temperature": temperature,
        "package": package,
        "version": version,
    }
    out = {k: v for k, v in given.items() if v not in (None, "")}
    if not out:
        return None
    if "llm" in out:
        out["kind"] = "llm"
    elif "package" in out or "version" in out:
        out["kind"] = "package"
    else:
        out["kind"] = "detector"
    return out


def from_form(kind: str, fields: Mapping[str, object]) -> dict[str, object] | None:
    """The recipe object the Submit page's form makes, unchecked (parse_recipe checks it):
    `kind` ("none" or one of KINDS) and its text fields (options as KEY=VALUE lines); the other
    kinds' fields are ignored."""
    chosen = next((k for k in KINDS if k == kind), None)
    if chosen is None:
        return None

    def text(key: str) -> str | None:
        v = fields.get(key)
        return v.strip() if isinstance(v, str) and v.strip() else None

    out: dict[str, object] = {"kind": chosen}
    for key in FIELDS[chosen][1:]:
        if key == "options":
            lines = [ln.strip() for ln in str(fields.get("options") or "").splitlines()]
            opts: dict[str, str | None] = {}
            for ln in (x for x in lines if x):
                k, sep, v = ln.partition("=")
                opts[k.strip()] = v.strip() if sep else None
            if opts:
                out["options"] = opts
        elif key == "temperature":
            if fields.get("temperature") is not None:
                out["temperature"] = fields["temperature"]
        elif key == "max_tokens":
            continue
        elif text(key) is not None:
            out[key] = text(key)
    return out


__all__ = [
    "KINDS",
    "DetectorRecipe",
    "LLMRecipe",
    "PackageRecipe",
    "RecipeJSON",
    "SubmittedRecipe",
    "from_flags",
    "from_form",
    "parse_recipe",
]
