"""bench/load_floor.py puts a floor under issue 28's load + dedup target; the floor only
means something if its bare decode reads the same records and fields revreview reads."""

from __future__ import annotations

import importlib.util
import sys
from datetime import UTC, datetime

from reviews.engine.ingest import Limits, UploadedFile, parse_upload
from reviews.samplegen import write_sample
from tests.services import ROOT


def floor_module():
    spec = importlib.util.spec_from_file_location("load_floor", ROOT / "bench/load_floor.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its msgspec structs look their module up
    spec.loader.exec_module(module)
    return module


def test_the_bare_decode_reads_what_revreview_reads(tmp_path):
    floor = floor_module()
    path, _ = write_sample(tmp_path / "b.json", 2_000, seed=3)
    data = path.read_bytes()
    bare = floor.msgspec.json.decode(data, type=floor._DedupFields)
    upload = [UploadedFile(name=path.name, data=data)]
    batch = parse_upload(
        upload, as_of=None, received_at=datetime.now(UTC), limits=Limits(max_bytes=len(data) + 1)
    )
    assert [c.id for c in bare.companies] == [c.id for c in batch.companies]
    assert [c.id for c in bare.contacts] == [c.id for c in batch.contacts]
    assert [d.id for d in bare.deals] == [d.id for d in batch.deals]
    # the same values, as given; revreview drops a malformed one (an invalid_value finding)
    read = [
        (raw.email, ours.email) for raw, ours in zip(bare.contacts, batch.contacts, strict=True)
    ]
    read += [
        (raw.companyId, ours.company_id) for raw, ours in zip(bare.deals, batch.deals, strict=True)
    ]
    assert all(ours in (raw, None) for raw, ours in read)
    assert sum(ours is None and raw is not None for raw, ours in read) < len(read) / 50
    # one_pass groups every record of the three lists: as many groups as distinct keys
    distinct = (
        len({c.domain for c in bare.companies})
        + len({c.email for c in bare.contacts})
        + len({d.companyId for d in bare.deals})
    )
    assert floor.one_pass(bare) == distinct


def test_it_prints_the_floor_beside_revreview_and_the_budget(tmp_path, capsys):
    floor = floor_module()
    path, _ = write_sample(tmp_path / "b.json", 1_000, seed=4)
    assert floor.main([str(path), "--repeat", "1", "--peer-seconds", "4"]) == 0
    out = capsys.readouterr().out
    assert "| floor: the three above |" in out
    assert "| revreview: load + dedup |" in out
    assert "budget (half the fastest peer's 4.00 s): 2.00 s" in out
