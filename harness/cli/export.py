"""``python -m harness.cli.export``: write a session's best configuration where a user can use it.

The files and the re-measure command come from :func:`harness.builder.export.export_session`;
this module only parses the command line and reports, so a session's own end writes the same
export as the command does.
"""

import argparse
import sys
from collections.abc import Sequence

from harness.builder.export import FORMATS, export_session
from harness.errors import HarnessError


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.cli.export``: 0 written, 2 bad input (one line on stderr)."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.cli.export",
        description="Write a session's best configuration (native files, YAML/JSON/env, and "
        "the Hydra overrides that pin it).",
    )
    parser.add_argument("session", help="the session folder, results/sessions/<session-id>")
    parser.add_argument("--format", choices=FORMATS, default="native")
    parser.add_argument("--out", help="output folder (default: <session>/export/)")
    parser.add_argument(
        "--config-dir",
        action="append",
        default=[],
        help="a config folder of your own whose _target_s the stored config may build "
        "(as given to python -m harness --config-dir); repeatable",
    )
    args = parser.parse_args(argv)
    try:
        result = export_session(args.session, args.format, args.out, args.config_dir)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in result.files:
        print(path)
    for line in result.notes:
        print(f"note: {line}")
    print(f"measure it again: {result.command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
