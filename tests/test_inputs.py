"""Reading the files a user names (:mod:`bnilp.inputs`): a device is refused, the rest read whole in chunks, and a
stream past the free memory stops as a limit — ``/dev/zero`` as the data, the knowledge or a warm start was read
until the kernel killed the process (exit 137, deaf to SIGTERM; a review)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

import bnilp.inputs as inputs
from bnilp.cli import main
from bnilp.data import default_path
from bnilp.errors import InputError, LimitError

DEVICE = "/dev/zero"
needs_device = pytest.mark.skipif(not os.path.exists(DEVICE), reason="no /dev/zero on this system")


@needs_device
@pytest.mark.parametrize("args", [
    ["learn", DEVICE, "-q"],
    ["learn", str(default_path("asia.csv")), "-q", "--knowledge", DEVICE],
    ["learn", str(default_path("asia.csv")), "-q", "--warm-start", DEVICE],
    ["solve", DEVICE, "-q"],
    ["compare", DEVICE, DEVICE],
])
def test_a_device_named_as_an_input_is_refused_in_one_line(args) -> None:
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert lines == [f"bnilp: error: {DEVICE}: a device, not a file: give a file (or a pipe) to read"]


def test_a_file_is_read_whole_in_chunks_with_its_newlines_as_asked(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(inputs, "READ_CHUNK", 3)
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xef\xbb\xbfa,b\r\n1,\xc3\xa9\r2\n")
    assert inputs.read_input_bytes(path) == path.read_bytes()
    assert inputs.read_input_text(path, "utf-8-sig") == "a,b\n1,é\n2\n" == path.open(encoding="utf-8-sig").read()
    assert inputs.read_input_text(path, "utf-8-sig", universal_newlines=False) == "a,b\r\n1,é\r2\n"


def test_a_stream_past_the_free_memory_is_a_limit_naming_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(inputs, "READ_CHUNK", 4)
    monkeypatch.setattr(inputs, "free_memory", lambda: 30)        # bytes: 4 × 8 read > 30
    path = tmp_path / "big.csv"
    path.write_text("a,b\n" * 10)
    with pytest.raises(LimitError, match=r"big\.csv: out of memory reading it"):
        inputs.read_input_bytes(path)


@needs_device
def test_the_reader_refuses_a_device_before_reading_it() -> None:
    with pytest.raises(InputError, match=r"/dev/zero: a device, not a file"):
        inputs.read_input_bytes(DEVICE)
