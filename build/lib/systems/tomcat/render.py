"""Pure rendering of a Tomcat configuration: server.xml, context.xml and JAVA_OPTS.

Every attribute is a field of the templates next to this module and appears exactly once
(Tomcat refuses to start on a duplicate attribute, so nothing is ever appended). Knobs missing
from a configuration (a 10-knob session) take their catalogue defaults. Every field value is
XML-escaped (quotes included) and refused if it holds a newline, a control character or a
``${`` (Tomcat replaces ``${property}`` in server.xml attributes), so no value can close its
attribute, open markup or pull in a system property.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from string import Template
from xml.sax.saxutils import quoteattr

from harness.errors import ConfigError, KnobError
from harness.space import Space, Value, load_catalogue
from systems.java_text import mapped, xml_text

__all__ = [
    "CATALOGUE",
    "PROTOCOLS",
    "SOCKET_BUFFERS",
    "full_catalogue",
    "java_opts",
    "render_context_xml",
    "render_server_xml",
]

HERE = Path(__file__).parent
CATALOGUE = HERE / "knobs.yaml"
PROTOCOLS = {
    "nio": "org.apache.coyote.http11.Http11NioProtocol",
    "nio2": "org.apache.coyote.http11.Http11Nio2Protocol",
}
#: A host name, IPv4 or IPv6 address (the connector's ``address`` attribute).
ADDRESS = re.compile(r"[A-Za-z0-9_.:%-]+")
SOCKET_BUFFERS = {"os": None, "8k": 8192, "32k": 32768, "128k": 131072, "512k": 524288}
GC_FLAGS = {
    "G1": "-XX:+UseG1GC",
    "Parallel": "-XX:+UseParallelGC",
    "Serial": "-XX:+UseSerialGC",
    "Z": "-XX:+UseZGC",
}
ACCESS_LOG = (
    '\n        <Valve className="org.apache.catalina.valves.AccessLogValve" '
    'directory="logs" prefix="localhost_access_log" suffix=".txt" '
    'pattern="%h %l %u %t &quot;%r&quot; %s %b" />'
)


class _DottedTemplate(Template):
    """``${socket.rxBufSize}``: Tomcat's dotted attribute names used as template fields."""

    idpattern = r"[_a-z][_a-z0-9.]*"


def _field(name: str, value: Value) -> str:
    """A knob value for a template field: escaped, one line, no property reference."""
    text = xml_text(name, value)
    if "${" in text:
        raise KnobError(
            f"knob {name!r}: value {value!r} holds '${{', which Tomcat would "
            "replace by a system property; use one of the catalogue's values"
        )
    return text


def full_catalogue() -> Space:
    """Every knob of the catalogue (rendering needs defaults for knobs outside the set)."""
    return load_catalogue(CATALOGUE)


def render_server_xml(config: Mapping[str, Value], port: int, address: str = "127.0.0.1") -> str:
    """server.xml for a complete configuration (:meth:`Space.complete`): the connector listens
    on ``address``:``port`` (the SUT host's address, which is where clients connect)."""
    fields = {
        name: _field(name, value) for name, value in config.items() if not name.startswith("jvm.")
    }
    fields["protocol"] = mapped(PROTOCOLS, "protocol", config["protocol"])
    fields["port"] = str(int(port))
    if not ADDRESS.fullmatch(address):
        raise ConfigError(f"SUT address {address!r} is not a host name or IP address")
    fields["address"] = address
    buffers = ""
    for knob in ("socket.rxBufSize", "socket.txBufSize"):
        size = mapped(SOCKET_BUFFERS, knob, config[knob])
        if size is not None:  # "os": the attribute is absent, so the kernel autotunes
            buffers += f"\n               {knob}={quoteattr(str(size))}"
    fields["socket_buffers"] = buffers
    fields["access_log"] = ACCESS_LOG if config["accessLog"] else ""
    return _DottedTemplate((HERE / "server.xml.tmpl").read_text()).substitute(fields)


def render_context_xml(config: Mapping[str, Value]) -> str:
    """context.xml (static-resource cache) for a complete configuration."""
    fields = {k: _field(k, config[k]) for k in ("cachingAllowed", "cacheMaxSize", "cacheTtl")}
    return _DottedTemplate((HERE / "context.xml.tmpl").read_text()).substitute(fields)


def java_opts(config: Mapping[str, Value]) -> list[str]:
    """JVM flags for a complete configuration (numbers and fixed flags only: each is one
    argument of the java command, see ``launch.py``)."""
    heap = int(config["jvm.heap_mb"])  # type: ignore[arg-type]
    gc = mapped(GC_FLAGS, "jvm.gc", config["jvm.gc"])
    opts = [
        "-Djava.awt.headless=true",
        f"-Xmx{heap}m",
        gc,
        f"-Xss{int(config['jvm.thread_stack_kb'])}k",
    ]  # type: ignore[call-overload]
    if config["jvm.heap_prealloc"]:
        opts.append(f"-Xms{heap}m")
    if config["jvm.gc"] != "Serial":  # the serial collector has no parallel GC threads
        opts.append(f"-XX:ParallelGCThreads={int(config['jvm.parallel_gc_threads'])}")  # type: ignore[call-overload]
    opts.append(
        "-XX:+TieredCompilation" if config["jvm.tiered_compilation"] else "-XX:-TieredCompilation"
    )
    return opts
