"""`prepended` puts a folder first on a search path for what runs inside, and leaves the variable as it found it."""

import os

from warp_fix.environ import prepended


def test_the_folder_comes_first_inside_and_the_old_value_is_back_after(monkeypatch):
    monkeypatch.setenv("WARP_FIX_EXAMPLE_PATH", "/usr/bin")
    with prepended("WARP_FIX_EXAMPLE_PATH", "/opt/venv/bin"):
        assert os.environ["WARP_FIX_EXAMPLE_PATH"] == os.pathsep.join(["/opt/venv/bin", "/usr/bin"])
    assert os.environ["WARP_FIX_EXAMPLE_PATH"] == "/usr/bin"


def test_an_unset_variable_is_the_folder_alone_inside_and_unset_again_after(monkeypatch):
    monkeypatch.delenv("WARP_FIX_EXAMPLE_PATH", raising=False)
    with prepended("WARP_FIX_EXAMPLE_PATH", "/opt/vendor"):
        assert os.environ["WARP_FIX_EXAMPLE_PATH"] == "/opt/vendor"
    assert "WARP_FIX_EXAMPLE_PATH" not in os.environ


def test_the_variable_is_restored_when_the_body_raises(monkeypatch):
    monkeypatch.setenv("WARP_FIX_EXAMPLE_PATH", "/usr/bin")
    try:
        with prepended("WARP_FIX_EXAMPLE_PATH", "/opt/venv/bin"):
            raise RuntimeError("the example failed")
    except RuntimeError:
        pass
    assert os.environ["WARP_FIX_EXAMPLE_PATH"] == "/usr/bin"
