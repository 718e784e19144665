"""The test web application: built once per session into CATALINA_BASE/webapps/ROOT.

Pages of different cost, so that knobs matter in different ways: a static home page and
stylesheet (resource cache), a ~96 KiB static guide (sendfile, compression), dynamic ~12 KiB
article pages (compression, buffers) and a CPU-bound search servlet (threads vs cores). The
servlets are compiled with javac against Tomcat's jakarta.servlet API.
"""

from __future__ import annotations

import logging
from pathlib import Path

from harness.errors import ConfigError
from harness.executor import Executor

__all__ = ["build", "guide_text", "stylesheet"]

log = logging.getLogger(__name__)

SOURCES = Path(__file__).with_name("webapp")
SERVLETS = ("CpuServlet.java", "PageServlet.java")


def stylesheet() -> str:
    """A small (~2 KiB) stylesheet."""
    rules = [
        f".c{i} {{ margin: {i % 7}px; padding: {i % 5}px; color: #{i * 4099 % 0xFFFFFF:06x}; }}"
        for i in range(40)
    ]
    return "body { font-family: sans-serif; }\n" + "\n".join(rules) + "\n"


def guide_text(kib: int = 96) -> str:
    """A deterministic plain-text document of about ``kib`` KiB (above the sendfile threshold)."""
    lines, size, n = [], 0, 0
    while size < kib * 1024:
        line = f"{n:05d} the guide explains connector threads, keep-alive and caches, #{n % 13}"
        lines.append(line)
        size += len(line) + 1
        n += 1
    return "\n".join(lines) + "\n"


def build(executor: Executor, root: Path, servlet_jar: str) -> None:
    """Write the static files and compile the servlets into ``root`` (the ROOT webapp)."""
    classes = root / "WEB-INF" / "classes"
    src = root / "WEB-INF" / "src"
    executor.run(["mkdir", "-p", str(classes), str(src), str(root / "static")])
    executor.write_text(root / "index.html", (SOURCES / "index.html").read_text())
    executor.write_text(root / "WEB-INF" / "web.xml", (SOURCES / "web.xml").read_text())
    executor.write_text(root / "static" / "site.css", stylesheet())
    executor.write_text(root / "static" / "guide.txt", guide_text())
    for name in SERVLETS:
        executor.write_text(src / name, (SOURCES / name).read_text())
    if not executor.exists(servlet_jar):
        raise ConfigError(f"servlet API jar {servlet_jar} not found (is tomcat10 installed?)")
    result = executor.run(
        [
            "javac",
            "-encoding",
            "UTF-8",
            "-cp",
            servlet_jar,
            "-d",
            str(classes),
            *(str(src / name) for name in SERVLETS),
        ],
        check=False,
        timeout_s=120,
    )
    if not result.ok:
        raise ConfigError(f"cannot compile the test web application: {result.describe()}")
    log.info("built the Tomcat test web application in %.1fs", result.duration_s)
