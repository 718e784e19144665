"""Entry point of ``python -m harness`` (see :mod:`harness.cli.app`)."""

from harness.cli.app import main

if __name__ == "__main__":
    main()
