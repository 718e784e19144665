"""The five TPC-C transactions (clauses 2.4-2.8) over one DB-API connection.

Each function runs one whole transaction and commits it, or raises :class:`BusinessRollback`
for the New-Order that the specification makes roll back on purpose (1 % use an unused item
number). Database errors (deadlocks, serialisation failures) propagate to the caller, which
rolls back and counts an error. Money arithmetic happens in SQL or on floats, because drivers
return DECIMAL columns as :class:`decimal.Decimal`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from systems.tpcc.loader import Random
from systems.tpcc.schema import DISTRICTS, Dialect, Scale

__all__ = ["MIX", "TRANSACTIONS", "BusinessRollback", "Context", "pick"]

#: The standard mix (clause 5.2.3 minimums, as usually run): name -> percentage.
MIX = (
    ("new_order", 45),
    ("payment", 43),
    ("order_status", 4),
    ("delivery", 4),
    ("stock_level", 4),
)
NOW = "2024-06-01 12:00:00"


class BusinessRollback(Exception):
    """The New-Order with an unused item: rolled back by design, not counted as an error."""


class Context:
    """What a terminal needs: its connection, dialect, scale, random source and home ids."""

    def __init__(
        self, conn: Any, dialect: Dialect, scale: Scale, rnd: Random, home_w: int, home_d: int
    ) -> None:
        self.conn = conn
        self.dialect = dialect
        self.scale = scale
        self.r = rnd
        self.w = home_w
        self.d = home_d
        self.cur = conn.cursor()

    def q(self, text: str, params: tuple[Any, ...] = ()) -> Any:
        self.cur.execute(self.dialect.sql(text), params)
        return self.cur

    def one(self, text: str, params: tuple[Any, ...] = ()) -> Any:
        return self.q(text, params).fetchone()

    def begin(self) -> None:
        if self.dialect.begin:
            self.cur.execute(self.dialect.begin)

    def other_warehouse(self) -> int:
        if self.scale.warehouses == 1:
            return self.w
        other = self.r.uniform(1, self.scale.warehouses - 1)
        return other if other < self.w else other + 1

    def customer(self, w: int, d: int, by_name: bool) -> int:
        """The customer id: by number, or the middle one of those with a last name."""
        if not by_name:
            return self.r.customer_id(self.scale)
        rows = self.q(
            "SELECT c_id FROM customer WHERE c_w_id = %s AND c_d_id = %s AND "
            "c_last = %s ORDER BY c_first",
            (w, d, self.r.customer_last(self.scale)),
        )
        ids = [row[0] for row in rows.fetchall()]
        if not ids:  # impossible with the loader's names; fall back rather than fail
            return self.r.customer_id(self.scale)
        return int(ids[(len(ids) + 1) // 2 - 1])


def new_order(t: Context) -> None:
    """Clause 2.4: enter an order of 5-15 lines; 1 % name an unused item and roll back."""
    c_id = t.r.customer_id(t.scale)
    count = t.r.uniform(5, 15)
    rollback = t.r.uniform(1, 100) == 1
    lines = []
    for number in range(1, count + 1):
        item = t.r.item_id(t.scale)
        if rollback and number == count:
            item = t.scale.items + 1  # an unused item number
        remote = t.scale.warehouses > 1 and t.r.uniform(1, 100) == 1
        lines.append((item, t.other_warehouse() if remote else t.w, t.r.uniform(1, 10)))
    # Locking stock rows in item order prevents deadlocks between concurrent New-Orders.
    lines.sort()
    all_local = int(all(supply == t.w for _, supply, _ in lines))
    t.begin()
    w_tax = float(t.one("SELECT w_tax FROM warehouse WHERE w_id = %s", (t.w,))[0])
    d_tax, o_id = t.one(
        "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s{fu}", (t.w, t.d)
    )
    t.q(
        "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %s AND d_id = %s",
        (t.w, t.d),
    )
    discount = float(
        t.one(
            "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = %s "
            "AND c_d_id = %s AND c_id = %s",
            (t.w, t.d, c_id),
        )[0]
    )
    t.q(
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, "
        "o_all_local) VALUES (%s, %s, %s, %s, %s, NULL, %s, %s)",
        (o_id, t.d, t.w, c_id, NOW, count, all_local),
    )
    t.q("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (%s, %s, %s)", (o_id, t.d, t.w))
    total = 0.0
    dist_column = f"s_dist_{t.d:02d}"
    for number, (item, supply, quantity) in enumerate(lines, start=1):
        found = t.one("SELECT i_price, i_name, i_data FROM item WHERE i_id = %s", (item,))
        if found is None:
            raise BusinessRollback(f"item {item} does not exist")
        price = float(found[0])
        s_quantity, dist_info, _ = t.one(
            f"SELECT s_quantity, {dist_column}, s_data FROM stock WHERE s_w_id = %s AND "
            "s_i_id = %s{fu}",
            (supply, item),
        )
        left = s_quantity - quantity if s_quantity - quantity >= 10 else s_quantity - quantity + 91
        t.q(
            "UPDATE stock SET s_quantity = %s, s_ytd = s_ytd + %s, s_order_cnt = "
            "s_order_cnt + 1, s_remote_cnt = s_remote_cnt + %s WHERE s_w_id = %s AND "
            "s_i_id = %s",
            (left, quantity, int(supply != t.w), supply, item),
        )
        amount = round(quantity * price, 2)
        total += amount
        t.q(
            "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, "
            "ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES "
            "(%s, %s, %s, %s, %s, %s, NULL, %s, %s, %s)",
            (o_id, t.d, t.w, number, item, supply, quantity, amount, dist_info),
        )
    _ = total * (1 - discount) * (1 + w_tax + float(d_tax))  # the terminal's displayed total
    t.conn.commit()


def payment(t: Context) -> None:
    """Clause 2.5: a customer pays; warehouse, district and customer balances change."""
    d = t.r.uniform(1, DISTRICTS)
    home = t.r.uniform(1, 100) <= 85
    c_w, c_d = (t.w, d) if home else (t.other_warehouse(), t.r.uniform(1, DISTRICTS))
    amount = t.r.decimal(1.00, 5000.00, 2)
    by_name = t.r.uniform(1, 100) <= 60
    t.begin()
    t.q("UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %s", (amount, t.w))
    w_name = t.one(
        "SELECT w_name, w_street_1, w_city, w_state, w_zip FROM warehouse WHERE w_id = %s", (t.w,)
    )[0]
    t.q("UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %s AND d_id = %s", (amount, t.w, d))
    d_name = t.one(
        "SELECT d_name, d_street_1, d_city, d_state, d_zip FROM district "
        "WHERE d_w_id = %s AND d_id = %s",
        (t.w, d),
    )[0]
    c_id = t.customer(c_w, c_d, by_name)
    credit = t.one(
        "SELECT c_credit, c_first, c_last, c_balance FROM customer WHERE c_w_id = %s "
        "AND c_d_id = %s AND c_id = %s{fu}",
        (c_w, c_d, c_id),
    )[0]
    t.q(
        "UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, "
        "c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
        (amount, amount, c_w, c_d, c_id),
    )
    if credit == "BC":  # bad credit: prepend the payment to C_DATA, keep 500 characters
        data = t.one(
            "SELECT c_data FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
            (c_w, c_d, c_id),
        )[0]
        entry = f"{c_id} {c_d} {c_w} {d} {t.w} {amount:.2f} | "
        t.q(
            "UPDATE customer SET c_data = %s WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
            ((entry + str(data))[:500], c_w, c_d, c_id),
        )
    t.q(
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, "
        "h_data) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (c_id, c_d, c_w, d, t.w, NOW, amount, f"{str(w_name)[:10]}    {str(d_name)[:10]}"),
    )
    t.conn.commit()


def order_status(t: Context) -> None:
    """Clause 2.6 (read-only): a customer's balance and the lines of their last order."""
    d = t.r.uniform(1, DISTRICTS)
    t.begin()
    c_id = t.customer(t.w, d, t.r.uniform(1, 100) <= 60)
    t.one(
        "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = %s AND "
        "c_d_id = %s AND c_id = %s",
        (t.w, d, c_id),
    )
    last = t.one(
        "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = %s AND "
        "o_d_id = %s AND o_c_id = %s ORDER BY o_id DESC LIMIT 1",
        (t.w, d, c_id),
    )
    if last is not None:
        t.q(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM "
            "order_line WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s",
            (t.w, d, last[0]),
        ).fetchall()
    t.conn.commit()


def delivery(t: Context) -> None:
    """Clause 2.7: deliver the oldest undelivered order of each of the ten districts."""
    carrier = t.r.uniform(1, 10)
    t.begin()
    for d in range(1, DISTRICTS + 1):
        oldest = t.one(
            "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = %s AND no_d_id = %s", (t.w, d)
        )
        if oldest is None or oldest[0] is None:
            continue  # nothing left to deliver in this district
        o_id = oldest[0]
        deleted = t.q(
            "DELETE FROM new_order WHERE no_w_id = %s AND no_d_id = %s AND no_o_id = %s",
            (t.w, d, o_id),
        ).rowcount
        if deleted == 0:
            continue  # a concurrent Delivery took it
        c_id = t.one(
            "SELECT o_c_id FROM orders WHERE o_w_id = %s AND o_d_id = %s AND o_id = %s",
            (t.w, d, o_id),
        )[0]
        t.q(
            "UPDATE orders SET o_carrier_id = %s WHERE o_w_id = %s AND o_d_id = %s AND o_id = %s",
            (carrier, t.w, d, o_id),
        )
        t.q(
            "UPDATE order_line SET ol_delivery_d = %s WHERE ol_w_id = %s AND ol_d_id = %s AND "
            "ol_o_id = %s",
            (NOW, t.w, d, o_id),
        )
        amount = t.one(
            "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = %s AND "
            "ol_d_id = %s AND ol_o_id = %s",
            (t.w, d, o_id),
        )[0]
        t.q(
            "UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt "
            "+ 1 WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
            (float(amount or 0), t.w, d, c_id),
        )
    t.conn.commit()


def stock_level(t: Context) -> None:
    """Clause 2.8 (read-only): distinct recently sold items whose stock is below a threshold."""
    threshold = t.r.uniform(10, 20)
    t.begin()
    next_o = t.one("SELECT d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s", (t.w, t.d))[
        0
    ]
    t.one(
        "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = %s AND "
        "ol_d_id = %s AND ol_o_id < %s AND ol_o_id >= %s AND s_w_id = %s AND "
        "s_i_id = ol_i_id AND s_quantity < %s",
        (t.w, t.d, next_o, next_o - 20, t.w, threshold),
    )
    t.conn.commit()


TRANSACTIONS: dict[str, Callable[[Context], None]] = {
    "new_order": new_order,
    "payment": payment,
    "order_status": order_status,
    "delivery": delivery,
    "stock_level": stock_level,
}


def pick(r: Random) -> str:
    """A transaction type drawn from the standard mix."""
    roll = r.uniform(1, 100)
    for name, share in MIX:
        if roll <= share:
            return name
        roll -= share
    return MIX[-1][0]
