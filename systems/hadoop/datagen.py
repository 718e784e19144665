"""Seeded generators of the tables the Hive workloads query (HiBench's ``sql`` data, ours).

The shapes are those of the Pavlo et al. benchmark that HiBench's Join and Aggregation use:
``rankings(pageURL, pageRank, avgDuration)`` and ``uservisits(sourceIP, destURL, visitDate,
adRevenue, userAgent, countryCode, languageCode, searchWord, duration)``, as comma-separated
text. Visits pick their page from a Zipf-like law (a few pages get most visits, as on the web)
and their date uniformly over 1998–2001, so the join's one-year filter keeps about a quarter of
them. The same (sizes, seed) always gives the same bytes, on any machine.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rankings", "uservisits"]

_AGENTS = ("Mozilla/5.0", "Opera/9.80", "Safari/537.36", "curl/8.4", "Wget/1.21")
_COUNTRIES = ("USA", "CHN", "IND", "BRA", "DEU", "FRA", "GBR", "JPN", "RUS", "NGA")
_LANGUAGES = ("en", "zh", "hi", "pt", "de", "fr", "ja", "ru", "es", "ar")
_WORDS = ("tuning", "hadoop", "config", "knob", "query", "cluster", "yarn", "hive", "join")
_DAY0 = np.datetime64("1998-01-01")
_DAYS = 4 * 365


def _url(page: int) -> str:
    return f"http://p{page}.example.org/index.html"


def rankings(pages: int, seed: int = 0) -> str:
    """``pages`` rows of ``pageURL,pageRank,avgDuration``."""
    rng = np.random.default_rng([seed, 1])
    rank = rng.integers(1, 10_000, pages)
    duration = rng.integers(1, 100, pages)
    return "".join(f"{_url(i)},{rank[i]},{duration[i]}\n" for i in range(pages))


def uservisits(rows: int, pages: int, seed: int = 0) -> str:
    """``rows`` visits of ``pages`` pages (the pages of :func:`rankings` with that count)."""
    rng = np.random.default_rng([seed, 2])
    # Zipf-like page popularity over exactly `pages` pages (numpy's zipf is unbounded).
    weights = 1.0 / np.arange(1, pages + 1) ** 0.8
    page = rng.choice(pages, size=rows, p=weights / weights.sum())
    ip = rng.integers(0, 256, (rows, 4))
    day = _DAY0 + rng.integers(0, _DAYS, rows).astype("timedelta64[D]")
    revenue = rng.random(rows) * 1000
    agent = rng.integers(0, len(_AGENTS), rows)
    country = rng.integers(0, len(_COUNTRIES), rows)
    word = rng.integers(0, len(_WORDS), rows)
    seconds = rng.integers(1, 300, rows)
    return "".join(
        f"{ip[i, 0]}.{ip[i, 1]}.{ip[i, 2]}.{ip[i, 3]},{_url(page[i])},{day[i]},"
        f"{revenue[i]:.4f},{_AGENTS[agent[i]]},{_COUNTRIES[country[i]]},"
        f"{_LANGUAGES[country[i]]},{_WORDS[word[i]]},{seconds[i]}\n"
        for i in range(rows)
    )
