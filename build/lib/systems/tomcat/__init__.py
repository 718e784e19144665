"""Tomcat 10.1 (Debian tomcat10) under a web-exploration workload driven by wrk."""

from systems.tomcat.system import TomcatSystem
from systems.tomcat.workload import WebExploration

__all__ = ["TomcatSystem", "WebExploration"]
