"""Entry point of ``python -m harness`` (see :mod:`harness.cli.app`); ``--help`` is answered
by :mod:`harness.cli.quick_help` without loading the application."""

from harness.cli.quick_help import main

if __name__ == "__main__":
    main()
