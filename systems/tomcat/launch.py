"""Pure builders of the commands that start Tomcat's JVM (argument lists, no I/O).

Tomcat is not started with ``catalina.sh start``: that script ``eval``s ``JAVA_OPTS``, so a
``$(...)`` or a backtick in a JVM option would run as whoever started Tomcat. Instead the
JVM is started directly with the arguments catalina.sh 10.1 would give it on JDK 17 (logging
configuration, the security and URL-handler properties, the ``--add-opens`` set, the bootstrap
classpath and the catalina.base/home/tmpdir properties), each option one argv entry. A fixed
``sh -c`` snippet only puts it in the background with its output appended to catalina.out and
records its pid; every value, paths and options alike, is a positional argument of the snippet
and never part of its text, so no shell ever parses a value. The remote executor quotes each
argument, so the same command runs over SSH.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

__all__ = ["ADD_OPENS", "LAUNCH_SCRIPT", "MAIN_CLASS", "UMASK", "jvm_command", "launch_command"]

MAIN_CLASS = "org.apache.catalina.startup.Bootstrap"
#: catalina.sh's default umask: logs and work files are not readable by other users.
UMASK = "0027"
#: The module openings catalina.sh adds for Tomcat on JDK 9+.
ADD_OPENS = (
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.rmi/sun.rmi.transport=ALL-UNNAMED",
)
#: Properties catalina.sh always appends to JAVA_OPTS (TLS key size, the ``war:`` URL handler,
#: no canonical-name cache (CVE-2024-56337), the umask for the SecurityListener).
CATALINA_PROPERTIES = (
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djava.protocol.handler.pkgs=org.apache.catalina.webresources",
    "-Dsun.io.useCanonCaches=false",
    f"-Dorg.apache.catalina.security.SecurityListener.UMASK={UMASK}",
)
#: ``$0`` is a label; ``$1`` catalina.out, ``$2`` the pid file, the rest the java command. The
#: JVM's stdin is /dev/null and its output goes to the file, so the command returns at once
#: (locally and over SSH) and prints the JVM's pid.
LAUNCH_SCRIPT = (
    "out=$1 pid=$2; shift 2; umask " + UMASK + "; "
    '"$@" </dev/null >>"$out" 2>&1 & echo $! >"$pid" && echo $!'
)


def jvm_command(
    java: str, catalina_home: str, base: str | PurePath, options: Sequence[str]
) -> list[str]:
    """The java command line of ``catalina.sh start`` for this home, base and JVM options, in
    catalina.sh's order (JVM options before the fixed ones, so those win on a duplicate)."""
    home, base = str(catalina_home), str(base)
    return [
        java,
        f"-Djava.util.logging.config.file={base}/conf/logging.properties",
        "-Djava.util.logging.manager=org.apache.juli.ClassLoaderLogManager",
        *options,
        *CATALINA_PROPERTIES,
        *ADD_OPENS,
        "-classpath",
        f"{home}/bin/bootstrap.jar:{home}/bin/tomcat-juli.jar",
        f"-Dcatalina.base={base}",
        f"-Dcatalina.home={home}",
        f"-Djava.io.tmpdir={base}/temp",
        MAIN_CLASS,
        "start",
    ]


def launch_command(
    out_file: str | PurePath, pid_file: str | PurePath, jvm: Sequence[str]
) -> list[str]:
    """Start ``jvm`` in the background (see :data:`LAUNCH_SCRIPT`); prints its pid."""
    return ["sh", "-c", LAUNCH_SCRIPT, "tomcat-launch", str(out_file), str(pid_file), *jvm]
