"""Value formatting and checks shared by the JVM systems' renderers and launchers.

Renderers of files another program parses must never let a value start a new directive.
The knob space already restricts catalogue enum choices (``harness.space``); these
helpers are the renderers' own line of defence, so that a value that reached them some other way
(a widened space, an adapter option) is refused with a one-line :class:`KnobError` or
:class:`ConfigError` naming the knob or option, the value and the fix:

* :func:`knob_text`: a knob value as Java reads it, one line of printable characters;
* :func:`xml_text`: the same, escaped for an XML attribute or element;
* :func:`mapped`: a knob value looked up in a renderer's fixed table (an unknown value is a
  KnobError, not a KeyError);
* :func:`jvm_options`: an adapter's ``extra_java_opts`` string split into JVM options, each an
  option (``-...``), never a main class or an ``@argfile``, without control characters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar
from xml.sax.saxutils import escape

from harness.errors import ConfigError, KnobError
from harness.space import Value

__all__ = ["SHELL_INERT", "java_text", "jvm_options", "knob_text", "mapped", "xml_text"]

T = TypeVar("T")

#: Characters no POSIX shell treats specially even unquoted (no ``$`` backtick quote ``;`` ``&``
#: ``|`` ``<`` ``>`` glob ``*?[`` ``~`` or whitespace): for options that a launcher script
#: expands unquoted (Cassandra's ``JVM_EXTRA_OPTS``).
SHELL_INERT = re.compile(r"[A-Za-z0-9_.,:=+/@%-]+")
# JVM flags that make the JVM run a shell command: refused like a shell string would be.
_RUNS_COMMANDS = re.compile(r"-XX:On(?:Error|OutOfMemoryError)=")


def java_text(value: Value) -> str:
    """A knob value as Java reads it: booleans lower-case, everything else as ``str``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def knob_text(name: str, value: Value) -> str:
    """:func:`java_text` of a knob value, refused unless it is one line of printable text (a
    newline or control character would end the line or attribute it is written into)."""
    text = java_text(value)
    if not text.isprintable():
        raise KnobError(
            f"knob {name!r}: value {text!r} contains a newline or control "
            "character; use one of the catalogue's values"
        )
    return text


def xml_text(name: str, value: Value) -> str:
    """:func:`knob_text` escaped for XML element content or a double- or single-quoted
    attribute: ``&`` ``<`` ``>`` and both quotes become entities, so neither ``"``, ``]]>`` nor
    ``<!--`` can end the attribute or start markup."""
    return escape(knob_text(name, value), {'"': "&quot;", "'": "&apos;"})


def mapped(table: Mapping[str, T], name: str, value: Value) -> T:
    """``table[str(value)]``, or a KnobError naming the knob and the values it accepts."""
    try:
        return table[str(value)]
    except KeyError:
        raise KnobError(
            f"knob {name!r}: value {value!r} is not supported here; use one of {', '.join(table)}"
        ) from None


def jvm_options(text: str, key: str, shell_inert: bool = False) -> list[str]:
    """``text`` (whitespace-separated JVM options, no quoting) as a list of options.

    Each must start with ``-`` (anything else would become the main class, an argument of the
    program or an ``@argfile`` of the java launcher) and be printable; ``-XX:OnError=`` and
    ``-XX:OnOutOfMemoryError=`` (the JVM runs them as shell commands) are refused.
    ``shell_inert`` also limits every option to :data:`SHELL_INERT`, for launchers that expand
    the options unquoted. ConfigError names ``key``, the option and the fix.
    """
    if not isinstance(text, str):
        raise ConfigError(
            f"{key}={text!r}: give the JVM options as one string, e.g. '-Dname=value -XX:+Flag'"
        )
    if any(not (char.isprintable() or char == " ") for char in text):
        raise ConfigError(
            f"{key}={text!r} contains a newline or control character; give the "
            "JVM options on one line, separated by spaces"
        )
    options = text.split()
    for option in options:
        if not option.startswith("-") or option == "-":
            raise ConfigError(
                f"{key}: {option!r} is not a JVM option; every entry must start "
                "with '-' (options are split at spaces, there is no quoting)"
            )
        if _RUNS_COMMANDS.match(option):
            raise ConfigError(
                f"{key}: {option!r} would make the JVM run a shell command; remove it"
            )
        if shell_inert and not SHELL_INERT.fullmatch(option):
            raise ConfigError(
                f"{key}: {option!r} passes through a launcher script unquoted; "
                "use letters, digits and _ . , : = + / @ % - only"
            )
    return options
