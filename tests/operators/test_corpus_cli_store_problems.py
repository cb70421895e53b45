"""`interlingua corpus` on a store with a problem: a damaged manifest, a symbolic link, a root that does not exist,
a version built from inputs read only in part."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pyarrow as pa
import pytest

from interlingua.operators.corpus import CorpusStore, Manifest
from interlingua.operators.corpus.no_follow import StoreLinkError
from interlingua.workflows.commands import corpus as corpus_command


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="interlingua corpus")
    corpus_command.add_arguments(parser)
    return corpus_command.run(parser.parse_args(argv))


def publish(root: Path, name: str = "c", partial: tuple[str, ...] = ()) -> Manifest:
    """A version of one shard built from ``in.gz`` and ``ok.txt``; each input in ``partial`` marked read in part."""
    writer = CorpusStore(str(root)).open_version(name, {"a": 1}, ["in.gz", "ok.txt"])
    writer.write_shard("shard-00000", pa.table({"x": [1, 2]}))
    for url in partial:
        writer.mark_partial(url, "EOFError: compressed file ended before the end-of-stream marker", 1234)
    return writer.publish()


def stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("damage", ["{ damaged", "total_rows"])
def test_a_damaged_manifest_is_one_readable_line_and_exit_1_for_every_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    """`show` printed "manifest.json: : Invalid JSON ..." (an empty field) and exited 2, as for a mistake, where
    `list` and `verify` exit 1 for a damaged store."""
    manifest_path = tmp_path / "c" / publish(tmp_path).version / "manifest.json"
    if damage == "total_rows":  # valid JSON whose totals disagree with its shards: a problem of the whole file too
        manifest_path.write_text(json.dumps({**json.loads(manifest_path.read_text()), "total_rows": 5}))
        expected = f"refusing the manifest {manifest_path}: total_rows=5 but the shards hold 2 rows"
    else:
        manifest_path.write_text(damage)
        expected = f"refusing the manifest {manifest_path}: Invalid JSON: key must be a string at line 1 column 3"
    for command in (["show", "c"], ["diff", "c", "latest", "latest"], ["list", "--name", "c"], ["verify", "c"],
                    ["pin", "c", "latest"], ["prune", "c", "--keep", "1"],
                    ["export", "c", "--out", str(tmp_path / "exported")]):
        assert run_cli(*command, "--root", str(tmp_path)) == 1, command
        assert stderr_lines(capsys) == [f"interlingua corpus: error: {expected}"], command


def test_list_refuses_a_corpus_folder_that_is_a_link_as_pin_and_prune_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`list` skipped a link at the root ("no published corpora under ROOT", exit 0) where pin and prune refuse it."""
    from interlingua.workflows import corpus_retention

    monkeypatch.setattr(corpus_retention, "registered_corpus_versions", lambda name, client=None: {})  # no registry
    publish(tmp_path / "elsewhere", "my-corpus")
    root = tmp_path / "store"
    publish(root, "c")
    (root / "my-corpus").symlink_to(tmp_path / "elsewhere" / "my-corpus")
    refusals = []
    for command in (["list"], ["pin", "my-corpus", "latest"], ["prune", "my-corpus", "--keep", "1"]):
        assert run_cli(*command, "--root", str(root)) == 2, command
        captured = capsys.readouterr()
        assert captured.out == "", command
        refusals.append(captured.err.strip().splitlines())
    assert refusals == [[f"interlingua corpus: error: {root}/my-corpus is a symbolic link (to {tmp_path}/elsewhere/"
                         "my-corpus); the corpus store never follows one (the store may be shared): remove the link"]] * 3
    (root / "my-corpus").unlink()
    assert run_cli("list", "--root", str(root)) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:-1]] == ["c"]


def link_refusal(link: Path, target: Path) -> list[str]:
    """The one line every corpus command prints for a symbolic link in the store (core.no_follow's message)."""
    return [f"interlingua corpus: error: {link} is a symbolic link (to {target}); the corpus store never follows one "
            "(the store may be shared): remove the link"]


READERS = (["show", "my-corpus"], ["show", "my-corpus", "--json"], ["diff", "my-corpus", "latest", "latest"],
           ["verify", "my-corpus"], ["export", "my-corpus", "--out", "EXPORTED"])


@pytest.mark.parametrize("linked", ["corpus", "version"])
def test_the_readers_refuse_a_linked_corpus_or_version_folder_as_list_pin_and_prune_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], linked: str) -> None:
    """show, diff, verify and export read a corpus through a symbolic link at its folder or at its version's folder
    (exit 0, the linked folder's contents printed or exported), where list, pin and prune refuse a linked corpus."""
    version = publish(tmp_path / "elsewhere", "my-corpus").version
    root = tmp_path / "store"
    publish(root, "c")
    if linked == "corpus":
        link, target = root / "my-corpus", tmp_path / "elsewhere" / "my-corpus"
    else:
        (root / "my-corpus").mkdir()
        (root / "my-corpus" / "latest").write_text(f"{version}\n")
        link, target = root / "my-corpus" / version, tmp_path / "elsewhere" / "my-corpus" / version
    link.symlink_to(target)
    exported = tmp_path / "exported"
    for command in (*READERS, ["show", "my-corpus", "--version", version], ["pin", "my-corpus", "latest"]):
        command = [str(exported) if part == "EXPORTED" else part for part in command]
        assert run_cli(*command, "--root", str(root)) == 2, command
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.strip().splitlines() == link_refusal(link, target), command
    assert not exported.exists()
    link.unlink()
    target.rename(link)  # the same corpus, no longer a link: read as before
    for command in READERS:
        command = [str(exported) if part == "EXPORTED" else part for part in command]
        assert run_cli(*command, "--root", str(root)) == 0, command
    assert (exported / "README.md").is_file()


def test_prune_refuses_a_linked_corpus_before_asking_the_model_registry(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """prune asked the registry for the versions registered models use (an MLflow call) before the store refused the
    link."""
    from interlingua.workflows import corpus_retention

    monkeypatch.setattr(corpus_retention, "registered_corpus_versions",
                        lambda name, client=None: pytest.fail("the registry was asked"))
    publish(tmp_path / "elsewhere", "my-corpus")
    root = tmp_path / "store"
    root.mkdir()
    (root / "my-corpus").symlink_to(tmp_path / "elsewhere" / "my-corpus")
    assert run_cli("prune", "my-corpus", "--keep", "1", "--root", str(root)) == 2
    assert stderr_lines(capsys) == link_refusal(root / "my-corpus", tmp_path / "elsewhere" / "my-corpus")


def test_a_root_that_does_not_exist_is_refused_by_every_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`list --root /nonexistent` said "no published corpora under /nonexistent" with exit 0, as for an empty store;
    show, diff, export, verify, pin and prune said "no published corpus named 'c'", as if the store were there."""
    missing = tmp_path / "no-such-store"
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    for command in (["list"], ["show", "c"], ["diff", "c", "latest", "latest"], ["verify", "c"],
                    ["export", "c", "--out", str(tmp_path / "exported")], ["pin", "c", "latest"],
                    ["prune", "c", "--keep", "1"]):
        assert run_cli(*command, "--root", str(missing)) == 2, command
        assert stderr_lines(capsys) == [f"interlingua corpus: error: --root {missing} does not exist (hint: give the "
                                        "store's folder, or leave --root out for the default store, "
                                        f"{tmp_path}/home/corpus)"], command
    assert not missing.exists() and not (tmp_path / "exported").exists()
    missing.mkdir()  # an empty store: as before
    assert run_cli("list", "--root", str(missing)) == 0
    assert capsys.readouterr().out.strip() == f"no published corpora under {missing}"
    (tmp_path / "home").mkdir()
    assert run_cli("list") == 0  # the default root, not made yet: empty until the first publish
    assert capsys.readouterr().out.strip() == f"no published corpora under {tmp_path}/home/corpus"


def test_a_partial_version_says_so_in_show_list_and_its_dataset_card(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A version built with allow_truncated_inputs showed nothing partial but in `show --json` (partial_inputs)."""
    root = tmp_path / "store"
    whole = publish(root, "whole")
    partial = publish(root, "cut", partial=("in.gz",))
    note = ("1 input(s) read only in part (allow_truncated_inputs): in.gz (EOFError: compressed file ended before "
            "the end-of-stream marker; reading stopped at byte 1234)")
    assert run_cli("show", "cut", "--root", str(root)) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[shown.index("inputs    in.gz, ok.txt") + 1] == f"partial   {note}"
    assert run_cli("show", "whole", "--root", str(root)) == 0
    assert "partial" not in capsys.readouterr().out

    assert run_cli("list", "--root", str(root)) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[1].split()[:4] == ["cut", partial.version, "*", "!"]
    assert listed[2].split()[:3] == ["whole", whole.version, "*"] and "!" not in listed[2]
    assert listed[-1] == "(* = latest; ! = partial: built from inputs read only in part (corpus show names them))"

    card = f"**Partial version**: {note}."
    assert card in (root / "cut" / partial.version / "README.md").read_text()
    assert "Partial" not in (root / "whole" / whole.version / "README.md").read_text()
    assert run_cli("export", "cut", "--out", str(tmp_path / "exported"), "--root", str(root)) == 0
    assert card in (tmp_path / "exported" / "README.md").read_text()


LINKED_FILES = {  # a file of the store: the corpus commands that read it
    "latest": (["show", "my-corpus"], ["verify", "my-corpus"], ["export", "my-corpus", "--out", "EXPORTED"]),
    "VERSION/manifest.json": (["show", "my-corpus"], ["verify", "my-corpus"],
                              ["export", "my-corpus", "--out", "EXPORTED"]),
    "VERSION/data/shard-00000.parquet": (["verify", "my-corpus"], ["export", "my-corpus", "--out", "EXPORTED"]),
    "VERSION/rejects/shard-00000.parquet": (["verify", "my-corpus"], ["export", "my-corpus", "--out", "EXPORTED"]),
}


@pytest.mark.parametrize("linked", LINKED_FILES)
def test_a_file_of_the_store_that_is_a_link_is_refused_by_every_reader_as_a_linked_folder_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], linked: str) -> None:
    """A corpus folder or a version folder that is a link was refused, a file that is one (the latest pointer, a
    manifest, a shard, its rejects) read through: show, verify and export printed or copied what the link points to
    (exit 0). The link here points to a copy of the file it replaces, so a reader that followed it would succeed."""
    writer = CorpusStore(str(tmp_path / "store")).open_version("my-corpus", {"a": 1}, ["in.txt"])
    writer.write_shard("shard-00000", pa.table({"x": [1, 2]}),
                       rejects=[{"operator": "dedup", "reason": "duplicate", "row": {"x": 1}}])
    version = writer.publish().version
    link = tmp_path / "store" / "my-corpus" / linked.replace("VERSION", version)
    target = tmp_path / "elsewhere" / link.name
    target.parent.mkdir()
    link.rename(target)
    link.symlink_to(target)
    exported = tmp_path / "exported"
    for command in LINKED_FILES[linked]:
        command = [str(exported) if part == "EXPORTED" else part for part in command]
        assert run_cli(*command, "--root", str(tmp_path / "store")) == 2, command
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.strip().splitlines() == link_refusal(link, target), command
    assert not (exported / linked.removeprefix("VERSION/")).exists()  # (export copies a shard before its rejects)
    store = CorpusStore(str(tmp_path / "store"))
    read = store.read_rejects if "rejects" in linked else store.read_table
    with pytest.raises(StoreLinkError) as refused:
        read("my-corpus")
    assert [f"interlingua corpus: error: {refused.value}"] == link_refusal(link, target)
    link.unlink()
    target.rename(link)  # the same file, no longer a link: read as before
    assert read("my-corpus", version).num_rows == (1 if "rejects" in linked else 2)


def test_a_pin_that_is_a_link_is_refused_not_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A pin file that was a link was skipped (only regular files were pins): prune deleted the version it pins."""
    from interlingua.workflows import corpus_retention

    monkeypatch.setattr(corpus_retention, "registered_corpus_versions", lambda name, client=None: {})  # no registry
    root = tmp_path / "store"
    store = CorpusStore(str(root))
    old = publish(root, "my-corpus").version
    store.pin("my-corpus", old)
    writer = store.open_version("my-corpus", {"a": 2}, ["in.txt"])
    writer.write_shard("shard-00000", pa.table({"x": [3]}))
    writer.publish()
    pin = root / "my-corpus" / "_pins" / old
    target = tmp_path / "elsewhere"
    pin.rename(target)
    pin.symlink_to(target)
    for command in (["prune", "my-corpus", "--keep", "1"], ["pin", "my-corpus", old, "--remove"]):
        assert run_cli(*command, "--root", str(root)) == 2, command
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.strip().splitlines() == link_refusal(pin, target), command
    assert store.versions("my-corpus")[0] == old  # not pruned
    with pytest.raises(StoreLinkError, match=f"{pin} is a symbolic link"):
        store.pins("my-corpus")


def test_list_and_prune_refuse_a_version_folder_that_is_a_link_as_they_refuse_a_linked_corpus_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """list and prune skipped a version folder that is a link: list showed the corpus without it (exit 0) and prune
    neither kept nor deleted it, where both refuse a corpus folder that is a link."""
    from interlingua.workflows import corpus_retention

    monkeypatch.setattr(corpus_retention, "registered_corpus_versions", lambda name, client=None: {})  # no registry
    root = tmp_path / "store"
    old = publish(root, "my-corpus").version
    writer = CorpusStore(str(root)).open_version("my-corpus", {"a": 2}, ["in.txt"])
    writer.write_shard("shard-00000", pa.table({"x": [3]}))
    new = writer.publish().version
    link, target = root / "my-corpus" / old, tmp_path / "elsewhere"
    link.rename(target)
    link.symlink_to(target)
    for command in (["list"], ["list", "--name", "my-corpus"], ["prune", "my-corpus", "--keep", "1"]):
        assert run_cli(*command, "--root", str(root)) == 2, command
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.strip().splitlines() == link_refusal(link, target), command
    assert link.is_symlink() and (root / "my-corpus" / new).is_dir() and (target / "manifest.json").is_file()


@pytest.mark.parametrize("linked", ["corpus", "version"])
def test_prune_corpus_refuses_a_linked_corpus_or_version_folder_before_asking_the_model_registry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked: str) -> None:
    """The Python API (workflows.corpus_retention.prune_corpus) asked the registry (an MLflow call) before the store
    refused the link; the CLI checks the corpus first, the API did not."""
    from interlingua.workflows import corpus_retention

    monkeypatch.setattr(corpus_retention, "registered_corpus_versions",
                        lambda name, client=None: pytest.fail("the registry was asked"))
    root = tmp_path / "store"
    version = publish(root, "my-corpus").version
    link = root / "my-corpus" / version if linked == "version" else root / "my-corpus"
    link.rename(tmp_path / "elsewhere")
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StoreLinkError, match=f"{link} is a symbolic link"):
        corpus_retention.prune_corpus(CorpusStore(str(root)), "my-corpus", 1)


@pytest.mark.parametrize("linked", ["latest", "VERSION/manifest.json"])
@pytest.mark.parametrize("points_to", ["nothing", "a FIFO"])
def test_a_broken_link_or_a_link_to_a_fifo_is_refused_as_a_link(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 linked: str, points_to: str) -> None:
    """The bounded read of ``latest`` and a manifest stat'ed the path (following a link) before the store's no-follow
    open: a broken link read as a missing file ("no published corpus") and a link to a FIFO as "not a regular file"
    (exit 1). Both are the link's one line now."""
    import os

    writer = CorpusStore(str(tmp_path / "store")).open_version("my-corpus", {"a": 1}, ["in.txt"])
    writer.write_shard("shard-00000", pa.table({"x": [1, 2]}))
    version = writer.publish().version
    link = tmp_path / "store" / "my-corpus" / linked.replace("VERSION", version)
    target = tmp_path / "elsewhere"
    if points_to == "a FIFO":
        os.mkfifo(target)
    link.unlink()
    link.symlink_to(target)
    assert run_cli("show", "my-corpus", "--root", str(tmp_path / "store")) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.strip().splitlines() == link_refusal(link, target)
