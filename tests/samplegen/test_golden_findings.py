"""bench/golden_findings.py proves a rewritten engine gives the big batches the same
review: its check passes on the recording it made, fails showing the difference when a
finding changed, and refuses to compare when the batch is not the one recorded."""

from __future__ import annotations

import importlib.util
import sys

from tests.engine.golden_lines import read_lines, write_lines
from tests.services import ROOT

SMALL = ["--sizes", "2000", "--stale-sizes", ""]


def bench_module(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location(
        "golden_findings", ROOT / "bench/golden_findings.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "GOLDEN", tmp_path / "golden")
    monkeypatch.setattr(module.review_scale, "OUT", tmp_path / "out")
    return module


def test_the_check_passes_on_its_recording_and_shows_a_changed_finding(
    tmp_path, monkeypatch, capsys
):
    bench = bench_module(tmp_path, monkeypatch)
    assert bench.main(["--record", *SMALL, "--keep"]) == 0
    assert bench.main(["--check", *SMALL, "--reuse", "--keep"]) == 0
    assert "| scale-2000-42 | 2,000 |" in capsys.readouterr().out

    recording = tmp_path / "golden" / "scale-2000-42.jsonl.gz"
    lines = read_lines(recording)
    at = next(i for i, line in enumerate(lines) if b'"severity":"warning"' in line)
    lines[at] = lines[at].replace(b'"severity":"warning"', b'"severity":"critical"')
    write_lines(recording, lines)
    assert bench.main(["--check", *SMALL, "--reuse", "--keep"]) == 1
    out = capsys.readouterr().out
    assert f"- {lines[at].decode()}" in out
    assert "(changed: severity)" in out


def test_the_check_refuses_a_batch_that_is_not_the_one_recorded(tmp_path, monkeypatch, capsys):
    bench = bench_module(tmp_path, monkeypatch)
    assert bench.main(["--check", *SMALL]) == 2
    assert "no recording at" in capsys.readouterr().out

    assert bench.main(["--record", *SMALL, "--keep"]) == 0
    batch = tmp_path / "out" / "scale-2000-42.json"
    batch.write_bytes(batch.read_bytes().replace(b"co_", b"cx_"))
    assert bench.main(["--check", *SMALL, "--reuse"]) == 2
    assert "the batch is not the one recorded" in capsys.readouterr().out
    assert not batch.exists()  # without --keep the generated batch goes
