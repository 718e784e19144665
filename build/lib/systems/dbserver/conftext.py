"""Values as postgresql.conf and my.cnf read them: quoted and escaped, or refused.

Both files are line-oriented: a newline in a value would start a new directive (the hostile
probe made PostgreSQL and MariaDB listen on 0.0.0.0 and run an ``archive_command``), and a
``#`` outside quotes starts a comment. Control characters are therefore refused outright (no
legitimate knob value, path or address holds one), and everything else is quoted per format.
"""

from __future__ import annotations

import re

from harness.errors import ConfigError

__all__ = ["check_text", "mycnf_value", "pg_string"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: my.cnf values that need no quotes (numbers, sizes, paths, ON/OFF, addresses, plugin names).
_MYCNF_PLAIN = re.compile(r"^[A-Za-z0-9_./:+,@=-]+$")


def check_text(value: object, what: str) -> str:
    """``str(value)``, or a ConfigError naming ``what`` if it holds a control character."""
    text = str(value)
    if _CONTROL.search(text):
        raise ConfigError(
            f"{what}: value {text!r} holds a control character (newline, tab, "
            "...), which would start a new directive; remove it"
        )
    return text


def pg_string(value: object, what: str) -> str:
    """A postgresql.conf string literal: single quotes, with ``'`` and ``\\`` escaped."""
    text = check_text(value, what)
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def mycnf_value(value: object, what: str) -> str:
    """A my.cnf option value: bare when plain, else double-quoted with ``\\`` and ``"``
    escaped (the option-file reader strips the quotes and undoes those escapes)."""
    text = check_text(value, what)
    if _MYCNF_PLAIN.match(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
