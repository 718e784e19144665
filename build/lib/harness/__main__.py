"""Entry point of ``python -m harness`` (see :mod:`harness.app`)."""

from harness.app import main

if __name__ == "__main__":
    main()
