"""The names in <state>/tmp that eflomal's seeded binary is written under and gc sweeps by: one module says them."""

import hashlib
import os

import pytest

from interlingua.core import state_tmp


def test_this_users_folder_is_u_and_the_effective_uid_and_only_that_shape_is_a_users_folder(monkeypatch):
    if hasattr(os, "geteuid"):
        assert state_tmp.euid() == os.geteuid() and state_tmp.user_folder_name() == f"u{os.geteuid()}"
    monkeypatch.setattr(state_tmp, "euid", lambda: 1001)
    assert state_tmp.user_folder_name() == "u1001" and state_tmp.is_user_folder_name("u1001")
    monkeypatch.setattr(state_tmp, "euid", lambda: None)  # no user ids (Windows): no folder of one's own
    assert state_tmp.user_folder_name() is None
    for name in ("u", "u12x", "U12", "w2v-u12", "u12/"):
        assert not state_tmp.is_user_folder_name(name), name


@pytest.mark.parametrize("image", [b"", b"\x7fELF seeded"])
def test_a_binary_folder_is_eflomal_and_16_digits_of_the_images_sha256(image):
    name = state_tmp.binary_folder_name(image)
    assert name == "eflomal-" + hashlib.sha256(image).hexdigest()[:16]
    assert state_tmp.is_binary_folder_name(name)
    for other in ("eflomalx", "run-eflomal-1", "eflomal-run-x", name + "0", name[:-1], name.upper(), name + "/"):
        assert not state_tmp.is_binary_folder_name(other), other
