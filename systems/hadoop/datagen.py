"""Seeded generators of the input of the Hive-Hadoop workloads (HiBench's data, made by ours).

Tables for the SQL queries (:func:`rankings`, :func:`uservisits`), a web graph for PageRank
(:func:`graph`) and clustered points for KMeans (:func:`points`).

The shapes are those of the Pavlo et al. benchmark that HiBench's Join and Aggregation use:
``rankings(pageURL, pageRank, avgDuration)`` and ``uservisits(sourceIP, destURL, visitDate,
adRevenue, userAgent, countryCode, languageCode, searchWord, duration)``, as comma-separated
text. Visits pick their page from a Zipf-like law (a few pages get most visits, as on the web)
and their date uniformly over 1998–2001, so the join's one-year filter keeps about a quarter of
them. The same (sizes, seed) always gives the same bytes, on any machine (numpy's seeded
generators are stable across platforms).
"""

from __future__ import annotations

import numpy as np

__all__ = ["cluster_centres", "graph", "points", "rankings", "uservisits"]

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


def graph(nodes: int, seed: int = 0, mean_degree: int = 8) -> str:
    """A directed web graph for PageRank, one ``node<TAB>rank<TAB>out1,out2,...`` line per
    node (rank 1/N to begin with). Out-degrees are geometric around ``mean_degree`` and link
    targets Zipf-like, so a few pages collect most links, as on the web; a node never links to
    itself and some nodes have no out-links (dangling)."""
    rng = np.random.default_rng([seed, 3])
    degree = rng.geometric(1.0 / (mean_degree + 1), nodes) - 1
    weights = 1.0 / np.arange(1, nodes + 1) ** 0.9
    order = rng.permutation(nodes)  # popularity is not the node number
    targets = rng.choice(nodes, size=int(degree.sum()), p=weights / weights.sum())
    rank = 1.0 / nodes
    lines, start = [], 0
    for node in range(nodes):
        links = {int(order[t]) for t in targets[start : start + degree[node]]} - {node}
        start += degree[node]
        lines.append(f"{node}\t{rank}\t{','.join(map(str, sorted(links)))}\n")
    return "".join(lines)


def points(count: int, dims: int, clusters: int, seed: int = 0) -> str:
    """``count`` comma-separated points in ``dims`` dimensions around ``clusters`` Gaussian
    centres (HiBench's KMeans data is a Gaussian mixture too), in shuffled order."""
    rng = np.random.default_rng([seed, 4])
    centres = cluster_centres(dims, clusters, seed)
    which = rng.integers(0, clusters, count)
    data = centres[which] + rng.normal(0, 10, (count, dims))
    return "".join(",".join(f"{x:.4f}" for x in row) + "\n" for row in data)


def cluster_centres(dims: int, clusters: int, seed: int = 0) -> np.ndarray:
    """The centres :func:`points` draws around (uniform in [-100, 100]^dims)."""
    return np.random.default_rng([seed, 5]).uniform(-100, 100, (clusters, dims))
