"""No code runs from data: pickle-bearing files crafted to run code are refused with a clear error, and no
loader in the package unpickles (a source scan keeps it that way)."""

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest

from interlingua.core.safe_load import UnsafeFileError, load_array, load_arrays

PACKAGE_ROOT = Path(__file__).resolve().parents[2]


class _Payload:
    """Unpickling this creates ``marker``: proof that code from the file ran."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _object_array(marker: Path) -> np.ndarray:
    array = np.empty(2, dtype=object)
    array[0], array[1] = _Payload(marker), "x"
    return array


def test_npy_and_npz_with_pickled_objects_are_refused(tmp_path):
    marker = tmp_path / "pwned"
    np.save(tmp_path / "evil.npy", _object_array(marker), allow_pickle=True)
    np.savez(tmp_path / "evil.npz", keys=_object_array(marker), vectors=np.zeros((2, 3)))
    with pytest.raises(UnsafeFileError, match=r"evil\.npy: holds pickled Python objects"):
        load_array(str(tmp_path / "evil.npy"))
    with pytest.raises(UnsafeFileError, match=r"evil\.npz: holds pickled Python objects"):
        load_arrays(str(tmp_path / "evil.npz"))
    assert not marker.exists()
    np.save(tmp_path / "ok.npy", np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(load_array(str(tmp_path / "ok.npy")), [0, 1, 2])


def test_entity_vector_loaders_refuse_a_crafted_npy(tmp_path):
    from interlingua.operators.wiki.entity_vectors import load_entity_vectors
    from interlingua.trainers.objectives.entity_vectors import load_npy_with_ids

    marker = tmp_path / "pwned"
    np.save(tmp_path / "vectors.npy", _object_array(marker), allow_pickle=True)
    (tmp_path / "vectors.ids.txt").write_text("Q1\nQ2\n", encoding="utf-8")
    with pytest.raises(UnsafeFileError):
        load_entity_vectors(str(tmp_path / "vectors.npy"))
    with pytest.raises(UnsafeFileError):
        load_npy_with_ids(str(tmp_path / "vectors.npy"), str(tmp_path / "vectors.ids.txt"))
    assert not marker.exists()


def test_embedding_cache_refuses_a_crafted_part(tmp_path):
    from interlingua.models.cache import CachedEncoder

    class Encoder:
        name, dim = "toy", 3

        def encode(self, texts):
            return np.ones((len(texts), 3), dtype=np.float32)

    marker = tmp_path / "pwned"
    cache = CachedEncoder(Encoder(), tmp_path / "cache")
    cache.encode(["hola"])  # a genuine part
    np.savez(cache.directory / "part-evil.npz", keys=_object_array(marker), vectors=np.zeros((2, 3)))
    with pytest.raises(UnsafeFileError, match="part-evil.npz"):
        CachedEncoder(Encoder(), tmp_path / "cache")
    assert not marker.exists()


def test_pickle_formats_are_refused_before_opening(tmp_path):
    from interlingua.models.averaged_word_vectors import from_keyed_vectors
    from interlingua.operators.wiki.wikipedia2vec_vectors import wikipedia2vec_entity_vectors

    marker = tmp_path / "pwned"
    for name in ("vectors.kv", "model.pkl"):
        (tmp_path / name).write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(UnsafeFileError, match=r"vectors\.kv: pickle-based files are never loaded.*save_word2vec_format"):
        from_keyed_vectors(str(tmp_path / "vectors.kv"))
    with pytest.raises(UnsafeFileError, match="never loaded"):
        wikipedia2vec_entity_vectors(str(tmp_path / "model.pkl"), lambda title: title)
    assert not marker.exists()


def test_wikipedia2vec_text_vectors_are_keyed_by_entity_id(tmp_path):
    from interlingua.operators.wiki.wikipedia2vec_vectors import wikipedia2vec_entity_vectors

    path = tmp_path / "vectors.txt"
    path.write_text("3 2\nparis 1 2\nENTITY/Paris 0.5 -1\nENTITY/New_York 3 4\n", encoding="utf-8")
    ids = {"Paris": "Q90", "New York": "Q60"}
    vectors = wikipedia2vec_entity_vectors(str(path), ids.get)
    assert sorted(vectors) == ["Q60", "Q90"]
    np.testing.assert_array_equal(vectors["Q90"], [0.5, -1.0])
    np.testing.assert_array_equal(vectors["Q60"], [3.0, 4.0])


#: Calls that unpickle what they read, unless given the safe option.
_UNSAFE_CALLS = {"pickle.load", "pickle.loads", "joblib.load", "cloudpickle.load", "cloudpickle.loads", "dill.load",
                 "KeyedVectors.load", "Wikipedia2Vec.load", "pd.read_pickle", "pandas.read_pickle", "yaml.unsafe_load",
                 "yaml.full_load"}


def _unsafe_calls(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        keywords = {k.arg: ast.unparse(k.value) for k in node.keywords}
        if name in _UNSAFE_CALLS:
            found.append(name)
        elif name in ("np.load", "numpy.load") and keywords.get("allow_pickle") != "False":
            found.append(f"{name} without allow_pickle=False")
        elif name == "torch.load" and keywords.get("weights_only") != "True":
            found.append("torch.load without weights_only=True")
        elif name == "yaml.load" and "Safe" not in keywords.get("Loader", ""):
            found.append("yaml.load without SafeLoader")
    return found


def test_the_scan_finds_each_unsafe_form():
    code = ("np.load(f)\nnp.load(f, allow_pickle=True)\ntorch.load(p)\npickle.loads(b)\nKeyedVectors.load(p)\n"
            "yaml.load(s)\nnp.load(f, allow_pickle=False)\ntorch.load(p, weights_only=True)\n"
            "yaml.load(s, Loader=yaml.SafeLoader)\n")
    assert len(_unsafe_calls(code)) == 6


def test_no_module_of_the_package_unpickles_what_it_reads():
    offenders = {}
    packages = ("core", "models", "operators", "trainers", "evaluation", "cluster", "workflows", "benchmarks")
    for path in sorted(p for package in packages for p in (PACKAGE_ROOT / package).rglob("*.py")):
        relative = path.relative_to(PACKAGE_ROOT).as_posix()
        found = _unsafe_calls(path.read_text(encoding="utf-8"))
        if found:
            offenders[relative] = found
    assert offenders == {}
