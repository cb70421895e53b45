"""eflomal's seeded binary: one copy per state folder under ``<state>/tmp``, run only while it is ours and unchanged."""

import hashlib
import os
import re
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
    assert made == str(state / "tmp" / f"u{os.geteuid()}" / f"eflomal-{digest}" / "eflomal")
    assert stat.S_IMODE(os.lstat(os.path.dirname(made)).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(state / "tmp" / f"u{os.geteuid()}").st_mode) == 0o700
    monkeypatch.setattr(eflomal_backend, "_write_binary", lambda *args: pytest.fail("written again"))
    assert eflomal_backend.seeded_binary_path() == made
    folders, run = [], subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: folders.append(kwargs.get("cwd")) or run(*args, **kwargs))
    pairs = [(["the", "house"], ["das", "haus"]), (["a", "book"], ["ein", "buch"])] * 5
    eflomal_backend.learn_eflomal_priors(pairs, str(tmp_path / "priors"))
    assert len(folders) == 1 and folders[0].startswith(str(state / "tmp" / "eflomal-run-"))
    assert os.listdir(state / "tmp") == [f"u{os.geteuid()}"] and os.listdir(os.path.dirname(made)) == ["eflomal"]
    assert os.listdir(state / "tmp" / f"u{os.geteuid()}") == [f"eflomal-{digest}"]


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


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="gives a folder to another user (chown)")
def test_each_user_of_a_shared_state_folder_has_their_own_binary_and_leaves_the_others_alone(state):
    """A shared state folder: the first user's private <state>/tmp/eflomal-<digest> could be neither used nor removed
    by the next one (eflomal failed for everyone after the first), or root removed it from under its owner. Each user
    now has a private <state>/tmp/u<uid>/ of their own; another user's folders are left as they are."""
    image = eflomal_backend._seeded_binary()
    name = eflomal_backend.binary_folder_name(image)
    others = [state / "tmp" / name, state / "tmp" / "u1000" / name]  # the old layout's, and user 1000's own
    for folder in others:
        folder.mkdir(parents=True)
        (folder / "eflomal").write_bytes(image)
        for path in (folder.parent, folder, folder / "eflomal"):
            os.chmod(path, 0o700)
            os.chown(path, 1000, 1000)
    eflomal_backend.require_runnable()
    assert eflomal_backend.seeded_binary_path() == str(state / "tmp" / f"u{os.geteuid()}" / name / "eflomal")
    for folder in others:
        assert folder.lstat().st_uid == 1000 and (folder / "eflomal").read_bytes() == image


def test_a_per_user_folder_that_is_not_ours_is_one_line_and_one_of_ours_open_to_others_is_made_private(state, tmp_path):
    from interlingua.core.errors import UserError

    mine = state / "tmp" / f"u{os.geteuid()}"
    mine.mkdir(parents=True)
    os.chmod(mine, 0o777)
    eflomal_backend.require_runnable()
    assert stat.S_IMODE(mine.lstat().st_mode) == 0o700
    shutil.rmtree(mine)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    mine.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UserError, match=rf"^{re.escape(str(mine))} is not a private folder of this user .*a symbolic "
                                        r"link\): eflomal's seeded binary is not written there \(hint: set "
                                        r"INTERLINGUA_HOME to a state folder of your own\)$"):
        eflomal_backend.require_runnable()
    assert os.listdir(tmp_path / "elsewhere") == []


def test_the_folder_is_named_and_owned_by_the_one_user_id_state_tmp_gives(state, monkeypatch):
    """The backend bound its own euid while user_folder_name() read state_tmp's: a user id patched (or changed) there
    named u<id> while the ownership checks still compared with the process's id, so another id's folder passed."""
    from interlingua.core import state_tmp
    from interlingua.core.errors import UserError

    other = os.geteuid() + 1
    monkeypatch.setattr(state_tmp, "euid", lambda: other)
    with pytest.raises(UserError, match=rf"u{other} is not a private folder of this user \(owner uid {os.geteuid()}"):
        eflomal_backend.user_tempdir()


def test_the_binary_run_is_the_file_checked_not_one_put_at_its_path_since(state, tmp_path, monkeypatch):
    """The binary was checked, then started by its path: a file put there in between was run. Where /proc/self/fd
    exists the checked file is started through its descriptor (argv[0] still its path); the links are unchanged."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd: the binary is started by its path")
    marker, run = tmp_path / "ran", subprocess.run
    started = []

    def swapped_first(args, **kwargs):
        _file_replaced(os.path.dirname(args[0]), args[0], marker)
        started.append(args[0])
        return run(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", swapped_first)
    eflomal_backend.require_runnable()
    pairs = [(["the", "house"], ["das", "haus"]), (["a", "book"], ["ein", "buch"])] * 5
    eflomal_backend.learn_eflomal_priors(pairs, str(tmp_path / "swapped"))
    assert not marker.exists() and len(started) == 2 and started[0].endswith("/eflomal")
    monkeypatch.setattr(subprocess, "run", run)
    eflomal_backend.learn_eflomal_priors(pairs, str(tmp_path / "plain"))
    assert (tmp_path / "swapped" / "eflomal_priors.txt").read_bytes() == (tmp_path / "plain" / "eflomal_priors.txt").read_bytes()


def test_a_tmp_folder_that_cannot_be_written_or_a_binary_that_hangs_is_one_line(state, monkeypatch):
    """require_runnable caught only OSError from starting the binary: writing it under an unusable <state>/tmp (the
    corpus store elsewhere) or a start that timed out was an unexpected error with a traceback."""
    from interlingua.core.errors import UserError

    state.mkdir()
    (state / "tmp").write_text("not a folder")
    with pytest.raises(UserError, match=r"^cannot write eflomal's seeded binary under .*tmp \(File exists\) \(hint: set "
                                        "INTERLINGUA_HOME to a state folder of your own that you may write to\\)$"):
        eflomal_backend.require_runnable()
    (state / "tmp").unlink()

    def hangs(args, **kwargs):
        raise subprocess.TimeoutExpired(args, kwargs["timeout"])

    monkeypatch.setattr(subprocess, "run", hangs)
    with pytest.raises(UserError, match=r"^eflomal's seeded binary .*/eflomal did not print its usage within 60 s "
                                        r"\(hint: check this machine's load, or remove .* to have it written again\)$"):
        eflomal_backend.require_runnable()


def test_a_start_refused_as_text_file_busy_is_tried_again(monkeypatch):
    """A process another thread forked while this one wrote the binary holds its write handle until it execs: the
    first start of the new binary can fail with ETXTBSY."""
    import errno

    calls = []

    def start(argv, **kwargs):
        calls.append(argv)
        if len(calls) == 1:
            raise OSError(errno.ETXTBSY, "Text file busy")
        return subprocess.CompletedProcess(argv, 1)

    monkeypatch.setattr(subprocess, "run", start)
    binary = eflomal_backend.VerifiedBinary("/state/tmp/u0/eflomal-0123456789abcdef/eflomal", 99)
    assert binary.run(["-h"]).returncode == 1 and calls == [[binary.path, "-h"]] * 2
    monkeypatch.setattr(subprocess, "run", lambda argv, **kwargs: (_ for _ in ()).throw(OSError(errno.EACCES, "no")))
    with pytest.raises(PermissionError):  # any other refusal is not tried again
        binary.run(["-h"])
