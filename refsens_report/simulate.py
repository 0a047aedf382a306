"""A simulated annotation pipeline: two annotator passes, a selective third pass, a silent default, a reviewer,
and model outputs scored beside the annotators (one of them tuned to the shipped gold's conventions).

The generative story is documented in ``docs/simulation.md``; every number it uses is a field of
``SimulationParameters``. ``simulate_rows`` returns the record as canonical JSON objects and
``write_simulation`` writes ``record.jsonl``, ``refsens.toml`` and ``datasheet.md`` (``refsens-report
simulate``). The same parameters and seed always give byte-identical files.
"""

from __future__ import annotations

import hashlib
import textwrap
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from refsens_report.bootstrap import AUTO_MIN_RESAMPLES, holm_floor
from refsens_report.config import default_family
from refsens_report.errors import InputError

DEMO_VERSION = "0.1.0-demo"
DATASET_NAME = "Simulated PII benchmark (synthetic)"

# Latent PII types and the type an annotator assigns when confusing one (both directions where plausible).
CONFUSED_WITH = {
    "NAME": "USERNAME",
    "PHONE": "FAX_NUMBER",
    "EMAIL": "USERNAME",
    "ADDRESS": "LOCATION",
    "ID_NUMBER": "TAX_NUMBER",
    "TAX_NUMBER": "ID_NUMBER",
    "PASSPORT_NUMBER": "ID_NUMBER",
    "DATE_OF_BIRTH": "DATE",
    "BANK_ACCOUNT": "CREDIT_CARD",
    "CREDIT_CARD": "BANK_ACCOUNT",
    "USERNAME": "NAME",
}
# The paper's Table 8: the optional part of a mention that boundary conventions disagree about.
CONVENTIONS = ("title", "country_code", "flat_number")
CONVENTION_OF_TYPE = {"NAME": "title", "PHONE": "country_code", "ADDRESS": "flat_number"}
# Non-PII text an over-eager annotator labels, and the type it gets: the source of extra spans.
DECOY_KINDS = ("city", "date", "order", "company")
DECOY_LABEL = {"city": "ADDRESS", "date": "DATE_OF_BIRTH", "order": "ID_NUMBER", "company": "NAME"}
# Every type a span can carry, and for each the index of the type it is confused with.
LABELS = tuple(dict.fromkeys([*CONFUSED_WITH, *CONFUSED_WITH.values()]))
CONFUSED_INDEX = np.array([LABELS.index(CONFUSED_WITH.get(label, label)) for label in LABELS])


@dataclass(frozen=True)
class LanguageParameters:
    """Per-language rates: how hard the language's items are and how often the third pass fires."""

    code: str
    # Mean probability that a NAME / PHONE / ADDRESS mention carries its optional part (title, country code,
    # flat number): the share of mentions on which the annotators' boundary conventions can disagree.
    variant_share: float
    # Probability that an annotator pass misses a latent span.
    miss_rate: float
    # Probability that an annotator pass labels a decoy (non-PII text) as PII: the extra spans.
    extra_rate: float
    # Probability that an annotator pass gives a span the confusable type (CONFUSED_WITH).
    type_confusion_rate: float
    # Probability that the third pass (adjudication) fires on an item where A and B differ ...
    third_pass_on_disagreement: float
    # ... and on an item where they agree (the pipeline's third pass also covered agreed items).
    third_pass_on_agreement: float


def _paper_languages() -> tuple[LanguageParameters, ...]:
    # Tuned (docs/simulation.md) so that A-B strict F1, identical share, type agreement, third-pass and
    # silent-default rates land near the paper's Table 1 for each language (Arabic from its text).
    return (
        LanguageParameters("hi", 0.46, 0.015, 0.030, 0.0225, 0.82, 0.39),
        LanguageParameters("pt", 0.22, 0.015, 0.030, 0.0145, 0.67, 0.08),
        LanguageParameters("pl", 0.26, 0.0075, 0.018, 0.0115, 0.75, 0.02),
        LanguageParameters("sv", 0.47, 0.015, 0.030, 0.0210, 0.71, 0.045),
        LanguageParameters("zh", 0.175, 0.0075, 0.018, 0.0165, 0.85, 0.025),
        LanguageParameters("ar", 0.50, 0.015, 0.030, 0.0205, 0.68, 0.025),
    )


@dataclass(frozen=True)
class ModelParameters:
    """One simulated model output: a system run on every item, with its own error rates and conventions."""

    name: str
    # Probability that the model misses a latent mention.
    miss_rate: float
    # Probability that it labels a decoy (non-PII text).
    extra_rate: float
    # Probability that it gives a mention the confusable type.
    type_confusion_rate: float
    # Probability that it includes the optional part, per convention (title, country code, flat number).
    includes: tuple[float, float, float]


DEFAULT_OUTPUTS = 4  # model outputs beside the two annotator passes: six scored outputs, a leaderboard
# The model outputs' own random stream (numpy SeedSequence entropy [seed, MODEL_STREAM]): the rest of the
# record is drawn from default_rng(seed) exactly as without them.
MODEL_STREAM = 1
MAX_OUTPUTS = 30


def simulated_models(count: int = DEFAULT_OUTPUTS) -> tuple[ModelParameters, ...]:
    """Return ``count`` model outputs, strongest first, with the planted rank flip between the first two.

    Every model labels less accurately than the annotator passes, so the leaderboard's humans stay on top and
    the first two models sit next to each other in the delivered gold's ranking. model_1 is the more
    accurate; its conventions lean the other way from annotator A's (a title or a country code a fifth of the
    time, a flat number four fifths). model_2 was tuned on the shipped gold: it learned the delivered gold's
    conventions (A's, through the silent default) but misses more mentions. Under the delivered gold the
    conventions win and model_2 ranks above model_1; under the reviewer, whose convention favours no one,
    accuracy wins and the order flips (a swing of about 2.5 to 3.5 points over seeds 0-3). The rest come in
    pairs of near-equal strength (tie groups), each pair weaker than the one before.
    """
    if not 0 <= count <= MAX_OUTPUTS:
        raise ValueError(f"model outputs must be between 0 and {MAX_OUTPUTS}, got {count}")
    models = [
        ModelParameters("model_1", 0.060, 0.035, 0.015, (0.2, 0.2, 0.8)),
        ModelParameters("model_2", 0.084, 0.040, 0.018, (0.95, 0.95, 0.05)),
    ]
    for index in range(2, count):
        pair, second = divmod(index - 2, 2)
        miss = 0.14 + 0.04 * pair + 0.004 * second
        models.append(ModelParameters(f"model_{index + 1}", round(miss, 3), 0.05, 0.025, (0.6, 0.6, 0.4)))
    return tuple(models[:count])


@dataclass(frozen=True)
class SimulationParameters:
    """Every number of the generative story; the defaults imitate the paper's pipeline."""

    # Items in the record, duplicates included, split evenly over the languages.
    items: int = 25_000
    languages: tuple[LanguageParameters, ...] = field(default_factory=_paper_languages)
    # Probability of 0, 1, ..., 8 latent PII spans on an item (mean about 3.5, as in the paper's record).
    span_count_weights: tuple[float, ...] = (0.10, 0.14, 0.16, 0.16, 0.14, 0.11, 0.08, 0.06, 0.05)
    # Relative frequency of each latent PII type.
    type_weights: tuple[tuple[str, float], ...] = (
        ("NAME", 0.30),
        ("PHONE", 0.14),
        ("EMAIL", 0.12),
        ("ADDRESS", 0.12),
        ("DATE_OF_BIRTH", 0.07),
        ("ID_NUMBER", 0.07),
        ("TAX_NUMBER", 0.05),
        ("BANK_ACCOUNT", 0.04),
        ("PASSPORT_NUMBER", 0.03),
        ("CREDIT_CARD", 0.03),
        ("USERNAME", 0.03),
    )
    # How unevenly optional parts spread over items: an item's own variant probability is drawn from a Beta
    # distribution with mean ``variant_share`` and this concentration (small = a few formal items carry
    # most titles, country codes and flat numbers, as a contact list does). Clusters disagreements.
    variant_concentration: float = 0.35
    # Mean number of decoys (a city, a date, an order number, a company) per item, Poisson.
    decoys_per_item: float = 0.8
    # Mean number of filler sentences per item, Poisson: items of varying length.
    fillers_per_item: float = 1.0
    # Probability that each pass includes the optional part, per convention (title, country code, flat
    # number). A and B are mirror images, so neither is "right": they differ mostly by convention.
    annotator_a_includes: tuple[float, float, float] = (0.92, 0.92, 0.08)
    annotator_b_includes: tuple[float, float, float] = (0.08, 0.08, 0.92)
    # The reviewer pool's convention: half its experts include each optional part, so it favours neither pass.
    reviewer_includes: tuple[float, float, float] = (0.5, 0.5, 0.5)
    # The expert reviewer's own error rates: it misses and over-labels about as often as an annotator but
    # confuses types less.
    reviewer_miss_rate: float = 0.02
    reviewer_extra_rate: float = 0.02
    reviewer_type_confusion_rate: float = 0.008
    # Share of items the reviewer re-annotates, drawn at random (the paper: 10.5 %).
    reviewer_share: float = 0.105
    # The silent default: when A and B differ and no third pass fires, the delivered gold is A with this
    # probability, else B (the paper: 98.7 %). 0.5 is the neutral rule (``--neutral``).
    silent_default_keeps_a: float = 0.987
    # When the third pass fires on a disagreement, the adjudicator settles each disputed mention by taking
    # A's version with this probability, else B's: the delivered gold is A, B or a mix of the two.
    adjudicator_takes_a: float = 0.5
    # Share of items that are one of a duplicated pair (same prompt entered twice, annotated twice).
    duplicated_share: float = 0.015
    # Duplicate pairs with the copy defect, per item (the paper: 11 pairs in ~25,000 items): the reviewer
    # labels are copied from one annotator, who shares no span with the other.
    copy_defect_rate: float = 11 / 25_000
    # Share of items on which one annotator pass is absent (the paper: both present on 99.6 %).
    pass_absent_share: float = 0.004
    # Model outputs scored beside the annotators, on every item (``simulated_models``; ``--outputs N``).
    models: tuple[ModelParameters, ...] = field(default_factory=simulated_models)

    @property
    def neutral(self) -> bool:
        """Return whether the silent default is the unbiased rule."""
        return self.silent_default_keeps_a == 0.5


# ----------------------------------------------------------------------------------------------------------
# Invented text. Every name, number and address is fictitious: numbers carry runs of zeros that no real
# numbering plan issues, e-mail addresses use the reserved example.* domains.


@dataclass(frozen=True)
class Vocabulary:
    """The words one language's synthetic prompts are made of."""

    instructions: tuple[str, ...]
    fillers: tuple[str, ...]
    connectors: tuple[str, ...]
    given_names: tuple[str, ...]
    family_names: tuple[str, ...]
    name_order: str  # "given family" or "familygiven" (no space, e.g. Chinese)
    titles: tuple[str, ...]
    title_side: str  # "before" or "after" the name
    country_code: str
    phone: str  # X = a random digit
    streets: tuple[str, ...]
    street_format: str  # {street} and {number}
    flat_format: str  # {flat}
    flat_side: str
    handles: tuple[str, ...]
    id_number: str
    tax_number: str
    passport_number: str
    bank_account: str
    date_format: str  # {d} {m} {y}
    cities: tuple[str, ...]
    dates: tuple[str, ...]
    order: str
    companies: tuple[str, ...]


VOCABULARIES: dict[str, Vocabulary] = {
    "hi": Vocabulary(
        instructions=("इस नोट को औपचारिक बनाइए:", "इस संदेश से संपर्क विवरण निकालिए:", "इस दावे का सारांश लिखिए:",
                      "इस ईमेल का अंग्रेज़ी में अनुवाद कीजिए:"),
        fillers=("कृपया जल्दी जवाब दें।", "यह जानकारी गोपनीय है।", "बैठक कल सुबह है।", "भुगतान अभी बाकी है।"),
        connectors=(", ", "; ", " और ", " — "),
        given_names=("अनीता", "राहुल", "प्रिया", "अमित", "सुनीता", "विकास", "नेहा", "रोहन"),
        family_names=("शर्मा", "वर्मा", "गुप्ता", "सिंह", "पटेल", "मेहता", "जोशी", "राव"),
        name_order="given family", titles=("डॉ. ", "श्री ", "श्रीमती "), title_side="before",
        country_code="+91 ", phone="00000 0XXXX",
        streets=("हार्बर रोड", "गांधी मार्ग", "स्टेशन रोड", "झील मार्ग"), street_format="{number} {street}",
        flat_format="फ्लैट {flat}, ", flat_side="before",
        handles=("anita", "rahul", "priya", "amit", "sunita", "vikas"),
        id_number="0000 XXXX XXXX", tax_number="ZZZZZ0XXXZ", passport_number="Z000XXXX",
        bank_account="0000XXXXXXXX", date_format="{d:02d}/{m:02d}/{y}",
        cities=("मुंबई", "पुणे", "जयपुर"), dates=("3 मार्च", "12 जून"), order="ऑर्डर 00-XXXX",
        companies=("हार्बर बीमा", "झील बैंक"),
    ),
    "pt": Vocabulary(
        instructions=("Torne esta nota mais formal:", "Liste os dados de contato desta mensagem:",
                      "Resuma este pedido de indenização:", "Traduza este e-mail para o inglês:"),
        fillers=("Por favor, responda hoje.", "Esta informação é confidencial.", "A reunião é amanhã de manhã.",
                 "O pagamento ainda está pendente."),
        connectors=(", ", "; ", " e ", " — "),
        given_names=("Ana", "João", "Maria", "Pedro", "Beatriz", "Lucas", "Mariana", "Tiago"),
        family_names=("Silva", "Santos", "Oliveira", "Souza", "Costa", "Pereira", "Almeida", "Ferreira"),
        name_order="given family", titles=("Dr. ", "Dra. ", "Sr. ", "Sra. "), title_side="before",
        country_code="+351 ", phone="000 0XX XXX",
        streets=("Rua das Flores", "Avenida da Liberdade", "Rua do Porto", "Travessa do Sol"),
        street_format="{street}, {number}", flat_format=", apto {flat}", flat_side="after",
        handles=("ana.silva", "joao.s", "maria.c", "pedro.o", "bia.costa", "lucas.p"),
        id_number="00.XXX.XXX-X", tax_number="000.XXX.XXX-XX", passport_number="ZZ000XXX",
        bank_account="PT00 0000 0000 XXXX XXXX XXXX X", date_format="{d:02d}/{m:02d}/{y}",
        cities=("Lisboa", "Porto", "Coimbra"), dates=("3 de março", "12 de junho"), order="pedido 00-XXXX",
        companies=("Seguros do Porto", "Banco do Sol"),
    ),
    "pl": Vocabulary(
        instructions=("Przeredaguj tę notatkę bardziej formalnie:", "Wypisz dane kontaktowe z tej wiadomości:",
                      "Streść to zgłoszenie szkody:", "Przetłumacz ten e-mail na angielski:"),
        fillers=("Proszę o szybką odpowiedź.", "Te informacje są poufne.", "Spotkanie jest jutro rano.",
                 "Płatność jest nadal zaległa."),
        connectors=(", ", "; ", " i ", " — "),
        given_names=("Anna", "Piotr", "Katarzyna", "Tomasz", "Magdalena", "Marek", "Agnieszka", "Paweł"),
        family_names=("Nowak", "Kowalski", "Wiśniewska", "Wójcik", "Kamińska", "Lewandowski", "Zielińska",
                      "Szymański"),
        name_order="given family", titles=("dr ", "pan ", "pani ", "prof. "), title_side="before",
        country_code="+48 ", phone="000 0XX XXX",
        streets=("ul. Polna", "ul. Lipowa", "ul. Portowa", "al. Słoneczna"), street_format="{street} {number}",
        flat_format=" m. {flat}", flat_side="after",
        handles=("anna.n", "piotr.k", "kasia.w", "tomek.w", "magda.k", "marek.l"),
        id_number="00XXXXXXXXX", tax_number="000-XXX-XX-XX", passport_number="ZZ00XXXXX",
        bank_account="PL00 0000 0000 XXXX XXXX XXXX XXXX", date_format="{d:02d}.{m:02d}.{y}",
        cities=("Gdańsk", "Kraków", "Poznań"), dates=("3 marca", "12 czerwca"), order="zamówienie 00-XXXX",
        companies=("Portowe Ubezpieczenia", "Bank Słoneczny"),
    ),
    "sv": Vocabulary(
        instructions=("Gör den här anteckningen mer formell:", "Lista kontaktuppgifterna i det här meddelandet:",
                      "Sammanfatta den här skadeanmälan:", "Översätt det här mejlet till engelska:"),
        fillers=("Svara gärna i dag.", "Uppgifterna är konfidentiella.", "Mötet är i morgon bitti.",
                 "Betalningen är fortfarande obetald."),
        connectors=(", ", "; ", " och ", " – "),
        given_names=("Anna", "Erik", "Karin", "Lars", "Maria", "Johan", "Elin", "Oskar"),
        family_names=("Berg", "Lindqvist", "Johansson", "Nilsson", "Holm", "Ström", "Ekström", "Sandberg"),
        name_order="given family", titles=("Dr. ", "fru ", "herr ", "docent "), title_side="before",
        country_code="+46 ", phone="70 000 XX XX",
        streets=("Storgatan", "Hamnvägen", "Kyrkogatan", "Strandvägen"), street_format="{street} {number}",
        flat_format=", lgh {flat}", flat_side="after",
        handles=("anna.berg", "erik.l", "karin.j", "lars.n", "maria.h", "johan.s"),
        id_number="000000-XXXX", tax_number="SE00XXXXXXXX01", passport_number="00XXXXXX",
        bank_account="SE00 0000 0000 XXXX XXXX XXXX", date_format="{y}-{m:02d}-{d:02d}",
        cities=("Göteborg", "Uppsala", "Malmö"), dates=("3 mars", "12 juni"), order="order 00-XXXX",
        companies=("Hamnförsäkringar", "Strandbanken"),
    ),
    "zh": Vocabulary(
        instructions=("请把这段留言改写得更正式：", "列出这条消息中的联系方式：", "总结这份理赔申请：", "把这封邮件翻译成英文："),
        fillers=("请尽快回复。", "这些信息是保密的。", "会议在明天上午。", "付款仍未完成。"),
        connectors=("，", "；", "和", "、"),
        given_names=("伟", "芳", "娜", "敏", "静", "磊", "洋", "婷"),
        family_names=("王", "李", "张", "刘", "陈", "杨", "赵", "黄"),
        name_order="familygiven", titles=("先生", "女士", "医生", "教授"), title_side="after",
        country_code="+86 ", phone="100 0XXX XXXX",
        streets=("海港路", "人民路", "长江街", "中山路"), street_format="{street}{number}号",
        flat_format="{flat}室", flat_side="after",
        handles=("wang.wei", "li.fang", "zhang.na", "liu.min", "chen.jing", "yang.lei"),
        id_number="000000XXXXXXXXXXXX", tax_number="00000000XXXXXXXXXX", passport_number="E000XXXXX",
        bank_account="0000 0000 XXXX XXXX XXX", date_format="{y}年{m}月{d}日",
        cities=("上海", "杭州", "成都"), dates=("3月3日", "6月12日"), order="订单00-XXXX",
        companies=("海港保险", "长江银行"),
    ),
    "ar": Vocabulary(
        instructions=("أعد صياغة هذه الملاحظة بأسلوب رسمي:", "استخرج بيانات الاتصال من هذه الرسالة:",
                      "لخّص طلب التعويض هذا:", "ترجم هذا البريد إلى الإنجليزية:"),
        fillers=("يرجى الرد اليوم.", "هذه المعلومات سرية.", "الاجتماع صباح الغد.", "الدفعة ما زالت مستحقة."),
        connectors=("، ", "؛ ", " - ", " ثم "),
        given_names=("أحمد", "فاطمة", "عمر", "مريم", "يوسف", "ليلى", "خالد", "نور"),
        family_names=("حداد", "منصور", "سالم", "ناصر", "خوري", "عباس", "حسن", "قاسم"),
        name_order="given family", titles=("د. ", "السيد ", "السيدة ", "م. "), title_side="before",
        country_code="+971 ", phone="50 000 XXXX",
        streets=("شارع الميناء", "شارع النخيل", "طريق الملك", "شارع الجامعة"), street_format="{number} {street}",
        flat_format="شقة {flat}، ", flat_side="before",
        handles=("ahmad.h", "fatima.m", "omar.s", "maryam.n", "yusuf.k", "layla.a"),
        id_number="000-XXXX-XXXXXXX-X", tax_number="000XXXXXXXXXXXX", passport_number="Z000XXXXX",
        bank_account="AE00 0000 XXXX XXXX XXXX XXX", date_format="{d:02d}/{m:02d}/{y}",
        cities=("دبي", "عمّان", "الدوحة"), dates=("3 مارس", "12 يونيو"), order="طلب 00-XXXX",
        companies=("تأمين الميناء", "بنك النخيل"),
    ),
}  # fmt: skip


def _digits(pattern: str, value: int) -> str:
    """Fill each X of a pattern with the next decimal digit of value."""
    slots = pattern.count("X")
    return pattern.replace("X", "{}").format(*f"{value % 10**slots:0{slots}d}") if slots else pattern


def _mention_text(vocabulary: Vocabulary, label: str, with_variant: bool, value: int) -> tuple[str, str, str]:
    """Return (optional part, core text, side of the optional part) for one mention of a PII type."""
    v = vocabulary
    # One random integer per mention supplies every choice: five small ones and a long run of digits.
    draw = (value % 1009, value // 1009 % 1013, value // 1022117 % 1019, value // 1041537223, value % 4)
    if label == "NAME":
        given, family = v.given_names[draw[0] % len(v.given_names)], v.family_names[draw[1] % len(v.family_names)]
        core = family + given if v.name_order == "familygiven" else f"{given} {family}"
        return (v.titles[draw[2] % len(v.titles)] if with_variant else "", core, v.title_side)
    if label == "PHONE":
        return (v.country_code if with_variant else "", _digits(v.phone, draw[3]), "before")
    if label == "ADDRESS":
        core = v.street_format.format(street=v.streets[draw[0] % len(v.streets)], number=1 + draw[1] % 98)
        flat = f"{1 + draw[2] % 19}{'ABCD'[draw[4] % 4]}"
        return (v.flat_format.format(flat=flat) if with_variant else "", core, v.flat_side)
    if label == "EMAIL":
        domain = ("example.org", "example.com", "example.net")[draw[1] % 3]
        return ("", f"{v.handles[draw[0] % len(v.handles)]}{draw[2] % 100:02d}@{domain}", "before")
    if label == "USERNAME":
        return ("", f"@{v.handles[draw[0] % len(v.handles)]}_{draw[2] % 1000:03d}", "before")
    if label == "DATE_OF_BIRTH":
        day, month, year = 1 + draw[0] % 28, 1 + draw[1] % 12, 1940 + draw[2] % 66
        return ("", v.date_format.format(d=day, m=month, y=year), "before")
    if label == "CREDIT_CARD":
        return ("", _digits("0000 0000 0000 XXXX", draw[3]), "before")
    pattern = {"ID_NUMBER": v.id_number, "TAX_NUMBER": v.tax_number, "PASSPORT_NUMBER": v.passport_number,
               "BANK_ACCOUNT": v.bank_account}[label]  # fmt: skip
    return ("", _digits(pattern, draw[3]), "before")


def _decoy_text(vocabulary: Vocabulary, kind: str, value: int) -> str:
    """Return the text of a decoy: something that is not PII but looks labellable."""
    v = vocabulary
    if kind == "city":
        return v.cities[value % len(v.cities)]
    if kind == "date":
        return v.dates[value % len(v.dates)]
    if kind == "order":
        return _digits(v.order, value)
    return v.companies[value % len(v.companies)]


@dataclass(frozen=True)
class _LatentItems:
    """One language's prompts before any annotator saw them: texts, and their units in columns.

    A unit is a PII mention or a decoy. Units are grouped by item (``unit_offsets``) in text order; each
    has two candidate boundaries, ``short`` (without the optional part) and ``long`` (with it), equal when
    the mention has no optional part.
    """

    texts: list[str]
    unit_offsets: np.ndarray  # item i's units are unit_offsets[i]:unit_offsets[i + 1]
    mentions: np.ndarray  # PII mentions per item (the rest of its units are decoys)
    label: np.ndarray  # index into LABELS
    convention: np.ndarray  # index into CONVENTIONS, -1 when the type has no optional part
    is_decoy: np.ndarray
    short_start: np.ndarray
    short_end: np.ndarray
    long_start: np.ndarray
    long_end: np.ndarray


def _latent_items(
    language: LanguageParameters, count: int, parameters: SimulationParameters, rng: np.random.Generator
) -> _LatentItems:
    """Write ``count`` prompts of one language, each with its latent units and their offsets."""
    vocabulary = VOCABULARIES[language.code]
    pii_labels = [label for label, _ in parameters.type_weights]
    weights = np.array([weight for _, weight in parameters.type_weights])
    span_weights = np.array(parameters.span_count_weights)
    n_mentions = rng.choice(len(span_weights), size=count, p=span_weights / span_weights.sum())
    n_units = n_mentions + rng.poisson(parameters.decoys_per_item, size=count)
    n_fillers = np.minimum(rng.poisson(parameters.fillers_per_item, size=count), len(vocabulary.fillers)).tolist()
    instruction = rng.integers(0, len(vocabulary.instructions), size=count).tolist()
    # A ticket number per prompt keeps every text distinct, so a content hash is a fair duplicate key.
    tickets = rng.choice(max(1_000_000, 10 * count), size=count, replace=False).tolist()
    first_filler = rng.integers(0, len(vocabulary.fillers), size=count).tolist()
    filler_after = (rng.random(count) < 0.5).tolist()
    share, concentration = language.variant_share, parameters.variant_concentration
    item_variant_share = rng.beta(share * concentration, (1 - share) * concentration, size=count)

    total = int(n_units.sum())
    unit_item = np.repeat(np.arange(count), n_units)
    unit_offsets = np.concatenate([[0], np.cumsum(n_units)])
    # The first n_mentions units of an item are its mentions, the rest decoys; then shuffle within items.
    is_decoy = (np.arange(total) - unit_offsets[unit_item]) >= n_mentions[unit_item]
    pii_label = np.array([LABELS.index(name) for name in pii_labels])[
        rng.choice(len(pii_labels), size=total, p=weights / weights.sum())
    ]
    decoy_kind = rng.integers(0, len(DECOY_KINDS), size=total)
    decoy_label = np.array([LABELS.index(DECOY_LABEL[kind]) for kind in DECOY_KINDS])[decoy_kind]
    label = np.where(is_decoy, decoy_label, pii_label)
    convention_of_label = np.array(
        [CONVENTIONS.index(CONVENTION_OF_TYPE[name]) if name in CONVENTION_OF_TYPE else -1 for name in LABELS]
    )
    convention = np.where(is_decoy, -1, convention_of_label[label])
    with_variant = (convention >= 0) & (rng.random(total) < item_variant_share[unit_item])
    draws = rng.integers(0, 2**62, size=total)
    connector = rng.integers(0, len(vocabulary.connectors), size=total)
    order = np.lexsort((rng.random(total), unit_item))
    is_decoy, label, convention, with_variant = is_decoy[order], label[order], convention[order], with_variant[order]
    decoy_kind, draws, connector = decoy_kind[order], draws[order], connector[order]

    short_start, short_end = [0] * total, [0] * total
    long_start, long_end = [0] * total, [0] * total
    decoy_list, label_list, variant_list = is_decoy.tolist(), label.tolist(), with_variant.tolist()
    kind_list, draw_list, connector_list = decoy_kind.tolist(), draws.tolist(), connector.tolist()
    closing = "。" if language.code == "zh" else "."
    texts: list[str] = []
    offsets = unit_offsets.tolist()
    for index in range(count):
        pieces = [f"[T-{tickets[index]:06d}] ", vocabulary.instructions[instruction[index]], " "]
        # Consecutive fillers from a random start, so no sentence repeats within an item.
        fillers = " ".join(
            vocabulary.fillers[(first_filler[index] + k) % len(vocabulary.fillers)] for k in range(n_fillers[index])
        )
        if fillers and not filler_after[index]:
            pieces.append(fillers + " ")
        length = sum(map(len, pieces))
        for unit in range(offsets[index], offsets[index + 1]):
            if unit > offsets[index]:
                pieces.append(vocabulary.connectors[connector_list[unit]])
                length += len(pieces[-1])
            if decoy_list[unit]:
                optional, side = "", "before"
                core = _decoy_text(vocabulary, DECOY_KINDS[kind_list[unit]], draw_list[unit])
            else:
                label_name, variant = LABELS[label_list[unit]], variant_list[unit]
                optional, core, side = _mention_text(vocabulary, label_name, variant, draw_list[unit])
            if side == "before":
                long_start[unit], short_start[unit] = length, length + len(optional)
                long_end[unit] = short_end[unit] = short_start[unit] + len(core)
                pieces += (optional, core)
            else:
                long_start[unit] = short_start[unit] = length
                short_end[unit] = length + len(core)
                long_end[unit] = short_end[unit] + len(optional)
                pieces += (core, optional)
            length += len(optional) + len(core)
        pieces.append(closing)
        if fillers and filler_after[index]:
            pieces.append(" " + fillers)
        texts.append("".join(pieces))
    return _LatentItems(
        texts=texts, unit_offsets=unit_offsets, mentions=n_mentions, label=label, convention=convention,
        is_decoy=is_decoy, short_start=np.array(short_start), short_end=np.array(short_end),
        long_start=np.array(long_start), long_end=np.array(long_end),
    )  # fmt: skip


# ----------------------------------------------------------------------------------------------------------
# The annotation pipeline, vectorised over every unit of every row of one language.


@dataclass(frozen=True)
class _Rows:
    """The lines of one language's record: which latent item each is (a duplicate is a second line)."""

    latent: np.ndarray
    dup_group: np.ndarray  # -1 when the item is not duplicated
    copy_defect: np.ndarray  # 0 none, 1 the reviewer copies annotator_a, 2 it copies annotator_b


Version = tuple[np.ndarray, np.ndarray, np.ndarray]  # per unit: labelled, with the optional part, type confused


def _annotate(
    language: LanguageParameters,
    latent: _LatentItems,
    rows: _Rows,
    parameters: SimulationParameters,
    rng: np.random.Generator,
    model_rng: np.random.Generator,
) -> tuple[dict[str, list[list[tuple[int, int, str]] | None]], np.ndarray]:
    """Run every row through the pipeline; return each labelling's spans per row (None: absent) and third_pass.

    The model outputs draw from ``model_rng``, so adding or removing them leaves every other labelling as it was.
    """
    n_rows = len(rows.latent)
    starts = latent.unit_offsets[rows.latent]
    counts = latent.unit_offsets[rows.latent + 1] - starts
    total = int(counts.sum())
    row_of = np.repeat(np.arange(n_rows), counts)
    unit = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)
    is_decoy = latent.is_decoy[unit]
    has_variant = latent.short_start[unit] != latent.long_start[unit]
    has_variant |= latent.short_end[unit] != latent.long_end[unit]
    convention = np.maximum(latent.convention[unit], 0)

    def one_pass(miss: float, extra: float, confusion: float, includes: np.ndarray) -> Version:
        """Return one independent pass: which units it labels, with which boundaries and type."""
        roll = rng.random((3, total))
        return (np.where(is_decoy, roll[0] < extra, roll[0] >= miss), has_variant & (roll[1] < includes),
                roll[2] < confusion)  # fmt: skip

    rates = (language.miss_rate, language.extra_rate, language.type_confusion_rate)
    a = one_pass(*rates, np.array(parameters.annotator_a_includes)[convention])
    b = one_pass(*rates, np.array(parameters.annotator_b_includes)[convention])
    # The reviewer assigned to an item applies one convention to all of its mentions of a kind.
    reviewer_long = rng.random((n_rows, len(CONVENTIONS))) < np.array(parameters.reviewer_includes)
    reviewer_rates = (parameters.reviewer_miss_rate, parameters.reviewer_extra_rate,
                      parameters.reviewer_type_confusion_rate)  # fmt: skip
    labelled, _, confused = one_pass(*reviewer_rates, np.zeros(total))
    reviewer = (labelled, has_variant & reviewer_long[row_of, convention], confused)

    defect = rows.copy_defect[row_of]
    if defect.any():
        # The copy defect: A and B share no span (every mention differs in its optional part, or else in
        # type; decoys unlabelled) and the reviewer's labels are a verbatim copy of one of them.
        in_defect = defect > 0
        a_long = np.array(parameters.annotator_a_includes)[convention] >= 0.5
        a_defect = (~is_decoy, has_variant & a_long, np.zeros(total, dtype=bool))
        b_defect = (~is_decoy, has_variant & ~a_long, ~has_variant)
        a = tuple(np.where(in_defect, x, y) for x, y in zip(a_defect, a))
        b = tuple(np.where(in_defect, x, y) for x, y in zip(b_defect, b))
        copied = tuple(np.where(defect == 1, x, y) for x, y in zip(a_defect, b_defect))
        reviewer = tuple(np.where(in_defect, x, y) for x, y in zip(copied, reviewer))

    same_span = (a[0] == b[0]) & (~a[0] | ((a[1] == b[1]) & (a[2] == b[2])))
    differs = np.bincount(row_of, weights=~same_span, minlength=n_rows) > 0
    roll = rng.random((5, n_rows))
    third_pass = np.where(differs, roll[0] < language.third_pass_on_disagreement,
                          roll[0] < language.third_pass_on_agreement)  # fmt: skip
    silent_keeps_a = roll[1] < parameters.silent_default_keeps_a
    # A pass missing from the export (1: A, 2: B); the delivered gold is then the pass that exists.
    absent = np.where(roll[2] < parameters.pass_absent_share, np.where(roll[3] < 0.5, 1, 2), 0)
    absent[rows.copy_defect > 0] = 0
    reviewed = (roll[4] < parameters.reviewer_share) | (rows.copy_defect > 0)
    third_pass &= absent == 0
    # Agreed items and the silent default take the whole of one pass; the adjudicator picks per mention.
    row_takes_a = np.where(absent == 1, False, np.where(absent == 2, True, ~differs | silent_keeps_a))
    adjudicator_takes_a = rng.random(total) < parameters.adjudicator_takes_a
    takes_a = np.where((third_pass & differs)[row_of], adjudicator_takes_a, row_takes_a[row_of])
    delivered = tuple(np.where(takes_a, x, y) for x, y in zip(a, b))

    short_start, short_end = latent.short_start[unit], latent.short_end[unit]
    long_start, long_end = latent.long_start[unit], latent.long_end[unit]
    label = latent.label[unit]
    names = np.array(LABELS, dtype=object)

    def spans_per_row(version: Version, present: np.ndarray) -> list[list[tuple[int, int, str]] | None]:
        """Return each row's spans (start, end, type) for one labelling, None where it is absent."""
        labelled, long, confused = version
        kept = np.flatnonzero(labelled)
        span_starts = np.where(long, long_start, short_start)[kept].tolist()
        span_ends = np.where(long, long_end, short_end)[kept].tolist()
        types = names[np.where(confused, CONFUSED_INDEX[label], label)[kept]].tolist()
        # (start, end, type) tuples: orjson writes them as the same arrays as lists, seven times faster to build
        spans = list(zip(span_starts, span_ends, types))
        # Units are disjoint and in text order, so each row's spans come out sorted.
        bounds = np.concatenate([[0], np.cumsum(np.bincount(row_of[kept], minlength=n_rows))]).tolist()
        flags = present.tolist()
        return [spans[bounds[i] : bounds[i + 1]] if flags[i] else None for i in range(n_rows)]

    def model_pass(model: ModelParameters) -> Version:
        """Return one model's output: like an annotator pass, with the model's rates and conventions."""
        roll = model_rng.random((3, total))
        return (np.where(is_decoy, roll[0] < model.extra_rate, roll[0] >= model.miss_rate),
                has_variant & (roll[1] < np.array(model.includes)[convention]),
                roll[2] < model.type_confusion_rate)  # fmt: skip

    everywhere = np.ones(n_rows, dtype=bool)
    labellings = {
        "annotator_a": spans_per_row(a, absent != 1),
        "annotator_b": spans_per_row(b, absent != 2),
        "delivered": spans_per_row(delivered, everywhere),
        "reviewer": spans_per_row(reviewer, reviewed),
    }
    for model in parameters.models:  # a model runs on every item
        labellings[model.name] = spans_per_row(model_pass(model), everywhere)
    return labellings, third_pass


def _language_sizes(parameters: SimulationParameters) -> list[int]:
    """Split the item count evenly over the languages, the remainder to the first ones."""
    n_languages = len(parameters.languages)
    base, remainder = divmod(parameters.items, n_languages)
    return [base + (1 if position < remainder else 0) for position in range(n_languages)]


def simulate_rows(parameters: SimulationParameters, seed: int = 0) -> list[dict[str, Any]]:
    """Return the simulated record as canonical JSON objects, in record order."""
    if parameters.items < len(parameters.languages):
        raise ValueError(f"need at least one item per language ({len(parameters.languages)}), got {parameters.items}")
    rng = np.random.default_rng(seed)
    model_rng = np.random.default_rng([seed, MODEL_STREAM])
    latent_by_language, rows_by_language, eligible = [], [], []
    for position, (language, size) in enumerate(zip(parameters.languages, _language_sizes(parameters))):
        pairs = min(int(round(parameters.duplicated_share * size / 2)), size // 2)
        latent = _latent_items(language, size - pairs, parameters, rng)
        # Each duplicated prompt is a second row for a random original: group g = (source g, row size-pairs+g).
        sources = rng.choice(size - pairs, size=pairs, replace=False)
        dup_group = np.full(size, -1)
        dup_group[sources] = np.arange(pairs)
        dup_group[size - pairs :] = np.arange(pairs)
        rows = _Rows(latent=np.concatenate([np.arange(size - pairs), sources]), dup_group=dup_group,
                     copy_defect=np.zeros(size, dtype=np.int64))  # fmt: skip
        latent_by_language.append(latent)
        rows_by_language.append(rows)
        eligible += [(position, group) for group, source in enumerate(sources.tolist()) if latent.mentions[source]]

    # The copy defect hits a handful of duplicate pairs anywhere in the record, each with a PII mention.
    n_defects = min(int(round(parameters.copy_defect_rate * parameters.items)), len(eligible))
    for pick in rng.choice(len(eligible), size=n_defects, replace=False).tolist():
        position, group = eligible[pick]
        rows = rows_by_language[position]
        rows.copy_defect[rows.dup_group == group] = 1 + int(rng.integers(0, 2))

    records: list[dict[str, Any]] = []
    for language, latent, rows in zip(parameters.languages, latent_by_language, rows_by_language):
        labellings, third_pass = _annotate(language, latent, rows, parameters, rng, model_rng)
        flags = third_pass.tolist()
        keys = [hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] for text in latent.texts]
        latent_of = rows.latent.tolist()
        # Duplicates land anywhere in the language's block, so keep_first and keep_last differ.
        for number, index in enumerate(rng.permutation(len(latent_of)).tolist(), start=1):
            present = {name: spans[index] for name, spans in labellings.items() if spans[index] is not None}
            records.append({
                "id": f"{language.code}-{number:06d}",
                "language": language.code,
                "text": latent.texts[latent_of[index]],
                "labellings": present,
                "meta": {"third_pass": flags[index], "dup_key": keys[latent_of[index]]},
            })  # fmt: skip
    return records


# ----------------------------------------------------------------------------------------------------------
# Writing the three files.


def dataset_version(parameters: SimulationParameters, seed: int) -> str:
    """Return the version the simulated dataset is published under (a valid site folder name)."""
    version = DEMO_VERSION
    if parameters.neutral:
        version += "-neutral"
    if seed:
        version += f"-seed{seed}"
    if parameters.items != SimulationParameters().items:
        version += f"-{parameters.items}items"
    if len(parameters.models) != DEFAULT_OUTPUTS:
        version += f"-{len(parameters.models)}outputs"
    return version


DEMO_RULES = ("strict", "relaxed")
DEMO_CONFIDENCE = 0.95
# The demo's Holm floor as a share of the level: below it, with a fifth to spare, so a comparison that holds
# in every replicate is significant after Holm and the planted rank flip can show as one. resamples = "auto"
# aims at a tenth, which for six outputs means B = 27,999 and a demo that no longer builds in seconds.
DEMO_FLOOR_SHARE = 0.8


def demo_family_size(parameters: SimulationParameters) -> int:
    """Return how many swings the demo's Holm family holds (config.default_family, docs/method.md section 4).

    One alternative reference (the reviewer): adjacent holds the output pairs adjacent in the delivered
    gold's ranking, all every pair; each for every language, pooled, and rule.
    """
    outputs = 2 + len(parameters.models)
    pairs = outputs - 1 if default_family(outputs) == "adjacent" else outputs * (outputs - 1) // 2
    return pairs * (len(parameters.languages) + 1) * len(DEMO_RULES)


def demo_resamples(parameters: SimulationParameters) -> int:
    """Return the demo's B: the smallest B >= 2,000 whose Holm floor is at most 0.8 times the level."""
    target = DEMO_FLOOR_SHARE * (1 - DEMO_CONFIDENCE)
    family = demo_family_size(parameters)
    resamples = AUTO_MIN_RESAMPLES
    while holm_floor(family, resamples) > target:
        resamples += 1
    return resamples


def render_config(parameters: SimulationParameters, seed: int) -> str:
    """Return refsens.toml for the simulated record."""
    resamples = demo_resamples(parameters)
    resamples_comment = ""
    if resamples > AUTO_MIN_RESAMPLES:
        floor = holm_floor(demo_family_size(parameters), resamples)
        resamples_comment = (f"   # Holm floor {floor:.3f} ({demo_family_size(parameters)} tests): "
                             "a flip seen in every replicate is significant")  # fmt: skip
    return (
        "# Written by `refsens-report simulate`: a synthetic record from the simulated annotation pipeline.\n"
        "[dataset]\n"
        f'name = "{DATASET_NAME}"\n'
        f'version = "{dataset_version(parameters, seed)}"\n'
        "\n[record]\n"
        'path = "record.jsonl"\n'
        'format = "jsonl"\n'
        "\n[roles]\n"
        'annotators = ["annotator_a", "annotator_b"]\n'
        f"outputs = {_toml_list(['annotator_a', 'annotator_b', *(model.name for model in parameters.models)])}\n"
        'references = ["delivered", "reviewer"]   # first = primary (shipped) reference\n'
        "\n[audit]\n"
        f"rules = {_toml_list(list(DEMO_RULES))}\n"
        f"resamples = {resamples}{resamples_comment}\n"
        "seed = 0\n"
        f"confidence = {DEMO_CONFIDENCE}\n"
        'duplicate_policy = "keep_first"\n'
        "exclude_defective_duplicates = true\n"
        "\n[report]\n"
        'datasheet = "datasheet.md"\n'
    )


def _toml_list(names: list[str]) -> str:
    """Return a TOML array of simple names (letters, digits, underscores: no escaping needed)."""
    return "[" + ", ".join(f'"{name}"' for name in names) + "]"


def count_of(number: int, noun: str) -> str:
    """Return '1 model output' / '4 model outputs'."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def _summary(rows: list[dict[str, Any]], models: tuple[ModelParameters, ...]) -> dict[str, Any]:
    """Return the counts the datasheet states about the written record."""
    languages = list(dict.fromkeys(row["language"] for row in rows))
    key_counts: dict[str, int] = {}
    for row in rows:
        key_counts[row["meta"]["dup_key"]] = key_counts.get(row["meta"]["dup_key"], 0) + 1
    labellings = ("annotator_a", "annotator_b", "delivered", "reviewer", *(model.name for model in models))
    return {
        "items": len(rows),
        "per_language": {code: sum(row["language"] == code for row in rows) for code in languages},
        "labelled": {name: sum(name in row["labellings"] for row in rows) for name in labellings},
        "spans": sum(len(row["labellings"].get("delivered", [])) for row in rows),
        "third_pass": sum(row["meta"]["third_pass"] for row in rows),
        "duplicate_groups": sum(count > 1 for count in key_counts.values()),
        "duplicated_items": sum(count for count in key_counts.values() if count > 1),
    }


def render_datasheet(parameters: SimulationParameters, seed: int, rows: list[dict[str, Any]]) -> str:
    """Return datasheet.md: a "Datasheets for Datasets" stub that says plainly the data is synthetic."""
    summary = _summary(rows, parameters.models)
    per_language = ", ".join(f"{code} {count:,}" for code, count in summary["per_language"].items())
    default_rule = (
        "a neutral rule: when the annotators differ and no third pass fires, the delivered gold is A or B "
        "with equal probability"
        if parameters.neutral
        else "the silent default: when the annotators differ and no third pass fires, the delivered gold keeps "
        f"annotator A with probability {parameters.silent_default_keeps_a}"
    )
    language_table = "\n".join(
        f"| {p.code} | {p.variant_share} | {p.miss_rate} | {p.extra_rate} | {p.type_confusion_rate} | "
        f"{p.third_pass_on_disagreement} | {p.third_pass_on_agreement} |"
        for p in parameters.languages
    )
    scalars = "\n".join(
        f"| `{f.name}` | `{getattr(parameters, f.name)!r}` |"
        for f in fields(parameters)
        if f.name not in ("languages", "models")
    )
    model_table = "\n".join(
        f"| `{m.name}` | {m.miss_rate} | {m.extra_rate} | {m.type_confusion_rate} | "
        f"{' / '.join(str(share) for share in m.includes)} |"
        for m in parameters.models
    )
    labelled = summary["labelled"]
    if parameters.models:
        names = [model.name for model in parameters.models]
        every = all(labelled[name] == summary["items"] for name in names)
        models_line = (
            f"- {count_of(len(names), 'model output')}: {', '.join(f'`{name}`' for name in names)}, "
            f"{'each on every item' if every else 'on ' + ', '.join(f'{labelled[n]:,}' for n in names)}; "
            "scored beside the two annotator passes.\n"
        )
        story = (
            "The model outputs are simulated the same way as a pass, each with its own miss, extra and "
            "type-confusion rates and its own boundary conventions (the table below). One comparison is planted: "
            "`model_1` is the more accurate, with conventions of its own"
            + (", and `model_2` was tuned on the shipped gold, so it learned the delivered gold's conventions "
               "(annotator A's, through the silent default) but misses more mentions. Under the delivered gold "
               "`model_2` ranks above `model_1`; under the reviewer, whose convention favours no one, the order "
               "flips." if len(names) > 1 else ".")
            + (" The others come in pairs of near-equal strength." if len(names) > 3 else "")
        )
        models_story = "\n\n" + textwrap.fill(story, width=108, break_long_words=False, break_on_hyphens=False)
        models_section = (
            "\n| model | miss rate | extra rate | type confusion | includes title / country code / flat number |\n"
            f"|---|---|---|---|---|\n{model_table}\n"
        )
    else:
        models_line, models_story, models_section = "", "", ""
    command = f"refsens-report simulate DIR --seed {seed}"
    if parameters.items != SimulationParameters().items:
        command += f" --items {parameters.items}"
    if parameters.neutral:
        command += " --neutral"
    if len(parameters.models) != DEFAULT_OUTPUTS:
        command += f" --outputs {len(parameters.models)}"
    return f"""# Datasheet: {DATASET_NAME}

**This dataset is synthetic.** Every item was generated by `refsens-report simulate` (seed {seed}) from the
simulated annotation pipeline described in the tool's `docs/simulation.md`. No person wrote or labelled
any of it; all names, numbers and addresses are invented, numbers carry runs of zeros that no real
numbering plan issues, and e-mail addresses use the reserved `example.*` domains. It exists to show what a
reference-sensitivity appendix looks like and to test that the audit recovers what the simulator put in.

## Motivation

A demonstration record for refsens-report. It imitates the six-language PII benchmark audited in "Same
Output, Different Gold": two annotator passes that differ mostly by boundary conventions, a selective third
pass, an aggregation rule that produces the shipped ("delivered") gold, and an expert reviewer who
re-annotates a random sample. Here the pipeline uses {default_rule}, so the appendix built from this
record shows what that rule does to the scores. Replace this datasheet with your own when you audit a real
record.

## Composition

- {summary['items']:,} items (prompts) in {len(summary['per_language'])} languages: {per_language}.
- Each item has an invented text (a fictitious ticket number, a task instruction, filler sentences and PII
  mentions) with 0-8 latent PII mentions of types such as NAME, PHONE, EMAIL, ADDRESS, ID_NUMBER,
  TAX_NUMBER, PASSPORT_NUMBER, DATE_OF_BIRTH, BANK_ACCOUNT, CREDIT_CARD and USERNAME; the delivered gold
  holds {summary['spans']:,} spans.
- Labellings: `annotator_a` on {labelled['annotator_a']:,} items, `annotator_b` on {labelled['annotator_b']:,},
  `delivered` on {labelled['delivered']:,}, `reviewer` on {labelled['reviewer']:,}
  ({_percent(labelled['reviewer'] / summary['items'])}, a random sample).
{models_line}- `meta.third_pass`: the third pass fired on {summary['third_pass']:,} items
  ({_percent(summary['third_pass'] / summary['items'])}).
- `meta.dup_key`: a hash of the text. {summary['duplicate_groups']:,} keys are shared by
  {summary['duplicated_items']:,} items (the same prompt entered the pipeline twice). A few of these pairs
  carry the copy defect on purpose: the reviewer's labels are a copy of one annotator's.

## Collection process

Nothing was collected. The simulator draws, for each item, a text and its latent mentions; two independent
annotator passes that miss mentions, label decoys, confuse types and follow opposite boundary conventions
(a title inside a name or not, a country code inside a phone number or not, a flat number inside an address
or not); a third pass that fires at language-specific rates; the delivered gold by the aggregation rule;
and the reviewer on a random sample, with its own convention that favours neither pass.{models_story}

## Preprocessing

None. Spans are character offsets into `text`; every span lies inside its text.

## Uses

Trying refsens-report, testing it, and checking that its intervals cover the simulator's known values (the
coverage study in `bench/coverage.py`). Not for training or evaluating PII detectors: the text is
formulaic and the labels encode the simulator's assumptions, not any real annotation guideline.

## Distribution

Regenerate it with `{command}`; the same arguments give byte-identical files.

## Maintenance

Maintained with refsens-report; the generative story and its parameters are documented in
`docs/simulation.md`.

## Parameters used

| language | variant share | miss rate | extra rate | type confusion | third pass on disagreement | on agreement |
|---|---|---|---|---|---|---|
{language_table}

| parameter | value |
|---|---|
{scalars}
{models_section}"""


def _dump(row: dict[str, Any]) -> bytes:
    """Serialise one item: fixed key order, UTF-8 text, compact separators (orjson: the same bytes as
    json.dumps(row, ensure_ascii=False, separators=(",", ":")), five times faster)."""
    return orjson.dumps(row)


def write_simulation(directory: Path, items: int | None = None, seed: int = 0, neutral: bool = False,
                     outputs: int | None = None) -> list[Path]:  # fmt: skip
    """Write DIR/record.jsonl, DIR/refsens.toml and DIR/datasheet.md; return their paths.

    ``outputs``: model outputs scored beside the two annotator passes (default DEFAULT_OUTPUTS; 0 scores the
    annotators alone, as the paper does).
    """
    if items is not None and items < len(SimulationParameters().languages):
        raise InputError(f"simulate: --items must be at least {len(SimulationParameters().languages)} "
                         f"(one per language), got {items}")  # fmt: skip
    if seed < 0:
        raise InputError(f"simulate: --seed must be a non-negative integer, got {seed}")
    if outputs is not None and not 0 <= outputs <= MAX_OUTPUTS:
        raise InputError(f"simulate: --outputs must be between 0 and {MAX_OUTPUTS} (model outputs beside the two "
                         f"annotator passes), got {outputs}")  # fmt: skip
    parameters = SimulationParameters()
    if outputs is not None:
        parameters = replace(parameters, models=simulated_models(outputs))
    if items is not None:
        parameters = replace(parameters, items=items)
    if neutral:
        parameters = replace(parameters, silent_default_keeps_a=0.5)
    return write_parameters(Path(directory), parameters, seed)


def write_parameters(directory: Path, parameters: SimulationParameters, seed: int) -> list[Path]:
    """Simulate with explicit parameters and write the three files; return their paths."""
    rows = simulate_rows(parameters, seed)
    directory.mkdir(parents=True, exist_ok=True)
    record_path = directory / "record.jsonl"
    config_path = directory / "refsens.toml"
    datasheet_path = directory / "datasheet.md"
    record_path.write_bytes(b"".join(_dump(row) + b"\n" for row in rows))
    config_path.write_text(render_config(parameters, seed), encoding="utf-8", newline="")
    datasheet_path.write_text(render_datasheet(parameters, seed, rows), encoding="utf-8", newline="")
    return [record_path, config_path, datasheet_path]
