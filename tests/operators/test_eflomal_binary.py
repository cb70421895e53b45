"""eflomal's seeded binary: one copy per state folder under ``<state>/tmp``, run only while it is ours and unchanged."""

import hashlib
import os
import shutil
import stat
import subprocess
import sys

import pytest

from interlingua.operators.align import eflomal_backend


@pytest.fixture()
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def _plant(folder, binary, marker) -> None:
    """A program of someone else's at ``binary``: it would write ``marker`` if run."""
    with open(binary, "w") as handle:
        handle.write(f"#!/bin/sh\necho planted > {marker}\n")
    os.chmod(binary, 0o755)


def _folder_made_again_by_another_user(folder, binary, marker):
    shutil.rmtree(folder)  # a temporary-file cleaner removed it; someone made it again, open to all
    os.mkdir(folder)
    os.chmod(folder, 0o777)
    _plant(folder, binary, marker)


def _file_replaced(folder, binary, marker):
    os.unlink(binary)
    _plant(folder, binary, marker)


def _same_size_other_bytes(folder, binary, marker):
    image = open(binary, "rb").read()
    with open(binary, "wb") as handle:
        handle.write(image[:-1] + bytes([image[-1] ^ 1]))


def _writable_by_others(folder, binary, marker):
    os.chmod(binary, 0o777)


def _folder_a_link(folder, binary, marker):
    elsewhere = os.path.join(os.path.dirname(folder), "elsewhere")
    shutil.move(folder, elsewhere)
    _file_replaced(elsewhere, os.path.join(elsewhere, "eflomal"), marker)
    os.chmod(elsewhere, 0o700)
    os.symlink(elsewhere, folder)


def _file_a_link(folder, binary, marker):
    elsewhere = os.path.join(os.path.dirname(folder), "planted")
    _plant(folder, elsewhere, marker)
    os.unlink(binary)
    os.symlink(elsewhere, binary)


@pytest.mark.parametrize("tamper", [_folder_made_again_by_another_user, _file_replaced, _same_size_other_bytes,
                                    _writable_by_others, _folder_a_link, _file_a_link])
def test_a_binary_folder_removed_or_changed_meanwhile_is_written_again_not_run(state, tmp_path, tamper):
    """Only the existence of the binary was checked before each reuse: a folder removed during a long run (tmp
    cleaners) and made again by another local user ran their program as us for every later unit."""
    binary = eflomal_backend.seeded_binary_path()
    folder, image, marker = os.path.dirname(binary), open(binary, "rb").read(), tmp_path / "ran"
    tamper(folder, binary, marker)
    assert eflomal_backend.seeded_binary_path() == binary
    assert open(binary, "rb").read() == image and not os.path.islink(folder) and not os.path.islink(binary)
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700 and stat.S_IMODE(os.lstat(binary).st_mode) == 0o700
    subprocess.run([binary, "-h"], capture_output=True)
    assert not marker.exists()


def test_the_binary_lives_under_the_state_folder_and_is_shared_by_later_processes(state, tmp_path, monkeypatch):
    """Each process wrote its own copy into the system temporary folder, left behind by every Ray actor killed (they
    skip exit handlers): one copy per state folder now, in a private folder named by its content, which a later
    process uses as it is; each run's working folder (the corpus's text) is under <state>/tmp too, and removed."""
    code = "from interlingua.operators.align.eflomal_backend import seeded_binary_path; print(seeded_binary_path())"
    made = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=dict(os.environ, INTERLINGUA_HOME=str(state))).stdout.strip()
    digest = hashlib.sha256(open(made, "rb").read()).hexdigest()[:16]
    assert made == str(state / "tmp" / f"eflomal-{digest}" / "eflomal")
    assert stat.S_IMODE(os.lstat(os.path.dirname(made)).st_mode) == 0o700
    monkeypatch.setattr(eflomal_backend, "_write_binary", lambda *args: pytest.fail("written again"))
    assert eflomal_backend.seeded_binary_path() == made
    folders, run = [], subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: folders.append(kwargs.get("cwd")) or run(*args, **kwargs))
    pairs = [(["the", "house"], ["das", "haus"]), (["a", "book"], ["ein", "buch"])] * 5
    eflomal_backend.learn_eflomal_priors(pairs, str(tmp_path / "priors"))
    assert len(folders) == 1 and folders[0].startswith(str(state / "tmp" / "eflomal-run-"))
    assert os.listdir(state / "tmp") == [f"eflomal-{digest}"] and os.listdir(os.path.dirname(made)) == ["eflomal"]


def test_the_binary_is_put_in_place_whole(state, monkeypatch):
    """Two processes writing the copy at once must never start a half-written one: it is written under another name
    and renamed; a write that fails leaves nothing behind."""
    binary = eflomal_backend.seeded_binary_path()
    os.unlink(binary)
    seen = []
    monkeypatch.setattr(eflomal_backend, "_make_executable",
                        lambda path: (seen.append((path, os.path.exists(binary))), os.chmod(path, 0o700)))
    assert eflomal_backend.seeded_binary_path() == binary
    assert len(seen) == 1 and seen[0][0] != binary and not seen[0][1]  # not at its name until whole
    os.unlink(binary)
    monkeypatch.setattr(eflomal_backend, "_make_executable", lambda path: (_ for _ in ()).throw(OSError(28, "No space")))
    with pytest.raises(OSError):
        eflomal_backend.seeded_binary_path()
    assert os.listdir(os.path.dirname(binary)) == []
