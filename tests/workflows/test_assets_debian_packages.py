"""Tests for the Debian package check/install helper (no package is installed by these tests)."""

import shutil

import pytest

from interlingua.workflows.assets.debian_packages import (
    MissingDebianPackagesError,
    ensure_debian_packages,
    installed_debian_packages,
    require_debian_packages,
    validate_package_names,
)

NOT_A_PACKAGE = "interlingua-no-such-package-xyz"


def test_validate_package_names_sorts_and_deduplicates():
    assert validate_package_names(["sword-text-kjv", "diatheke", "diatheke"]) == ("diatheke", "sword-text-kjv")


@pytest.mark.parametrize("bad", ["Diatheke", "a", "pkg name", "-x", ""])
def test_validate_package_names_rejects_invalid_names(bad):
    with pytest.raises(ValueError, match="pkgs"):
        validate_package_names([bad])


def test_validate_package_names_rejects_empty_list():
    with pytest.raises(ValueError, match="at least one"):
        validate_package_names([])


def test_negative_lock_timeout_is_rejected():
    with pytest.raises(ValueError, match="lock_timeout_s"):
        ensure_debian_packages(["dpkg"], lock_timeout_s=-1)


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs dpkg (a Debian-based system)")
def test_report_lists_installed_and_missing_without_installing():
    report = ensure_debian_packages(["dpkg", NOT_A_PACKAGE], install=False)
    assert report.installed == ("dpkg",)
    assert report.missing == (NOT_A_PACKAGE,)
    assert report.newly_installed == ()
    assert not report.ok
    assert NOT_A_PACKAGE in report.message and "install=False" in report.message
    assert f"apt-get install -y --no-install-recommends {NOT_A_PACKAGE}" in report.message


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs dpkg (a Debian-based system)")
def test_installed_packages_query_and_ok_report():
    assert installed_debian_packages(["dpkg", NOT_A_PACKAGE]) == {"dpkg"}
    assert ensure_debian_packages(["dpkg"], install=False).ok


def test_require_raises_naming_the_asset_and_package():
    with pytest.raises(MissingDebianPackagesError, match=f"cannot build the test asset: .*{NOT_A_PACKAGE}"):
        require_debian_packages([NOT_A_PACKAGE], asset="the test asset", install=False)
