"""The `diarylab` command. Each area's subcommands live in their own module under
experiments/commands/ and register themselves with `register(subparsers)`; a LabError anywhere
becomes one message on stderr and exit status 2."""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import pkgutil
import re
import sys
import typing
from collections.abc import Sequence

from diarylab.foundation.errors import LabError, LabErrors

# litellm otherwise tries to download its model price list at import time (no network here).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is the lab's one-line error (exit 2), not a usage block,
    with the nearest command or option when a word was misspelt."""

    def error(self, message: str) -> typing.NoReturn:
        fix = f"see `{self.prog} --help`"
        guess = _nearest(self, message)
        if guess:
            fix = f"did you mean {guess!r}? ({fix})"
        raise LabError(message, where=self.prog, fix=fix)


def _nearest(parser: argparse.ArgumentParser, message: str) -> str | None:
    """The command or option closest to a misspelt one argparse refused."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        options = re.findall(r"'([^']*)'", choice.group(2))
        return _closest(choice.group(1), options)
    unknown = re.match(r"unrecognized arguments: (.*)", message)
    if unknown:
        words = [w for w in unknown.group(1).split() if w.startswith("--")]
        known = _options(parser, sys.argv[1:] if _ARGV is None else _ARGV)
        for word in words:
            found = _closest(word.split("=")[0], known)
            if found:
                return found
    return None


def _closest(word: str, options: list[str]) -> str | None:
    found = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return found[0] if found else None


def _options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """The option strings of the (sub)command the words name, down the chain of subcommands."""
    out: list[str] = []
    words = list(argv)
    while True:
        subs = None
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                subs = action
            else:
                out += action.option_strings
        if subs is None:
            return out
        name = next((w for w in words if w in subs.choices), None)
        if name is None:
            return out
        parser = subs.choices[name]
        words = words[words.index(name) + 1 :]


_ARGV: Sequence[str] | None = None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="diarylab",
        description="A lab for simulated diarists: steered diarists, chatbots, judges read by "
        "probability, preregistered designs and reports that test by diarist.",
    )
    parser.add_argument(
        "--version", action="version", version=f"diarylab {_version()}", help="the lab's version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    import diarylab.experiments.commands as commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue  # shared option helpers, not commands
        module = importlib.import_module(f"diarylab.experiments.commands.{info.name}")
        module.register(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("diarylab")
    except PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    global _ARGV
    _ARGV = argv
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
