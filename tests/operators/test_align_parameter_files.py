"""A saved parameters folder is untrusted input: its JSON records each data file's SHA-256 and size, and loading
checks them (damaged, cut-short, swapped or edited files are one ParametersError naming the file); folders written
before the record existed still load."""

import json
import shutil

import pytest

from interlingua.operators.align.eflomal_backend import PARAMS_FILE as EFLOMAL_PARAMS
from interlingua.operators.align.eflomal_backend import PRIORS_FILE, EflomalAligner, learn_eflomal_priors
from interlingua.operators.align.fast_align_training import PARAMS_FILE, FastAlignParameters, learn_fast_align
from interlingua.operators.align.parameter_files import FILES_KEY, ParametersError

from .test_align_fast_align import synthetic_corpus


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("params") / "fa"
    learn_fast_align(synthetic_corpus(60, seed=3), str(folder))
    return folder


def _copy(saved, tmp_path):
    return shutil.copytree(saved, tmp_path / "copy")


def test_the_record_names_each_table_with_its_size_and_sha256(saved):
    import hashlib

    record = json.loads((saved / PARAMS_FILE).read_text())[FILES_KEY]
    names = ("forward.npz", "reverse.npz", "forward.unpruned.npz", "reverse.unpruned.npz")
    assert set(record) == set(names)
    for name in names:
        data = (saved / name).read_bytes()
        assert record[name] == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_the_folder_keeps_the_unpruned_tables_deflated_and_loading_decodes_them(saved, tmp_path):
    """The unpruned tables (every entry, the training run's model) are saved next to the pruned ones, deflated, and
    read back as learned, without unpickling; the pruned ones are still checked."""
    import zipfile

    import numpy as np

    learned = learn_fast_align(synthetic_corpus(60, seed=3), str(tmp_path / "again"))
    loaded = FastAlignParameters.load(str(saved))
    for direction in ("forward", "reverse"):
        ours, theirs = getattr(loaded, direction), getattr(learned.unpruned, direction)
        assert ours.table.vocabulary == theirs.table.vocabulary and ours.tension == theirs.tension
        assert np.array_equal(ours.table.keys, theirs.table.keys)
        assert np.array_equal(ours.table.probabilities, theirs.table.probabilities)
        assert ours.table.keys.size > getattr(learned, direction).table.keys.size  # more than the beam keeps
        with zipfile.ZipFile(saved / f"{direction}.unpruned.npz") as archive:
            assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_DEFLATED}
        assert (tmp_path / "again" / f"{direction}.unpruned.npz").read_bytes() == (
            saved / f"{direction}.unpruned.npz").read_bytes()  # the same bytes on every run
    folder = _copy(saved, tmp_path)
    shutil.copyfile(folder / "reverse.unpruned.npz", folder / "forward.unpruned.npz")
    with pytest.raises(ParametersError, match=r"forward\.unpruned\.npz is not the file its folder's record names"):
        FastAlignParameters.load(str(folder))
    shutil.copyfile(saved / "forward.unpruned.npz", folder / "forward.unpruned.npz")
    (folder / "reverse.npz").write_bytes(b"")  # not decoded, still checked
    with pytest.raises(ParametersError, match=r"reverse\.npz is not the file"):
        FastAlignParameters.load(str(folder))
    (folder / "reverse.npz").write_bytes((saved / "reverse.npz").read_bytes())
    (folder / "reverse.unpruned.npz").unlink()
    with pytest.raises(ParametersError, match=r"has no reverse\.unpruned\.npz"):
        FastAlignParameters.load(str(folder))


def test_load_gives_the_tables_asked_for(saved, tmp_path):
    """tables="pruned": the beam-pruned tables (the entries of forward.bin, which plain fast_align reads), the unpruned
    files still checked; tables="unpruned": a folder without them (systran's learner, saved before) is refused, where
    the default falls back to its pruned tables."""
    import numpy as np

    from interlingua.operators.align.lexical_table import read_systran_table

    unpruned = FastAlignParameters.load(str(saved), tables="unpruned")
    pruned = FastAlignParameters.load(str(saved), tables="pruned")
    for direction in ("forward", "reverse"):
        ours = getattr(pruned, direction).table
        assert np.array_equal(ours.keys, read_systran_table(str(saved / f"{direction}.bin")).keys)
        assert ours.keys.size < getattr(unpruned, direction).table.keys.size
        assert np.array_equal(getattr(FastAlignParameters.load(str(saved)), direction).table.keys,
                              getattr(unpruned, direction).table.keys)
    folder = _copy(saved, tmp_path)
    shutil.copyfile(folder / "reverse.unpruned.npz", folder / "forward.unpruned.npz")
    with pytest.raises(ParametersError, match=r"forward\.unpruned\.npz is not the file"):  # not decoded, still checked
        FastAlignParameters.load(str(folder), tables="pruned")
    meta = json.loads((folder / PARAMS_FILE).read_text())
    for name in ("forward.unpruned.npz", "reverse.unpruned.npz"):
        (folder / name).unlink()
        del meta[FILES_KEY][name]
    (folder / PARAMS_FILE).write_text(json.dumps(meta))
    with pytest.raises(ParametersError, match="records no unpruned tables"):
        FastAlignParameters.load(str(folder), tables="unpruned")
    assert np.array_equal(FastAlignParameters.load(str(folder)).forward.table.keys, pruned.forward.table.keys)
    with pytest.raises(ValueError, match="tables 'full' is not supported; expected one of unpruned, pruned"):
        FastAlignParameters.load(str(saved), tables="full")


def test_a_swapped_or_cut_short_table_is_refused(saved, tmp_path):
    folder = _copy(saved, tmp_path)
    shutil.copyfile(folder / "reverse.npz", folder / "forward.npz")  # a valid table, of the other direction
    with pytest.raises(ParametersError, match=r"forward\.npz is not the file its folder's record names"):
        FastAlignParameters.load(str(folder))
    shutil.copyfile(saved / "forward.npz", folder / "forward.npz")
    FastAlignParameters.load(str(folder))  # restored: loads
    (folder / "reverse.npz").write_bytes((saved / "reverse.npz").read_bytes()[:300])
    with pytest.raises(ParametersError, match=r"reverse\.npz is not the file"):
        FastAlignParameters.load(str(folder))


def test_without_a_record_a_damaged_table_is_still_one_error(saved, tmp_path):
    """A folder written before the record existed: loaded unchecked, but a cut-short archive names itself (it was a
    zipfile.BadZipFile)."""
    folder = _copy(saved, tmp_path)
    meta = json.loads((folder / PARAMS_FILE).read_text())
    del meta[FILES_KEY]
    (folder / PARAMS_FILE).write_text(json.dumps(meta))
    FastAlignParameters.load(str(folder))
    (folder / "forward.npz").write_bytes((saved / "forward.npz").read_bytes()[:300])
    with pytest.raises(ParametersError, match=r"forward\.npz is not a lexical table archive"):
        FastAlignParameters.load(str(folder))


@pytest.mark.parametrize(("edit", "message"), [
    (lambda meta: meta.update(forward_tension="abc"), "forward_tension must be a finite number > 0, got 'abc'"),
    (lambda meta: meta.update(reverse_tension=float("nan")), "reverse_tension must be a finite number > 0, got nan"),
    (lambda meta: meta.update(forward_tension=True), "forward_tension must be a finite number > 0, got True"),
    (lambda meta: meta["settings"].update(iterations="five"), "no valid fast_align settings"),
    (lambda meta: meta.pop("settings"), "no valid fast_align settings"),
    (lambda meta: meta.update({FILES_KEY: ["forward.npz"]}), "'files' is not a record of file checksums"),
])
def test_an_edited_record_is_refused(saved, tmp_path, edit, message):
    folder = _copy(saved, tmp_path)
    meta = json.loads((folder / PARAMS_FILE).read_text())
    edit(meta)
    (folder / PARAMS_FILE).write_text(json.dumps(meta))
    with pytest.raises(ParametersError, match=message):
        FastAlignParameters.load(str(folder))


def test_a_record_that_is_not_json_or_absent_is_refused(saved, tmp_path):
    folder = _copy(saved, tmp_path)
    (folder / PARAMS_FILE).write_text("{ damaged")
    with pytest.raises(ParametersError, match=r"fast_align_params\.json is not valid JSON"):
        FastAlignParameters.load(str(folder))
    (folder / PARAMS_FILE).unlink()
    with pytest.raises(ParametersError, match="holds no fast_align_params.json: not a folder of fast_align parameters"):
        FastAlignParameters.load(str(folder))


def test_eflomal_priors_are_checked_against_their_record(tmp_path):
    folder = tmp_path / "ef"
    learn_eflomal_priors(synthetic_corpus(40, seed=2), str(folder))
    assert set(json.loads((folder / EFLOMAL_PARAMS).read_text())[FILES_KEY]) == {PRIORS_FILE}
    EflomalAligner(str(folder))
    priors = (folder / PRIORS_FILE).read_text(encoding="utf-8")
    (folder / PRIORS_FILE).write_text(priors.replace("haus", "hause", 1), encoding="utf-8")
    with pytest.raises(ParametersError, match=r"eflomal_priors\.txt is not the file its folder's record names"):
        EflomalAligner(str(folder))
    (folder / EFLOMAL_PARAMS).write_text(json.dumps({"aligner": "fast_align"}))
    with pytest.raises(ParametersError, match="names aligner 'fast_align', not 'eflomal'"):
        EflomalAligner(str(folder))
