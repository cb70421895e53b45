"""User mistakes end as one line on stderr, exit 2, before Ray starts (nothing of Ray is imported or started); a
service that does not answer (a tracking server, a cluster address) is one line too, with exit 69."""

import sys

import pytest

from interlingua.workflows.cli import main


@pytest.fixture()
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    return tmp_path


def _run(capsys, *argv) -> tuple[int, str]:
    code = main(["run", "bitext-corpus", *argv])
    err = capsys.readouterr().err
    return code, "\n".join(line for line in err.splitlines() if not line.startswith("[interlingua]"))


def _ray_started() -> bool:
    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


def test_empty_input_file(state, capsys):
    (state / "e.en").write_bytes(b"")
    (state / "e.de").write_bytes(b"")
    code, err = _run(capsys, "--set", f"source={state / 'e.en'}", "--set", f"target={state / 'e.de'}")
    assert code == 2 and len(err.splitlines()) == 1 and not _ray_started()
    assert "e.en is empty (0 bytes)" in err


def test_missing_input_and_credentials_in_its_url(state, capsys):
    (state / "x").write_text("x\n")  # a local file missing would be found first (by the command, before the run)
    code, err = _run(capsys, "--set", "source=http://user:hunter2@127.0.0.1:9/raw.en?token=abc",
                     "--set", f"target={state / 'x'}")
    assert code == 2 and len(err.splitlines()) == 1 and not _ray_started()
    assert "hunter2" not in err and "abc" not in err and "http://***@127.0.0.1:9/raw.en?token=***" in err


def test_path_like_corpus_name(state, capsys):
    (state / "a.en").write_text("x\n")
    code, err = _run(capsys, "--set", "corpus_name=../../evil", "--set", f"source={state / 'a.en'}",
                     "--set", f"target={state / 'a.en'}")
    assert code == 2 and "corpus_name = '../../evil'" in err and "not a safe name" in err
    assert not (state / "evil").exists() and not _ray_started()


def test_unwritable_store(state, capsys):
    (state / "a.en").write_text("x\n")
    (state / "file").write_text("not a folder")
    code, err = _run(capsys, "--set", f"source={state / 'a.en'}", "--set", f"target={state / 'a.en'}",
                     "--set", f"store_root={state / 'file' / 'store'}")
    assert code == 2 and len(err.splitlines()) == 1 and "is not writable" in err and not _ray_started()


def test_missing_config_file(state, capsys):
    code, err = _run(capsys, "-c", str(state / "nope.yaml"))
    assert code == 2 and "nope.yaml not found" in err and len(err.splitlines()) == 1


def test_a_config_key_given_twice_beside_a_merge_key(state, capsys):
    (state / "c.yaml").write_text(f"paths: &p {{target: {state / 'b.de'}}}\nsource: {state / 'a.en'}\n"
                                  f"source: {state / 'b.en'}\n<<: *p\n")
    code, err = _run(capsys, "-c", str(state / "c.yaml"))
    assert code == 2 and len(err.splitlines()) == 1 and not _ray_started()
    assert "c.yaml, line 3: key 'source' is given twice (first on line 2); YAML keeps only the last, so remove one" in err


def test_the_address_of_an_earlier_commands_local_ray_is_not_a_cluster_to_reach(state, capsys, monkeypatch):
    from interlingua.core.runtime import OWN_RAY_ADDRESS, chosen_ray_address

    # an earlier command in this process started a local Ray (gone now) and recorded its address in both variables
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")
    monkeypatch.setenv(OWN_RAY_ADDRESS, "127.0.0.1:9")
    assert chosen_ray_address() is None and chosen_ray_address("127.0.0.1:9") is None
    assert chosen_ray_address("10.0.0.5:6379") == "10.0.0.5:6379"
    (state / "e.en").write_bytes(b"")
    (state / "e.de").write_bytes(b"")
    code, err = _run(capsys, "--set", f"source={state / 'e.en'}", "--set", f"target={state / 'e.de'}")
    assert code == 2 and "e.en is empty (0 bytes)" in err and "cannot reach" not in err
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:10")  # one the user set: checked before anything starts
    assert chosen_ray_address() == "127.0.0.1:10"
    code, err = _run(capsys, "--set", f"source={state / 'e.en'}", "--set", f"target={state / 'e.de'}")
    assert code == 69 and "cannot reach a Ray cluster at 127.0.0.1:10" in err  # a service down, not a mistake


def _one_task_pack(folder) -> str:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from interlingua.evaluation.pack.build import MANIFEST, PACK_VERSION

    folder.mkdir()
    pq.write_table(pa.table({"source": ["a"], "target": ["b"]}), folder / "r.parquet")
    (folder / MANIFEST).write_text(json.dumps({"version": PACK_VERSION, "tasks": [
        {"name": "r", "kind": "retrieval", "language": "en-de", "file": "r.parquet"}]}))
    return str(folder)


def test_output_paths_are_checked_before_the_work(state, capsys, monkeypatch):
    """An output that cannot be written used to fail after the alignment (Ray started), the evaluation or the
    model load; a --mlflow-run naming no run, after the evaluation."""
    import interlingua.models.resolve as resolve

    monkeypatch.setattr(resolve, "resolve_encoder", lambda *a, **k: pytest.fail("a model was loaded"))
    (state / "a.en").write_text("a b\n")
    (state / "a.de").write_text("x y\n")
    blocked = state / "file"
    blocked.write_text("a file, not a folder")
    pack = _one_task_pack(state / "pack")  # the chosen tasks are checked first (no --out is made for a refused run)
    cases = [
        (["align", "--src", str(state / "a.en"), "--tgt", str(state / "a.de"), "--out", str(blocked / "out.txt")], "--out"),
        (["align", "--src", str(state / "a.en"), "--tgt", str(state / "a.de"), "--out", str(state)], "is a folder"),
        (["embed", "--model", "x", "hello", "--out", str(blocked / "v.npy")], "is not writable: File exists"),
        (["eval", "--model", "x", "--pack", pack, "--out", str(blocked / "o")], "--out folder"),
        (["eval", "--model", "x", "--pack", pack, "--out", str(state / "o"), "--mlflow-run", "0" * 32], "no such run"),
    ]
    for argv, message in cases:
        code = main(argv)
        err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
        assert code == 2 and len(err) == 1 and message in err[0], (argv, err)
        assert not _ray_started()


def test_a_temporary_folder_eflomal_cannot_run_from_is_one_line_before_ray_starts(state, capsys, monkeypatch):
    """A noexec temporary folder was found only inside the first actor's eflomal run (one line of a Ray traceback):
    `align --aligner eflomal` and `bitext-corpus` with `aligner: eflomal` now refuse it before Ray starts."""
    import interlingua.core.runtime as runtime

    from ..operators.test_align_eflomal import binary_copies_cannot_run

    (state / "a.en").write_text("the house\nthe book\na small house\n" * 4)
    (state / "a.de").write_text("das haus\ndas buch\nein kleines haus\n" * 4)
    align = ["align", "--src", str(state / "a.en"), "--tgt", str(state / "a.de"), "--out", str(state / "o.txt"),
             "--aligner", "eflomal"]
    assert main([*align, "--save-params", str(state / "priors")]) == 0
    capsys.readouterr()
    binary_copies_cannot_run(monkeypatch)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    for argv in ([*align, "--params", str(state / "priors"), "--workers", "2"],
                 ["run", "bitext-corpus", "--set", f"source={state / 'a.en'}", "--set", f"target={state / 'a.de'}",
                  "--set", "aligner=eflomal", "--set", f"store_root={state / 'store'}"]):
        code = main(argv)
        err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
        assert code == 2 and len(err) == 1 and not _ray_started(), (argv, err)
        assert "cannot run eflomal's seeded binary" in err[0] and "set INTERLINGUA_HOME to a state folder on a file system mounted with exec" in err[0]


def test_bench_pack_refuses_a_missing_assets_folder_and_a_file_as_out(state, capsys):
    (state / "taken").write_text("x")
    for argv, message in ((["--assets", str(state / "nope"), "--out", str(state / "pack")], "is not a folder"),
                          (["--assets", str(state), "--out", str(state / "taken")], "is a file")):
        assert main(["bench-pack", *argv]) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
        assert len(err) == 1 and message in err[0]
    assert not (state / "pack").exists()


def test_corpus_prune_of_an_unknown_name_and_a_store_whose_driver_is_missing(state, capsys):
    """``corpus prune NOSUCH`` said "deleted 0 version(s)" with exit 0; an s3:// root without s3fs was an
    unexpected ImportError."""
    import importlib.util

    (state / "store").mkdir()  # an empty store (a --root that does not exist is refused)
    assert main(["corpus", "prune", "nosuch", "--keep", "1", "--root", str(state / "store")]) == 2
    assert "no published corpus named 'nosuch'" in capsys.readouterr().err
    if importlib.util.find_spec("s3fs") is None:
        assert main(["corpus", "list", "--root", "s3://bucket/x"]) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
        assert len(err) == 1 and "needs a package that is not installed" in err[0] and "s3fs" in err[0]


@pytest.mark.parametrize("message", ["Install s3fs to access S3", "Please install gcsfs to access Google Storage"])
def test_a_url_whose_driver_is_missing_is_one_line_in_every_command(state, capsys, monkeypatch, message):
    """embed / eval / refresh with an s3:// URL and no s3fs said "failed: ImportError: Install s3fs..." (exit 1, as
    for a bug); a credential in the URL stays out of the line. fsspec words its registry's messages differently."""
    def missing(*args, **kwargs):
        raise ImportError(message)

    monkeypatch.setattr("fsspec.core.url_to_fs", missing)
    monkeypatch.setattr("fsspec.open", missing)
    assert main(["embed", "--model", "s3://KEY:SECRET@bucket/enc", "hello"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
    assert err == [f"interlingua embed: error: a URL given needs a package that is not installed: {message} (hint: pip "
                   "install it into this environment)"]


def test_a_tracking_server_that_does_not_answer_is_one_line_at_once(state, capsys, monkeypatch):
    """MLflow's client retried for about four minutes before reporting a server that is down."""
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://user:hunter2@127.0.0.1:{port}")
    (state / "state").mkdir()  # gc reads an existing state folder
    for argv in (["gc", "--dry-run"], ["embed", "--model", "models:/x/1", "hello"]):
        assert main(argv) == 69  # EX_UNAVAILABLE: a script may retry; a mistake would be 2
        err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
        assert len(err) == 1 and "does not answer" in err[0] and "hunter2" not in err[0]


def test_a_malformed_service_address_is_a_mistake_not_an_outage(state, capsys, monkeypatch):
    """A tracking URI or a cluster address that names no host (or no port) is the user's to fix: exit 2, as any
    mistake, not the 69 of a well-formed address where nothing answers."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://:5000")
    (state / "state").mkdir()  # gc reads an existing state folder
    assert main(["gc", "--dry-run"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
    assert len(err) == 1 and "names no host" in err[0]
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    (state / "e.en").write_text("a\n")
    (state / "e.de").write_text("b\n")
    code, err = _run(capsys, "--set", f"source={state / 'e.en'}", "--set", f"target={state / 'e.de'}",
                     "--address", "just-a-host")
    assert code == 2 and len(err.splitlines()) == 1 and "expected HOST:PORT" in err and not _ray_started()


def test_gc_of_a_state_folder_that_does_not_exist(state, capsys):
    assert main(["gc", "--dry-run", "--state-dir", str(state / "typo")]) == 2
    assert f"state folder {state / 'typo'} (from --state-dir) does not exist" in capsys.readouterr().err
    assert not (state / "typo").exists()


def test_gc_of_a_mistyped_interlingua_home_is_one_line_and_makes_no_folder(state, capsys):
    """gc with INTERLINGUA_HOME naming no folder made it, and its log in it, and collected nothing (exit 0)."""
    assert main(["gc", "--dry-run"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
    assert err == [f"interlingua gc: error: state folder {state / 'state'} (from INTERLINGUA_HOME) does not exist "
                   "(hint: check INTERLINGUA_HOME; a workflow run makes it, e.g. `interlingua run quickstart`)"]
    assert not (state / "state").exists()


def test_gc_names_a_file_given_as_its_state_folder(state, tmp_path, capsys):
    """``gc --state-dir FILE`` said the folder "does not exist"."""
    (tmp_path / "afile").write_text("x")
    assert main(["gc", "--state-dir", str(tmp_path / "afile")]) == 2
    assert f"state folder {tmp_path / 'afile'} (from --state-dir) is a file, not a folder" in capsys.readouterr().err
    assert main(["gc", "--state-dir", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
