"""One path opened without following a link at its name (core.no_follow): a temporary folder's lock probe, eflomal's
private folder and its seeded binary all open it through these two functions."""

import errno
import os

import pytest

from interlingua.core.no_follow import open_file_no_follow, open_folder_no_follow


def test_a_folder_opens_and_a_link_to_one_is_refused(tmp_path):
    folder = tmp_path / "real"
    folder.mkdir()
    (folder / "inside").write_text("x")
    handle = open_folder_no_follow(str(folder))
    try:
        assert os.listdir(handle) == ["inside"]
    finally:
        os.close(handle)
    (tmp_path / "link").symlink_to(folder)
    with pytest.raises(OSError) as refused:
        open_folder_no_follow(str(tmp_path / "link"))
    assert refused.value.errno in (errno.ELOOP, errno.ENOTDIR)
    with pytest.raises(NotADirectoryError):
        open_folder_no_follow(str(folder / "inside"))


def test_a_folder_opens_relative_to_a_parent_descriptor_and_a_link_there_is_refused(tmp_path):
    (tmp_path / "child").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "child")
    parent = os.open(tmp_path, os.O_RDONLY)
    try:
        child = open_folder_no_follow("child", dir_fd=parent)
        os.close(child)
        with pytest.raises(OSError) as refused:
            open_folder_no_follow("link", dir_fd=parent)
        assert refused.value.errno in (errno.ELOOP, errno.ENOTDIR)
    finally:
        os.close(parent)


def test_a_file_opens_to_read_and_a_link_to_one_is_refused(tmp_path):
    (tmp_path / "file").write_bytes(b"image")
    handle = open_file_no_follow(str(tmp_path / "file"))
    try:
        assert os.read(handle, 10) == b"image"
        assert not os.get_inheritable(handle)
    finally:
        os.close(handle)
    (tmp_path / "link").symlink_to(tmp_path / "file")
    with pytest.raises(OSError) as refused:
        open_file_no_follow(str(tmp_path / "link"))
    assert refused.value.errno == errno.ELOOP
