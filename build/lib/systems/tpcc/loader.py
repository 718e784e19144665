"""TPC-C random inputs (clause 2.1.6 / 4.3.2) and the initial database population (clause 4.3.3).

Rows are generated per table and written in bulk: ``COPY`` on PostgreSQL, multi-row INSERT
(``executemany``) on MySQL and SQLite. Random strings are cut from one pre-generated pool,
which keeps generation of ~600k rows per warehouse to a few seconds.
"""

from __future__ import annotations

import logging
import random
import string
import time
from collections.abc import Iterable, Iterator
from typing import Any

from systems.tpcc.schema import DISTRICTS, TABLES, Dialect, Scale, ddl

__all__ = ["SYLLABLES", "Random", "last_name", "load"]

log = logging.getLogger(__name__)

SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")
NOW = "2024-01-01 00:00:00"  # a fixed load timestamp keeps every loaded database identical


def last_name(number: int) -> str:
    """C_LAST for a number in 0..999: the syllables of its three digits."""
    return "".join(SYLLABLES[int(d)] for d in f"{number:03d}")


class Random:
    """The specification's random functions on a seeded generator.

    ``nurand(A, x, y)`` is the non-uniform distribution ``(((rand(0,A) | rand(x,y)) + C) %
    (y-x+1)) + x``; the run-time constants C are drawn once per generator.
    """

    _ALPHA = string.ascii_letters + string.digits

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.c_last = self.rng.randint(0, 255)
        self.c_id = self.rng.randint(0, 1023)
        self.i_id = self.rng.randint(0, 8191)
        self._pool = "".join(self.rng.choices(self._ALPHA, k=200_003))
        self._digits = "".join(self.rng.choices(string.digits, k=50_021))

    def uniform(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def nurand(self, a: int, low: int, high: int, c: int) -> int:
        return (
            ((self.rng.randint(0, a) | self.rng.randint(low, high)) + c) % (high - low + 1)
        ) + low

    def astring(self, low: int, high: int) -> str:
        n = self.rng.randint(low, high)
        start = self.rng.randrange(len(self._pool) - n)
        return self._pool[start : start + n]

    def nstring(self, low: int, high: int) -> str:
        n = self.rng.randint(low, high)
        start = self.rng.randrange(len(self._digits) - n)
        return self._digits[start : start + n]

    def zip(self) -> str:
        return self.nstring(4, 4) + "11111"

    def decimal(self, low: float, high: float, places: int) -> float:
        return round(self.rng.uniform(low, high), places)

    def data_with_original(self) -> str:
        """I_DATA / S_DATA: 26..50 characters, 10 % containing "ORIGINAL" somewhere."""
        text = self.astring(26, 50)
        if self.rng.random() < 0.1:
            at = self.rng.randint(0, len(text) - 8)
            text = text[:at] + "ORIGINAL" + text[at + 8 :]
        return text

    # -- scaled run-time inputs -------------------------------------------------------------
    @staticmethod
    def _span(a: int, size: int) -> int:
        """The NURand ``A`` for a reduced range: the spec's A, or the largest 2^k-1 that keeps
        the same skew shape (A about a tenth of the range) when the range is smaller."""
        while a > 1 and a * 4 > size:
            a //= 2
        return a

    def item_id(self, scale: Scale) -> int:
        return self.nurand(self._span(8191, scale.items), 1, scale.items, self.i_id)

    def customer_id(self, scale: Scale) -> int:
        return self.nurand(self._span(1023, scale.customers), 1, scale.customers, self.c_id)

    def customer_last(self, scale: Scale) -> str:
        return last_name(
            self.nurand(self._span(255, scale.last_names), 0, scale.last_names - 1, self.c_last)
        )


def _items(r: Random, scale: Scale) -> Iterator[tuple[Any, ...]]:
    for i in range(1, scale.items + 1):
        yield (
            i,
            r.uniform(1, 10_000),
            r.astring(14, 24),
            r.decimal(1, 100, 2),
            r.data_with_original(),
        )


def _warehouse(r: Random, w: int) -> Iterator[tuple[Any, ...]]:
    yield (
        w,
        r.astring(6, 10),
        r.astring(10, 20),
        r.astring(10, 20),
        r.astring(10, 20),
        r.astring(2, 2),
        r.zip(),
        r.decimal(0, 0.2, 4),
        300_000.00,
    )


def _stock(r: Random, scale: Scale, w: int) -> Iterator[tuple[Any, ...]]:
    for i in range(1, scale.items + 1):
        yield (
            i,
            w,
            r.uniform(10, 100),
            *(r.astring(24, 24) for _ in range(DISTRICTS)),
            0,
            0,
            0,
            r.data_with_original(),
        )


def _districts(r: Random, scale: Scale, w: int) -> Iterator[tuple[Any, ...]]:
    for d in range(1, DISTRICTS + 1):
        yield (
            d,
            w,
            r.astring(6, 10),
            r.astring(10, 20),
            r.astring(10, 20),
            r.astring(10, 20),
            r.astring(2, 2),
            r.zip(),
            r.decimal(0, 0.2, 4),
            30_000.00,
            scale.customers + 1,
        )


def _customers(r: Random, scale: Scale, w: int, d: int) -> Iterator[tuple[Any, ...]]:
    for c in range(1, scale.customers + 1):
        name = (
            c - 1
            if c <= scale.last_names
            else r.nurand(Random._span(255, scale.last_names), 0, scale.last_names - 1, r.c_last)
        )
        yield (
            c,
            d,
            w,
            r.astring(8, 16),
            "OE",
            last_name(name),
            r.astring(10, 20),
            r.astring(10, 20),
            r.astring(10, 20),
            r.astring(2, 2),
            r.zip(),
            r.nstring(16, 16),
            NOW,
            "BC" if r.rng.random() < 0.1 else "GC",
            50_000.00,
            r.decimal(0, 0.5, 4),
            -10.00,
            10.00,
            1,
            0,
            r.astring(300, 500),
        )


def _history(r: Random, scale: Scale, w: int, d: int) -> Iterator[tuple[Any, ...]]:
    for c in range(1, scale.customers + 1):
        yield (c, d, w, d, w, NOW, 10.00, r.astring(12, 24))


def _orders(
    r: Random,
    scale: Scale,
    w: int,
    d: int,
    lines: list[tuple[Any, ...]],
    new: list[tuple[Any, ...]],
) -> list[tuple[Any, ...]]:
    """Orders of one district; fills ``lines`` (order_line) and ``new`` (new_order) too."""
    customers = list(range(1, scale.customers + 1))
    r.rng.shuffle(customers)  # O_C_ID is a random permutation of the customers
    delivered_below = scale.customers - scale.new_orders + 1
    orders = []
    for o, c in enumerate(customers, start=1):
        delivered = o < delivered_below
        count = r.uniform(5, 15)
        orders.append((o, d, w, c, NOW, r.uniform(1, 10) if delivered else None, count, 1))
        for number in range(1, count + 1):
            lines.append(
                (
                    o,
                    d,
                    w,
                    number,
                    r.uniform(1, scale.items),
                    w,
                    NOW if delivered else None,
                    5,
                    0.00 if delivered else r.decimal(0.01, 9999.99, 2),
                    r.astring(24, 24),
                )
            )
        if not delivered:
            new.append((o, d, w))
    return orders


_COLUMNS = {
    "item": "i_id, i_im_id, i_name, i_price, i_data",
    "warehouse": "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd",
    "stock": "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, "
    "s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, "
    "s_order_cnt, s_remote_cnt, s_data",
    "district": "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, "
    "d_ytd, d_next_o_id",
    "customer": "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, "
    "c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, "
    "c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data",
    "history": "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data",
    "orders": "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local",
    "order_line": "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, "
    "ol_delivery_d, ol_quantity, ol_amount, ol_dist_info",
    "new_order": "no_o_id, no_d_id, no_w_id",
}


def _write(conn: Any, dialect: Dialect, table: str, rows: Iterable[tuple[Any, ...]]) -> int:
    columns = _COLUMNS[table]
    count = 0
    if dialect.name == "postgres":
        with conn.cursor() as cur, cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
                count += 1
        return count
    marks = ", ".join([dialect.placeholder] * len(columns.split(",")))
    statement = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
    batch: list[tuple[Any, ...]] = []
    cur = conn.cursor()
    for row in rows:
        batch.append(row)
        if len(batch) == 2000:
            cur.executemany(statement, batch)
            count += len(batch)
            batch.clear()
    if batch:
        cur.executemany(statement, batch)
        count += len(batch)
    cur.close()
    return count


def load(conn: Any, dialect: Dialect, scale: Scale, seed: int = 0) -> dict[str, int]:
    """Drop and recreate the nine tables and populate them for ``scale``; returns row counts."""
    started = time.perf_counter()
    r = Random(seed)
    cur = conn.cursor()
    if dialect.begin:
        cur.execute("BEGIN")
    for table in TABLES:
        cur.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in ddl(dialect.name):
        cur.execute(statement)
    cur.close()
    counts = {"item": _write(conn, dialect, "item", _items(r, scale))}
    for w in range(1, scale.warehouses + 1):
        counts["warehouse"] = counts.get("warehouse", 0) + _write(
            conn, dialect, "warehouse", _warehouse(r, w)
        )
        for table, rows in (("stock", _stock(r, scale, w)), ("district", _districts(r, scale, w))):
            counts[table] = counts.get(table, 0) + _write(conn, dialect, table, rows)
        for d in range(1, DISTRICTS + 1):
            lines: list[tuple[Any, ...]] = []
            new: list[tuple[Any, ...]] = []
            orders = _orders(r, scale, w, d, lines, new)
            batches: list[tuple[str, Iterable[tuple[Any, ...]]]] = [
                ("customer", _customers(r, scale, w, d)),
                ("history", _history(r, scale, w, d)),
                ("orders", orders),
                ("order_line", lines),
                ("new_order", new),
            ]
            for table, batch in batches:
                counts[table] = counts.get(table, 0) + _write(conn, dialect, table, batch)
    conn.commit()
    log.info("TPC-C: loaded %s in %.1fs", counts, time.perf_counter() - started)
    return counts
