"""The `diarylab` command. Each area's subcommands live in their own module under
experiments/commands/ and register themselves with `register(subparsers)`; a LabError anywhere
becomes one message on stderr and exit status 2."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import typing
from collections.abc import Sequence

from diarylab.foundation.errors import LabError, LabErrors

# litellm otherwise tries to download its model price list at import time (no network here).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is the lab's one-line error (exit 2), not a usage block."""

    def error(self, message: str) -> typing.NoReturn:
        raise LabError(message, where=self.prog, fix=f"see `{self.prog} --help`")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="diarylab",
        description="A lab for simulated diarists: steered diarists, chatbots, judges read by "
        "probability, preregistered designs and bootstrapped reports.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    import diarylab.experiments.commands as commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue  # shared option helpers, not commands
        module = importlib.import_module(f"diarylab.experiments.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        # inside the try: Ctrl-C while the commands' modules import is one line, not a traceback
        args = build_parser().parse_args(argv)
        result = args.handler(args)
    except LabError as exc:
        # A check that found several problems tells them all, one line each.
        for line in exc.lines() if isinstance(exc, LabErrors) else [str(exc)]:
            print(f"diarylab: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("diarylab: interrupted; re-run the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`diarylab design expand ... | head`): stop quietly, as other
        # command-line tools do. Python would otherwise also complain when flushing stdout at
        # exit, so stdout is pointed at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a writer killed by a closed pipe
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
