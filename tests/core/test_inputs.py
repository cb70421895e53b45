"""User mistakes caught before Ray starts: missing or empty inputs, unwritable folders, temp files kept private."""

import os
import stat

import pytest

from interlingua.core.errors import UserError
from interlingua.core.inputs import require_distinct_files, require_input_files, require_writable
from interlingua.core.runtime import state_dir, state_tempdir


def test_missing_empty_and_folder_inputs_are_one_line_errors(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "ok.txt").write_text("a\n")
    require_input_files([str(tmp_path / "ok.txt")])
    with pytest.raises(UserError, match=r"input .*missing\.txt not found"):
        require_input_files([str(tmp_path / "ok.txt"), str(tmp_path / "missing.txt")])
    with pytest.raises(UserError, match=r"input .*empty\.txt is empty \(0 bytes\)"):
        require_input_files([str(tmp_path / "empty.txt")])
    with pytest.raises(UserError, match="is a folder"):
        require_input_files([str(tmp_path)])
    with pytest.raises(UserError, match=r"http://\*\*\*@127\.0\.0\.1:9/f\?token=\*\*\*"):  # credentials never shown
        require_input_files(["http://user:pw@127.0.0.1:9/f?token=abc"])
    require_input_files(["http://127.0.0.1:9/f", "s3://no-bucket/f.jsonl"], local_only=True)  # no network asked
    with pytest.raises(UserError, match=r"input .*missing\.txt not found"):
        require_input_files(["s3://no-bucket/f.jsonl", f"file://{tmp_path / 'missing.txt'}"], local_only=True)


def test_a_store_that_cannot_be_created_is_refused(tmp_path):
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(UserError, match=r"corpus store .*a-file/corpus is not writable: Not a directory"):
        require_writable(str(tmp_path / "a-file" / "corpus"), "corpus store")
    with pytest.raises(UserError, match=r"state folder .* cannot be created: .*hint: set INTERLINGUA_HOME"):
        state_dir(tmp_path / "a-file" / "state")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_store_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(UserError, match=r"corpus store .*locked/corpus is not writable: Permission denied"):
            require_writable(str(locked / "corpus"), "corpus store")
        with pytest.raises(UserError, match="state folder .* cannot be created"):
            state_dir(locked / "state")
    finally:
        locked.chmod(stat.S_IRWXU)
    require_writable(str(tmp_path / "fine" / "corpus"))
    assert (tmp_path / "fine" / "corpus").is_dir() and not list((tmp_path / "fine" / "corpus").iterdir())
    require_writable("memory://anything")  # remote: left to the write


def test_state_tempdir_is_private_under_the_state_folder_and_removed_on_errors(tmp_path):
    with state_tempdir("job-", tmp_path) as folder:
        assert os.path.dirname(folder) == str(tmp_path / "tmp")
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        (open(os.path.join(folder, "vocab.txt"), "w")).close()
    assert not os.path.exists(folder)
    with pytest.raises(RuntimeError), state_tempdir("job-", tmp_path) as folder:
        raise RuntimeError("boom")
    assert not os.path.exists(folder) and os.listdir(tmp_path / "tmp") == []


def test_an_output_that_is_an_input_or_another_output_is_refused(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("x")
    os.link(source, tmp_path / "hard.txt")  # another name of the same file
    with pytest.raises(UserError, match=r"^--out .*hard\.txt is the same file as --src .*in\.txt \(an input\): it would "
                                        r"be overwritten; give --out another file name$"):
        require_distinct_files({"--src": str(source)}, {"--out": str(tmp_path / "hard.txt")})
    with pytest.raises(UserError, match=r"--log .* is the same file as --out .* \(another output\)"):  # neither exists yet
        require_distinct_files({"--src": str(source)}, {"--out": str(tmp_path / "o"), "--log": str(tmp_path / "." / "o")})
    with pytest.raises(UserError, match=r"--out s3://b/k is the same file as --src s3://b/k"):
        require_distinct_files({"--src": "s3://b/k"}, {"--out": "s3://b/k"})
    require_distinct_files({"--src": str(source), "--tgt": str(source)}, {"--out": str(tmp_path / "o")})  # inputs may
