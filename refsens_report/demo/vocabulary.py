"""Invented text: the words each language's synthetic prompts are made of, and a mention's or decoy's text.

Every name, number and address is fictitious: numbers carry runs of zeros that no real numbering plan
issues, e-mail addresses use the reserved example.* domains.
"""

from __future__ import annotations

from dataclasses import dataclass


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
        instructions=(
            "इस नोट को औपचारिक बनाइए:",
            "इस संदेश से संपर्क विवरण निकालिए:",
            "इस दावे का सारांश लिखिए:",
            "इस ईमेल का अंग्रेज़ी में अनुवाद कीजिए:",
        ),
        fillers=("कृपया जल्दी जवाब दें।", "यह जानकारी गोपनीय है।", "बैठक कल सुबह है।", "भुगतान अभी बाकी है।"),
        connectors=(", ", "; ", " और ", " — "),
        given_names=("अनीता", "राहुल", "प्रिया", "अमित", "सुनीता", "विकास", "नेहा", "रोहन"),
        family_names=("शर्मा", "वर्मा", "गुप्ता", "सिंह", "पटेल", "मेहता", "जोशी", "राव"),
        name_order="given family",
        titles=("डॉ. ", "श्री ", "श्रीमती "),
        title_side="before",
        country_code="+91 ",
        phone="00000 0XXXX",
        streets=("हार्बर रोड", "गांधी मार्ग", "स्टेशन रोड", "झील मार्ग"),
        street_format="{number} {street}",
        flat_format="फ्लैट {flat}, ",
        flat_side="before",
        handles=("anita", "rahul", "priya", "amit", "sunita", "vikas"),
        id_number="0000 XXXX XXXX",
        tax_number="ZZZZZ0XXXZ",
        passport_number="Z000XXXX",
        bank_account="0000XXXXXXXX",
        date_format="{d:02d}/{m:02d}/{y}",
        cities=("मुंबई", "पुणे", "जयपुर"),
        dates=("3 मार्च", "12 जून"),
        order="ऑर्डर 00-XXXX",
        companies=("हार्बर बीमा", "झील बैंक"),
    ),
    "pt": Vocabulary(
        instructions=(
            "Torne esta nota mais formal:",
            "Liste os dados de contato desta mensagem:",
            "Resuma este pedido de indenização:",
            "Traduza este e-mail para o inglês:",
        ),
        fillers=(
            "Por favor, responda hoje.",
            "Esta informação é confidencial.",
            "A reunião é amanhã de manhã.",
            "O pagamento ainda está pendente.",
        ),
        connectors=(", ", "; ", " e ", " — "),
        given_names=("Ana", "João", "Maria", "Pedro", "Beatriz", "Lucas", "Mariana", "Tiago"),
        family_names=("Silva", "Santos", "Oliveira", "Souza", "Costa", "Pereira", "Almeida", "Ferreira"),
        name_order="given family",
        titles=("Dr. ", "Dra. ", "Sr. ", "Sra. "),
        title_side="before",
        country_code="+351 ",
        phone="000 0XX XXX",
        streets=("Rua das Flores", "Avenida da Liberdade", "Rua do Porto", "Travessa do Sol"),
        street_format="{street}, {number}",
        flat_format=", apto {flat}",
        flat_side="after",
        handles=("ana.silva", "joao.s", "maria.c", "pedro.o", "bia.costa", "lucas.p"),
        id_number="00.XXX.XXX-X",
        tax_number="000.XXX.XXX-XX",
        passport_number="ZZ000XXX",
        bank_account="PT00 0000 0000 XXXX XXXX XXXX X",
        date_format="{d:02d}/{m:02d}/{y}",
        cities=("Lisboa", "Porto", "Coimbra"),
        dates=("3 de março", "12 de junho"),
        order="pedido 00-XXXX",
        companies=("Seguros do Porto", "Banco do Sol"),
    ),
    "pl": Vocabulary(
        instructions=(
            "Przeredaguj tę notatkę bardziej formalnie:",
            "Wypisz dane kontaktowe z tej wiadomości:",
            "Streść to zgłoszenie szkody:",
            "Przetłumacz ten e-mail na angielski:",
        ),
        fillers=(
            "Proszę o szybką odpowiedź.",
            "Te informacje są poufne.",
            "Spotkanie jest jutro rano.",
            "Płatność jest nadal zaległa.",
        ),
        connectors=(", ", "; ", " i ", " — "),
        given_names=("Anna", "Piotr", "Katarzyna", "Tomasz", "Magdalena", "Marek", "Agnieszka", "Paweł"),
        family_names=("Nowak", "Kowalski", "Wiśniewska", "Wójcik", "Kamińska", "Lewandowski", "Zielińska", "Szymański"),
        name_order="given family",
        titles=("dr ", "pan ", "pani ", "prof. "),
        title_side="before",
        country_code="+48 ",
        phone="000 0XX XXX",
        streets=("ul. Polna", "ul. Lipowa", "ul. Portowa", "al. Słoneczna"),
        street_format="{street} {number}",
        flat_format=" m. {flat}",
        flat_side="after",
        handles=("anna.n", "piotr.k", "kasia.w", "tomek.w", "magda.k", "marek.l"),
        id_number="00XXXXXXXXX",
        tax_number="000-XXX-XX-XX",
        passport_number="ZZ00XXXXX",
        bank_account="PL00 0000 0000 XXXX XXXX XXXX XXXX",
        date_format="{d:02d}.{m:02d}.{y}",
        cities=("Gdańsk", "Kraków", "Poznań"),
        dates=("3 marca", "12 czerwca"),
        order="zamówienie 00-XXXX",
        companies=("Portowe Ubezpieczenia", "Bank Słoneczny"),
    ),
    "sv": Vocabulary(
        instructions=(
            "Gör den här anteckningen mer formell:",
            "Lista kontaktuppgifterna i det här meddelandet:",
            "Sammanfatta den här skadeanmälan:",
            "Översätt det här mejlet till engelska:",
        ),
        fillers=(
            "Svara gärna i dag.",
            "Uppgifterna är konfidentiella.",
            "Mötet är i morgon bitti.",
            "Betalningen är fortfarande obetald.",
        ),
        connectors=(", ", "; ", " och ", " – "),
        given_names=("Anna", "Erik", "Karin", "Lars", "Maria", "Johan", "Elin", "Oskar"),
        family_names=("Berg", "Lindqvist", "Johansson", "Nilsson", "Holm", "Ström", "Ekström", "Sandberg"),
        name_order="given family",
        titles=("Dr. ", "fru ", "herr ", "docent "),
        title_side="before",
        country_code="+46 ",
        phone="70 000 XX XX",
        streets=("Storgatan", "Hamnvägen", "Kyrkogatan", "Strandvägen"),
        street_format="{street} {number}",
        flat_format=", lgh {flat}",
        flat_side="after",
        handles=("anna.berg", "erik.l", "karin.j", "lars.n", "maria.h", "johan.s"),
        id_number="000000-XXXX",
        tax_number="SE00XXXXXXXX01",
        passport_number="00XXXXXX",
        bank_account="SE00 0000 0000 XXXX XXXX XXXX",
        date_format="{y}-{m:02d}-{d:02d}",
        cities=("Göteborg", "Uppsala", "Malmö"),
        dates=("3 mars", "12 juni"),
        order="order 00-XXXX",
        companies=("Hamnförsäkringar", "Strandbanken"),
    ),
    "zh": Vocabulary(
        instructions=(
            "请把这段留言改写得更正式：",
            "列出这条消息中的联系方式：",
            "总结这份理赔申请：",
            "把这封邮件翻译成英文：",
        ),
        fillers=("请尽快回复。", "这些信息是保密的。", "会议在明天上午。", "付款仍未完成。"),
        connectors=("，", "；", "和", "、"),
        given_names=("伟", "芳", "娜", "敏", "静", "磊", "洋", "婷"),
        family_names=("王", "李", "张", "刘", "陈", "杨", "赵", "黄"),
        name_order="familygiven",
        titles=("先生", "女士", "医生", "教授"),
        title_side="after",
        country_code="+86 ",
        phone="100 0XXX XXXX",
        streets=("海港路", "人民路", "长江街", "中山路"),
        street_format="{street}{number}号",
        flat_format="{flat}室",
        flat_side="after",
        handles=("wang.wei", "li.fang", "zhang.na", "liu.min", "chen.jing", "yang.lei"),
        id_number="000000XXXXXXXXXXXX",
        tax_number="00000000XXXXXXXXXX",
        passport_number="E000XXXXX",
        bank_account="0000 0000 XXXX XXXX XXX",
        date_format="{y}年{m}月{d}日",
        cities=("上海", "杭州", "成都"),
        dates=("3月3日", "6月12日"),
        order="订单00-XXXX",
        companies=("海港保险", "长江银行"),
    ),
    "ar": Vocabulary(
        instructions=(
            "أعد صياغة هذه الملاحظة بأسلوب رسمي:",
            "استخرج بيانات الاتصال من هذه الرسالة:",
            "لخّص طلب التعويض هذا:",
            "ترجم هذا البريد إلى الإنجليزية:",
        ),
        fillers=("يرجى الرد اليوم.", "هذه المعلومات سرية.", "الاجتماع صباح الغد.", "الدفعة ما زالت مستحقة."),
        connectors=("، ", "؛ ", " - ", " ثم "),
        given_names=("أحمد", "فاطمة", "عمر", "مريم", "يوسف", "ليلى", "خالد", "نور"),
        family_names=("حداد", "منصور", "سالم", "ناصر", "خوري", "عباس", "حسن", "قاسم"),
        name_order="given family",
        titles=("د. ", "السيد ", "السيدة ", "م. "),
        title_side="before",
        country_code="+971 ",
        phone="50 000 XXXX",
        streets=("شارع الميناء", "شارع النخيل", "طريق الملك", "شارع الجامعة"),
        street_format="{number} {street}",
        flat_format="شقة {flat}، ",
        flat_side="before",
        handles=("ahmad.h", "fatima.m", "omar.s", "maryam.n", "yusuf.k", "layla.a"),
        id_number="000-XXXX-XXXXXXX-X",
        tax_number="000XXXXXXXXXXXX",
        passport_number="Z000XXXXX",
        bank_account="AE00 0000 XXXX XXXX XXXX XXX",
        date_format="{d:02d}/{m:02d}/{y}",
        cities=("دبي", "عمّان", "الدوحة"),
        dates=("3 مارس", "12 يونيو"),
        order="طلب 00-XXXX",
        companies=("تأمين الميناء", "بنك النخيل"),
    ),
}


def _digits(pattern: str, value: int) -> str:
    """Fill each X of a pattern with the next decimal digit of value."""
    slots = pattern.count("X")
    return pattern.replace("X", "{}").format(*f"{value % 10**slots:0{slots}d}") if slots else pattern


def mention_text(vocabulary: Vocabulary, label: str, with_variant: bool, value: int) -> tuple[str, str, str]:
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
    pattern = {
        "ID_NUMBER": v.id_number,
        "TAX_NUMBER": v.tax_number,
        "PASSPORT_NUMBER": v.passport_number,
        "BANK_ACCOUNT": v.bank_account,
    }[label]
    return ("", _digits(pattern, draw[3]), "before")


def decoy_text(vocabulary: Vocabulary, kind: str, value: int) -> str:
    """Return the text of a decoy: something that is not PII but looks labellable."""
    v = vocabulary
    if kind == "city":
        return v.cities[value % len(v.cities)]
    if kind == "date":
        return v.dates[value % len(v.dates)]
    if kind == "order":
        return _digits(v.order, value)
    return v.companies[value % len(v.companies)]
