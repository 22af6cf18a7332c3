"""A parsed batch as plain data: what every detector, the risk classifier and the
coordinator read. Ingest builds it; nothing here touches the database."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from reviews.engine.extra_fields import ExtraFields
from reviews.engine.vocabulary import crm_of

# The HubSpot default pipeline (docs/input.md), used when a batch carries no `pipelines`.
DEFAULT_PIPELINE_ID = "default"
# Amounts that name no currency (the native JSON has no currency field) are dollars.
DEFAULT_CURRENCY = "USD"
# ISO 4217's "no currency", of an amount whose code is not one: shown ¤85,000, added to none.
UNKNOWN_CURRENCY = "XXX"


@dataclass(slots=True)
class Stage:
    id: str
    label: str = ""
    closed: bool = False
    won: bool = False
    aliases: tuple[str, ...] = ()  # more labels: the default stages in other languages
    probability: float | None = None  # HubSpot's deal probability of the stage, 0..1


@dataclass(slots=True)
class Pipeline:
    id: str
    stages: list[Stage]
    label: str = ""
    # Where the definition came from (STAGE_SOURCES): the dataset's memory or this upload.
    source: str = "export"
    # stage key (id or label, folded) -> stage; built once, since every deal looks one up
    _by_key: dict[str, Stage] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for stage in reversed(self.stages):  # reversed: the first stage wins a clash
            for alias in stage.aliases:
                self._by_key[_stage_key(alias)] = stage
            if stage.label:
                self._by_key[_stage_key(stage.label)] = stage
        for stage in reversed(self.stages):  # ids win over labels
            self._by_key[_stage_key(stage.id)] = stage

    def find_stage(self, value: str | None) -> Stage | None:
        """The stage named by id or by label, case- and space-insensitively."""
        if not value:
            return None
        return self._by_key.get(_stage_key(value))


def stage_key(value: str) -> str:
    """Stage and pipeline names match ignoring case and spaces."""
    return "".join(value.split()).casefold()


_stage_key = stage_key


# Where a deal's open/won/lost state came from, in the order they are asked
# (docs/input.md, "Pipelines and stages"): a pipeline definition the dataset remembers,
# one the upload carries, HubSpot's own state columns of the export, the default pipeline.
STAGE_SOURCES = ("dataset", "export", "state_columns", "default")


# An export made in another account language labels the default stages in that
# language (German, French, Spanish, Portuguese below), as it does the column headers.
HUBSPOT_DEFAULT_PIPELINE = Pipeline(
    id=DEFAULT_PIPELINE_ID,
    stages=[
        Stage(
            "appointmentscheduled",
            "Appointment Scheduled",
            aliases=("Termin vereinbart", "Rendez-vous programmé", "Cita programada",
                     "Compromisso agendado"),
        ),
        Stage(
            "qualifiedtobuy",
            "Qualified To Buy",
            aliases=("Kaufbereit", "Qualifiziert zum Kauf", "Qualifié pour acheter",
                     "Calificado para comprar", "Qualificado para comprar"),
        ),
        Stage(
            "presentationscheduled",
            "Presentation Scheduled",
            aliases=("Präsentation geplant", "Présentation programmée",
                     "Presentación programada", "Apresentação agendada"),
        ),
        Stage(
            "decisionmakerboughtin",
            "Decision Maker Bought-In",
            aliases=("Entscheidungsträger an Bord", "Décideur impliqué",
                     "Responsable de toma de decisiones comprometido",
                     "Tomador de decisão envolvido"),
        ),
        Stage(
            "contractsent",
            "Contract Sent",
            aliases=("Vertrag gesendet", "Contrat envoyé", "Contrato enviado"),
        ),
        Stage(
            "closedwon",
            "Closed Won",
            closed=True,
            won=True,
            aliases=("Abgeschlossen und gewonnen", "Conclu gagné", "Cerrado ganado",
                     "Fechado e ganho", "Negócio fechado"),
        ),
        Stage(
            "closedlost",
            "Closed Lost",
            closed=True,
            won=False,
            aliases=("Abgeschlossen und verloren", "Conclu perdu", "Cerrado perdido",
                     "Fechado e perdido", "Negócio perdido"),
        ),
    ],
)  # fmt: skip


@dataclass(slots=True)
class Company:
    id: str
    index: int  # position in the batch's list, for error messages like companies[3]
    name: str | None = None
    domain: str | None = None  # as given; normalise with reviews.engine.normalize.domain
    enriched_at: datetime | None = None
    updated_at: datetime | None = None
    # Every other field, kept as given; empty where the batch keeps them (Batch.extra_of).
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Who owns the record (owner name, else HubSpot owner id) and where it came from
    # (HubSpot's Record source / Original Source and its detail): for routing fixes.
    owner: str | None = None
    record_source: str | None = None
    record_source_detail: str | None = None


@dataclass(slots=True)
class Contact:
    id: str
    index: int
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    company_id: str | None = None  # the primary company
    # every associated company; a shared empty tuple when none, so a million records
    # without the column allocate no lists
    company_ids: list[str] | tuple[()] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    owner: str | None = None
    record_source: str | None = None
    record_source_detail: str | None = None


@dataclass(slots=True)
class Deal:
    id: str
    index: int
    name: str | None = None
    amount: Decimal | None = None
    stage: str | None = None  # as given: an id or a label
    close_date: date | None = None
    company_id: str | None = None
    contact_ids: list[str] = field(default_factory=list)
    pipeline: str | None = None
    currency: str | None = None  # ISO 4217 code of `amount`; None: the batch's currency
    company_ids: list[str] | tuple[()] = ()  # every associated company (as Contact's)
    extra: Mapping[str, Any] = field(default_factory=dict)
    owner: str | None = None
    record_source: str | None = None
    record_source_detail: str | None = None


@dataclass(slots=True)
class Lead:
    """A person not yet a contact (Salesforce's Lead); a HubSpot batch has none."""

    id: str
    index: int
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    company: str | None = None  # the company's name as the lead gave it, not an id
    converted: bool | None = None  # converted leads became a contact: not compared
    # Whether the owner is an active user (Salesforce's User.IsActive); None: not known.
    owner_active: bool | None = None
    updated_at: datetime | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    owner: str | None = None
    record_source: str | None = None
    record_source_detail: str | None = None


_LIST_NAMES = {Company: "companies", Contact: "contacts", Deal: "deals", Lead: "leads"}


@dataclass(slots=True)
class ValueProblem:
    """A malformed value (docs/input.md): not a reason to reject, a finding of kind
    `invalid_value` in the category of the specialist that owns the field."""

    category: str
    record_id: str
    path: str  # e.g. deals[3].amount
    message: str  # e.g. not a number: "41O000"
    # Where the value sits in the file as the user has it, where the reader says (a
    # Salesforce file: "Opportunity.csv row 4") and the column's header ("AccountId");
    # "": the path says it.
    place: str = ""
    column: str = ""


@dataclass(slots=True, weakref_slot=True)  # its tables refer back to it weakly
class Batch:
    id: str | None
    as_of: datetime
    source: str | None
    companies: list[Company]
    contacts: list[Contact]
    deals: list[Deal]
    pipelines: dict[str, Pipeline]  # empty: the HubSpot default applies
    # A fourth object only some CRMs have (Salesforce's leads); empty for HubSpot.
    leads: list[Lead] = field(default_factory=list)
    value_problems: list[ValueProblem] = field(default_factory=list)
    # What the export left out or could not settle, reported with the run:
    partial: list[str] = field(default_factory=list)  # lists with no file: ["companies"]
    ignored_columns: dict[str, list[str]] = field(default_factory=dict)  # file -> headers
    # What the reader could not read and the run says ([{"code", "message"}], as a
    # dataset's arrival warnings): a Salesforce file nothing recognised (unread_file).
    warnings: list[dict[str, str]] = field(default_factory=list)
    # list -> the fields (docs/input.md names) its export had a column or property for,
    # present even where every value is blank; a list not named is not described (a
    # JSON batch names its fields record by record). Kinds whose fields are not there
    # are switched off (reviews.engine.specialists.spec.switched_off).
    exported_fields: dict[str, frozenset[str]] = field(default_factory=dict)
    as_of_source: str = "given"  # given | exportedAt | last_modified | upload
    currency: str | None = None  # of amounts without their own; None: DEFAULT_CURRENCY
    # association cell holding a name no single company has -> the records naming it
    unresolved_company_names: dict[str, list[str]] = field(default_factory=dict)
    # The JSON "dataset" key: the CRM this batch is a sync of (docs/history.md).
    dataset: str | None = None
    # (pipeline, stage) folded -> the state HubSpot's own columns give deals of that
    # stage (Is Closed Won, Is Deal Closed?, Deal probability): hubspot_records.
    observed_stages: dict[tuple[str, str], Stage] = field(default_factory=dict)
    # Pipelines a file of the upload defined (a pipelines API response): the dataset
    # learns them (reviews.orchestration.dataset.pipelines).
    uploaded_pipelines: list[Pipeline] = field(default_factory=list)
    # list -> {column header or API property name: the field it filled}: the names a
    # team's rule may use for a field (reviews/engine/tables/); empty for native JSON.
    field_headers: dict[str, dict[str, str]] = field(default_factory=dict)
    # list -> the export's other columns (or the API's other properties), in its order:
    # each is a column of the list's table even where every value is blank.
    property_names: dict[str, list[str]] = field(default_factory=dict)
    # The native JSON reader keeps its records' unread fields here, by list name, rather
    # than in each record's `extra` (extra_fields.py); read them with extra_of().
    extras: dict[str, ExtraFields] = field(default_factory=dict)
    # (pipeline, stage as given) -> (Stage, where its state came from): a batch has few
    # distinct pairs, and every detector asks for the stage of every deal.
    _stages: dict[tuple[str | None, str | None], tuple[Stage | None, str | None]] = field(
        default_factory=dict, init=False, repr=False
    )
    # What the specialists derive from the records (derive), by name.
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _pipeline_keys: dict[str, Pipeline] | None = field(default=None, init=False, repr=False)

    def derive(self, name: str, build: Callable[[Batch], Any]) -> Any:
        """build(self), built once per batch however many specialists ask for it (an
        index over a million records): the records do not change once parsed."""
        try:
            return self.derived[name]
        except KeyError:
            value = self.derived[name] = build(self)
            return value

    @property
    def crm(self) -> str:
        """The CRM the batch comes from, by its source: "salesforce" for Salesforce's
        exports (source salesforce-*), else "hubspot". Findings use its words
        (reviews.engine.vocabulary)."""
        return crm_of(self.source)

    def extra_of(self, record: Company | Contact | Deal | Lead) -> Mapping[str, Any]:
        """The record's fields no rule reads, wherever its reader kept them."""
        if record.extra:
            return record.extra
        kept = self.extras.get(_LIST_NAMES[record.__class__])
        return kept.get(record.index) if kept is not None else record.extra

    @property
    def counts(self) -> dict[str, int]:
        counts = {
            "companies": len(self.companies),
            "contacts": len(self.contacts),
            "deals": len(self.deals),
        }
        if self.leads:  # only where there are any: a HubSpot batch's counts are unchanged
            counts["leads"] = len(self.leads)
        return counts

    def pipeline_for(self, deal: Deal) -> Pipeline:
        """The pipeline a deal's stage must belong to: the defined one its `pipeline`
        names (by id or label), else the defined `default`, else HubSpot's default."""
        return self._defined_pipeline(deal.pipeline) or self.pipelines.get(
            DEFAULT_PIPELINE_ID, HUBSPOT_DEFAULT_PIPELINE
        )

    def use_pipelines(self, known: dict[str, Pipeline]) -> None:
        """Add pipeline definitions known beside the upload (a dataset's), under the
        batch's own: a pipeline the upload defines wins. Before any stage is looked up."""
        self.pipelines = {**known, **self.pipelines}
        self._stages.clear()
        self._pipeline_keys = None
        self.derived.pop("columns", None)  # its deals' stages were resolved without them

    def stage_of(self, deal: Deal) -> Stage | None:
        return self.stage_and_source(deal)[0]

    def stage_and_source(self, deal: Deal) -> tuple[Stage | None, str | None]:
        """The deal's stage and where its state came from (STAGE_SOURCES), in order:
        the pipeline its `pipeline` names (or, naming none, the one stage of that id
        or label among the defined pipelines); the export's state columns; the
        defined `default` pipeline, else HubSpot's. (None, None): nothing describes it."""
        key = (deal.pipeline, deal.stage)
        try:
            return self._stages[key]
        except KeyError:
            found = self._stages[key] = self._resolve(deal.pipeline, deal.stage)
            return found

    def _resolve(self, pipeline_name: str | None, value: str | None) -> tuple:
        if not value or not value.strip():
            return None, None
        pipeline = self._defined_pipeline(pipeline_name)
        if pipeline is not None:
            stage = pipeline.find_stage(value)
            if stage is not None:
                return stage, pipeline.source
        elif self.pipelines and not pipeline_name:
            matches = [p for p in self.pipelines.values() if p.find_stage(value) is not None]
            if len(matches) == 1:
                return matches[0].find_stage(value), matches[0].source
        observed = self.observed_stages.get((_stage_key(pipeline_name or ""), _stage_key(value)))
        if observed is not None:
            return observed, "state_columns"
        if pipeline is not None:  # a defined pipeline without the stage: unknown
            return None, None
        fallback = self.pipelines.get(DEFAULT_PIPELINE_ID)
        if fallback is not None:
            stage = fallback.find_stage(value)
            return (stage, fallback.source) if stage else (None, None)
        stage = HUBSPOT_DEFAULT_PIPELINE.find_stage(value)
        return (stage, "default") if stage else (None, None)

    def _defined_pipeline(self, name: str | None) -> Pipeline | None:
        if not name or not self.pipelines:
            return None
        found = self.pipelines.get(name)
        if found is not None:
            return found
        if self._pipeline_keys is None:
            keys: dict[str, Pipeline] = {}
            for pipeline in self.pipelines.values():
                if pipeline.label:
                    keys.setdefault(_stage_key(pipeline.label), pipeline)
            for pipeline in self.pipelines.values():
                keys[_stage_key(pipeline.id)] = pipeline
            self._pipeline_keys = keys
        return self._pipeline_keys.get(_stage_key(name))

    def stage_sources(self) -> dict[str, int]:
        """How many deals took their state from each source (STAGE_SOURCES), and
        "unknown" for those nothing describes (deals without a stage are not counted)."""
        counts: dict[str, int] = {}
        pairs = Counter((d.pipeline, d.stage) for d in self.deals)  # each resolved once
        for (pipeline, stage), deals in pairs.items():
            if stage and stage.strip():
                source = self._resolve(pipeline, stage)[1] or "unknown"
                counts[source] = counts.get(source, 0) + deals
        return {s: counts[s] for s in (*STAGE_SOURCES, "unknown") if s in counts}

    def stage_source(self, counts: Mapping[str, int] | None = None) -> str:
        """The first source (STAGE_SOURCES order) of `counts` (stage_sources'), or ""."""
        counts = self.stage_sources() if counts is None else counts
        return next((s for s in STAGE_SOURCES if s in counts), "")

    def currency_of(self, deal: Deal) -> str:
        return deal.currency or self.currency or DEFAULT_CURRENCY

    def is_open(self, deal: Deal) -> bool:
        """Open = stage not closed. An unknown or missing stage counts as open."""
        stage = self.stage_of(deal)
        return stage is None or not stage.closed
