"""TPC-C tables, scale and the per-database differences the driver needs (DB-API connections,
parameter style, row locking, transaction start).

The nine tables follow the TPC-C specification's clause 1.3 (columns and keys); money is
DECIMAL, ids are integers. ``Scale`` lets a small machine load a reduced database: the
specification's cardinalities are ``items=100000`` and ``customers=3000`` per district.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import ConfigError

__all__ = ["TABLES", "Dialect", "Scale", "connect", "ddl", "dialect_of"]

DISTRICTS = 10  # per warehouse, fixed by the specification


@dataclass(frozen=True)
class Scale:
    """Database size: warehouses, items, and customers (= initial orders) per district."""

    warehouses: int = 1
    items: int = 100_000
    customers: int = 3_000

    def __post_init__(self) -> None:
        if self.warehouses < 1 or self.items < 100 or self.customers < 30:
            raise ConfigError(
                f"TPC-C scale too small: {self} (need warehouses >= 1, "
                "items >= 100, customers >= 30)"
            )

    @property
    def new_orders(self) -> int:
        """Undelivered orders per district at load time (900 of 3000 in the spec: 30 %)."""
        return self.customers * 3 // 10

    @property
    def last_names(self) -> int:
        """Distinct last-name numbers in use (1000 in the spec; fewer for tiny scales)."""
        return min(1000, self.customers)


TABLES = (
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
)

_DDL = """
CREATE TABLE warehouse (
  w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
  w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
  PRIMARY KEY (w_id));
CREATE TABLE district (
  d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9),
  d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT,
  PRIMARY KEY (d_w_id, d_id));
CREATE TABLE customer (
  c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16),
  c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20),
  c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since {ts},
  c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4),
  c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT,
  c_delivery_cnt INT, c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id));
CREATE INDEX customer_by_name ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE TABLE history (
  h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT, h_date {ts},
  h_amount DECIMAL(6,2), h_data VARCHAR(24));
CREATE TABLE new_order (
  no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id));
CREATE TABLE orders (
  o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_entry_d {ts},
  o_carrier_id INT, o_ol_cnt INT, o_all_local INT,
  PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE INDEX orders_by_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
CREATE TABLE order_line (
  ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL,
  ol_i_id INT, ol_supply_w_id INT, ol_delivery_d {ts}, ol_quantity INT,
  ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number));
CREATE TABLE item (
  i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2),
  i_data VARCHAR(50), PRIMARY KEY (i_id));
CREATE TABLE stock (
  s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT,
  s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24),
  s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24),
  s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INT, s_order_cnt INT, s_remote_cnt INT,
  s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id));
"""


def ddl(dialect: str) -> list[str]:
    """The CREATE statements for ``dialect`` (postgres, mysql or sqlite)."""
    ts = "DATETIME" if dialect == "mysql" else "TIMESTAMP"
    return [s.strip() for s in _DDL.format(ts=ts).split(";") if s.strip()]


@dataclass(frozen=True)
class Dialect:
    """How one database spells what the transactions need."""

    name: str
    placeholder: str  # DB-API paramstyle marker
    for_update: str  # row-lock suffix of a SELECT ("" where the engine locks otherwise)
    begin: str | None  # statement that opens a write transaction (None: implicit)

    def sql(self, text: str) -> str:
        """``text`` written with ``%s`` placeholders and ``{fu}`` for the row lock."""
        text = text.replace("{fu}", self.for_update)
        return text if self.placeholder == "%s" else text.replace("%s", self.placeholder)


_DIALECTS = {
    "postgres": Dialect("postgres", "%s", " FOR UPDATE", None),
    "mysql": Dialect("mysql", "%s", " FOR UPDATE", None),
    # SQLite locks the whole database; BEGIN IMMEDIATE takes the write lock up front so two
    # writers never deadlock on a read-to-write upgrade.
    "sqlite": Dialect("sqlite", "?", "", "BEGIN IMMEDIATE"),
}


def dialect_of(target: Mapping[str, Any]) -> Dialect:
    try:
        return _DIALECTS[str(target["dialect"])]
    except KeyError:
        raise ConfigError(
            f"TPC-C: unknown database dialect in {dict(target)!r}; "
            f"use one of {', '.join(_DIALECTS)}"
        ) from None


def connect(target: Mapping[str, Any]) -> Any:
    """A DB-API connection (autocommit off, except sqlite where BEGIN is explicit).

    ``target``: ``{"dialect": "postgres"|"mysql", host, port, user, password, database}`` or
    ``{"dialect": "sqlite", "path": ..., "init_sql": [pragmas run on every connection]}``.
    """
    dialect = dialect_of(target).name
    if dialect == "postgres":
        import psycopg

        return psycopg.connect(
            host=target["host"],
            port=int(target["port"]),
            user=target["user"],
            password=target.get("password") or None,
            dbname=target["database"],
            connect_timeout=30,
        )
    if dialect == "mysql":
        import pymysql

        return pymysql.connect(
            host=target["host"],
            port=int(target["port"]),
            user=target["user"],
            password=target.get("password", ""),
            database=target["database"],
            connect_timeout=30,
            autocommit=False,
        )
    import sqlite3

    conn = sqlite3.connect(
        target["path"], timeout=30, isolation_level=None, check_same_thread=False
    )
    for statement in target.get("init_sql", []):
        conn.execute(statement)
    return conn
