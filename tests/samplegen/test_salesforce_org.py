"""samples/salesforce/: the org of reviews.samplegen.salesforce_org as the weekly Data
Export writes it, planting every lead kind (which the generated JSON samples cannot,
Kind.only_from) and the Salesforce problems of issue 39."""

from __future__ import annotations

from pathlib import Path

from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS, NAMES, detector
from reviews.samplegen.salesforce_org import AS_OF, data_export

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "salesforce"


def test_the_committed_sample_is_the_orgs_data_export():
    assert {p.name: p.read_bytes() for p in SAMPLE.glob("*.csv")} == data_export()


def test_the_sample_plants_every_lead_kind_and_the_salesforce_problems():
    files = [UploadedFile(p.name, p.read_bytes()) for p in sorted(SAMPLE.glob("*.csv"))]
    batch = parse_upload(files, as_of=None, received_at=AS_OF)
    found = {f.kind for name in NAMES for f in detector(name)(batch, Rules())}
    leads = {name for name, kind in KINDS.items() if name.startswith("lead_")}
    assert leads == {name for name, kind in KINDS.items() if "leads" in kind.only_from}
    assert leads <= found
    assert {
        "company_same_domain",  # a duplicate account
        "contact_wrong_company",
        "won_without_close_date",
        "open_past_close_date",
    } <= found
    assert batch.as_of == AS_OF  # the newest LastModifiedDate
    assert {d.currency for d in batch.deals} == {"USD", "EUR"}
