"""``python -m ferrohalide build ...``: see ``ferrohalide._build``."""

import sys


def _main(argv):
    if len(argv) >= 1 and argv[0] == "build":
        from ._build import main

        return main(argv[1:])
    sys.stderr.write("usage: python -m ferrohalide build GENERATOR_FILE.py [options]  (--help for more)\n")
    return 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
