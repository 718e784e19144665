"""The export of a Hadoop/Hive configuration: one ``<configuration>`` file per site.

A mixin of the Hadoop adapters (hive.py, hdfs.py; system.py is at its size limit):
each tuned knob goes into the site file its ``*-default.xml`` defines it in
(:func:`~systems.hadoop.render.site_of`), with the values and escaping of a test's own site
files (:func:`~systems.hadoop.render.property_values`, :func:`~systems.hadoop.render.site_xml`).
"""

from __future__ import annotations

from harness.space import Config, Space
from harness.system import native_header
from systems.hadoop import render

__all__ = ["NativeSites"]


class NativeSites:
    """``native_files`` for the Hadoop family: ``mapred-site.xml``, ``yarn-site.xml``,
    ``hdfs-site.xml``, ``core-site.xml``, ``hive-site.xml`` as the tuned knobs need."""

    space: Space
    catalogue: Space

    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """The tuned knobs of ``config`` (the configuration a test ran), by site file."""
        complete = self.catalogue.complete(config)
        sites: dict[str, dict[str, str]] = {}
        for name, text in render.property_values({k: complete[k] for k in config}).items():
            sites.setdefault(render.site_of(name), {})[name] = text
        # site_xml writes the title into an XML comment: native_header breaks up any "--"
        title = "; ".join(native_header(self.space, config, note, start="", end=" "))
        return {
            f"{site}.xml": render.site_xml(props, f"- {title}") for site, props in sites.items()
        }
