"""Salesforce's shapes one at a time, as a QA pass found them misread: report labels of a
multi-currency org, reports saved as XLSX, files without their id column, Data Loader
files under other names, and where an invalid value sits in the file."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reviews.engine.ingest import IngestError, UploadedFile, parse_upload
from reviews.samplegen import salesforce_org as org

OPP_ID = "0065g00000AbCdE"


def parse(*files: tuple[str, str | bytes]):
    uploads = [UploadedFile(n, d.encode() if isinstance(d, str) else d) for n, d in files]
    return parse_upload(uploads, as_of=org.AS_OF, received_at=org.AS_OF)


def errors(*files: tuple[str, str | bytes]) -> list[str]:
    with pytest.raises(IngestError) as caught:
        parse(*files)
    return caught.value.errors


# --- currencies ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label", ["Amount Currency", "Opportunity Currency", "AMOUNT CURRENCY", "Currency"]
)
def test_a_multi_currency_reports_currency_column_is_the_opportunitys_currency(label):
    # A multi-currency org's report export writes each currency field's code in a column
    # of its own before it ("Amount Currency"), the converted amount's too.
    report = (
        f"Opportunity ID,Opportunity Name,{label},Amount,"
        "Amount (Converted) Currency,Amount (Converted)\n"
        f"{OPP_ID},Fleet,EUR,\"120,000.00\",USD,\"130,800.00\"\n"
    )
    batch = parse(("report1.csv", report))
    (deal,) = batch.deals
    assert (deal.currency, deal.amount) == ("EUR", Decimal("120000.00"))
    assert batch.ignored_columns["report1.csv"] == [
        "Amount (Converted)",
        "Amount (Converted) Currency",
    ]
