"""The paired permutation null of the neutrality skew: the sign-flip test, its rows, and its calibration.

Three ways: against theory (with differences of ±1 the sign-flip distribution is 2·Binomial(m, ½) − m,
so the exact p is a two-sided sign test), against an outside reference (scipy.stats.permutation_test, the call
kept here), and against itself with a seed. The calibration under a neutral simulated reference is checked here
on a few small records; bench/permutation_null.py runs the 200-record version (KS test and the share of p < 0.05).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import A, B, D, R, audit_items, item, pick, select
from scipy import stats

from refsens_report import permutation
from refsens_report.config import config_from_dict
from refsens_report.demo import SimulationParameters, simulate_rows
from refsens_report.errors import InputError
from refsens_report.permutation import is_exact, permutation_seed, sign_flip_p


def sign_test_p(differences: np.ndarray) -> float:
    """Return the exact two-sided sign-flip p for differences of ±1 (and 0): P(|2X − m| ≥ |Σ d|), X ~ Bin(m, ½)."""
    d = differences[differences != 0]
    m, observed = len(d), abs(int(d.sum()))
    if m == 0 or observed == 0:
        return 1.0
    return min(1.0, 2 * stats.binom.cdf((m - observed) // 2, m, 0.5))


def scipy_paired_p(differences: np.ndarray, resamples: float) -> float:
    """Return scipy's paired permutation p of Σ(x − y) with x − y = d (the roles of x and y swapped per pair)."""
    x, y = np.maximum(differences, 0.0), np.maximum(-differences, 0.0)
    result = stats.permutation_test(
        (x, y),
        lambda first, second, axis: np.sum(first - second, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(7),
    )
    return float(result.pvalue)


SEED = permutation_seed(0, 1, 2)


def test_exact_p_equals_scipy_on_every_sign_vector() -> None:
    """Few informative items: every sign vector is enumerated, and p equals scipy's exact paired permutation p."""
    rng = np.random.default_rng(3)
    for differences in (np.array([1.0, 1, 1, -1, 1, 0, 1, 1, 0, 1]), rng.normal(0.4, 1.0, size=11)):
        p, informative = sign_flip_p(differences, 10_000, SEED)
        assert informative == np.count_nonzero(differences) and is_exact(informative, 10_000)
        assert p == pytest.approx(scipy_paired_p(differences[differences != 0], np.inf), abs=1e-12)
    ones = np.array([1, 1, 1, 1, 1, 1, 1, -1, 0, 0, 1, 1])
    assert sign_flip_p(ones, 10_000, SEED)[0] == pytest.approx(sign_test_p(ones), abs=1e-12)


def test_random_sign_vectors_agree_with_scipy_and_the_sign_test() -> None:
    """Many informative items: 10,000 seeded sign vectors land within Monte Carlo error of the exact p."""
    rng = np.random.default_rng(4)
    differences = rng.choice([-1.0, 1.0], p=[0.43, 0.57], size=300)
    p, informative = sign_flip_p(np.concatenate([differences, np.zeros(50)]), 10_000, SEED)
    assert informative == 300 and not is_exact(300, 10_000)
    exact = sign_test_p(differences)
    error = np.sqrt(exact * (1 - exact) / 10_000)
    assert abs(p - exact) < 4 * error + 1e-4
    assert abs(p - scipy_paired_p(differences, 10_000)) < 8 * error + 2e-4


def test_p_is_one_without_informative_items_and_reproducible_with_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert sign_flip_p(np.zeros(40), 10_000, SEED) == (1.0, 0)
    differences = np.random.default_rng(5).choice([-1.0, 1.0], size=500)
    first = sign_flip_p(differences, 3_000, permutation_seed(0, 9))
    assert first == sign_flip_p(differences, 3_000, permutation_seed(0, 9))
    assert first != sign_flip_p(differences, 3_000, permutation_seed(1, 9))
    monkeypatch.setattr(permutation, "CHUNK_CELLS", 700)  # other chunks, the same sign vectors
    assert sign_flip_p(differences, 3_000, permutation_seed(0, 9)) == first
    # differences of ±1 count set bits instead of multiplying: the same sign vectors, the same p
    monkeypatch.setattr(permutation, "_sign_masks", lambda differences, words: None)
    assert sign_flip_p(differences, 3_000, permutation_seed(0, 9)) == first
    # the smallest p random sign vectors can give is 1 / (permutations + 1)
    assert sign_flip_p(np.ones(100), 999, SEED)[0] == pytest.approx(1 / 1000)


def _project(tmp_path, equal_to: dict[str, list[str]], **config):  # noqa: ANN001, ANN202
    """Audit a record whose delivered gold equals A or B (or both, or neither) as listed per language."""
    items = []
    for language, pattern in equal_to.items():
        for number, which in enumerate(pattern):
            a, b = [[0, 4, "NAME"]], [[0, 5, "NAME"]]
            if which == "both":
                b = a
            delivered = {"A": a, "B": b, "both": a, "neither": [[9, 12, "NAME"]]}[which]
            items.append(
                item(
                    f"{language}-{number}",
                    language,
                    {"third_pass": False},
                    annotator_a=a,
                    annotator_b=b,
                    delivered=delivered,
                    reviewer=[[0, 4, "NAME"]],
                )
            )
    return audit_items(tmp_path, items, **config)


def test_neutrality_rows_carry_the_exact_sign_test(tmp_path) -> None:  # noqa: ANN001
    """Per language and pooled, the row's p is the sign test over the informative items it counts in n_items."""
    results = _project(
        tmp_path,
        {"en": ["A"] * 9 + ["B"] + ["both", "neither"] * 3, "fr": ["A", "B", "B", "A", "A", "both"]},
        audit={"permutations": 40_000},
    )
    rows = select(results.rows, analysis="neutrality", statistic="skew_permutation_p", reference=D)
    assert [row["language"] for row in rows] == ["en", "fr", "pooled"]
    en = pick(rows, language="en")
    assert (en["n_items"], en["output"], en["output_2"], en["subset"]) == (10, A, B, "audited")
    assert en["estimate"] == pytest.approx(sign_test_p(np.array([1] * 9 + [-1])), abs=1e-12)  # 22/1024
    assert pick(rows, language="fr")["estimate"] == pytest.approx(1.0)  # 3 to 2: p = 1
    pooled = pick(rows, language="pooled")  # 2^15 sign vectors, all enumerated with 40,000 permutations
    assert pooled["n_items"] == 15 and pooled["estimate"] == pytest.approx(sign_test_p(np.array([1] * 12 + [-1] * 3)))
    assert all(row["ci_low"] is None and row["p_value"] is None for row in rows)
    # the reviewer equals A on every item: 18 informative, all +1 (exact p 2 / 2^18), from 40,000 random sign vectors
    reviewer = pick(results.rows, analysis="neutrality", statistic="skew_permutation_p", reference=R, language="pooled")
    assert reviewer["n_items"] == 18 and reviewer["estimate"] < 1e-3
    fewer = _project(tmp_path / "fewer", {"en": ["A"] * 9 + ["B"]}, audit={"permutations": 2_000})
    assert pick(fewer.rows, statistic="skew_permutation_p", reference=D, language="en")["estimate"] == en["estimate"]


def test_one_language_pools_the_same_test(tmp_path) -> None:  # noqa: ANN001
    """With one language the pooled test is the language's, random sign vectors included (the same stream)."""
    results = _project(tmp_path, {"en": ["A"] * 40 + ["B"] * 25 + ["both"] * 5})
    rows = select(results.rows, analysis="neutrality", statistic="skew_permutation_p", reference=D)
    assert len(rows) == 2 and rows[0]["n_items"] == 65 and rows[0]["estimate"] == rows[1]["estimate"]
    assert rows[0]["estimate"] == pytest.approx(sign_test_p(np.array([1] * 40 + [-1] * 25)), abs=0.02)


def test_permutations_is_a_positive_integer(tmp_path) -> None:  # noqa: ANN001
    base = {
        "dataset": {"name": "x", "version": "1"},
        "record": {"path": "record.jsonl"},
        "roles": {"annotators": [A, B], "outputs": [A], "references": [D]},
    }
    (tmp_path / "record.jsonl").write_text("")
    assert config_from_dict(base, tmp_path / "refsens.toml").audit.permutations == 10_000
    for bad, message in (
        (0, "must be a positive integer"),
        (2.5, "must be a positive integer"),
        (True, "must be a positive integer"),
        (10**7, "must be at most 1,000,000"),
    ):
        with pytest.raises(InputError, match=message):
            config_from_dict({**base, "audit": {"permutations": bad}}, tmp_path / "refsens.toml")


def _delivered_p(parameters: SimulationParameters, seed: int) -> float:
    """Return the pooled permutation p of the delivered gold's skew on one simulated record (audited items)."""
    differences = []
    for row in simulate_rows(parameters, seed):
        spans = {name: {tuple(span) for span in found} for name, found in row["labellings"].items()}
        if {"annotator_a", "annotator_b", "delivered", "reviewer"} <= set(spans):
            equal_a = spans["delivered"] == spans["annotator_a"]
            differences.append(int(equal_a) - int(spans["delivered"] == spans["annotator_b"]))
    return sign_flip_p(np.array(differences), 10_000, permutation_seed(0, seed))[0]


def test_the_p_is_calibrated_under_a_neutral_reference_and_small_under_the_silent_default() -> None:
    """Small version of bench/permutation_null.py: 30 neutral records rarely reject; the default always does."""
    neutral = replace_parameters(silent_default_keeps_a=0.5)
    p_neutral = np.array([_delivered_p(neutral, seed) for seed in range(30)])
    # P(p < 0.05) ≤ 0.05 under the null: 5 or more of 30 would happen with probability 0.016
    assert np.sum(p_neutral < 0.05) <= 4
    assert 0.35 < p_neutral.mean() < 0.65  # uniform on [0, 1] has mean ½
    p_default = [_delivered_p(replace_parameters(), seed) for seed in range(3)]
    assert max(p_default) < 0.001


def replace_parameters(**changes: float) -> SimulationParameters:
    """Return small simulated records (1,200 items) with the reviewer on every item, so all are audited."""
    from dataclasses import replace

    return replace(SimulationParameters(), items=1200, reviewer_share=1.0, **changes)
